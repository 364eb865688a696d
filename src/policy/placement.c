/* See placement.h. */
#include "policy/placement.h"

int placement_before(int64_t a, int64_t b) { return a < b; }
