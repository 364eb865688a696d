/* placeholder until the client lands */
#include "cmd.h"
int cmd_jobs(int argc, char **argv) { (void)argc; (void)argv; return 1; }
