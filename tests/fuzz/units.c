/* Durations and sizes as configs and flags give them (common/units.h),
 * and the numbers of the API's query parameters (parse_int64). The first
 * byte picks the parser. What parses must print and parse back to
 * itself. */
#include "common/units.h"

#include <math.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[64], *s;
	int64_t v, back;
	double d;

	if (size == 0)
		return 0;
	s = fuzz_string(data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		if (parse_duration_ms(s, &v) == 0) {
			FUZZ_ASSERT(v >= 0);
			format_duration(buf, sizeof buf, v);
			FUZZ_ASSERT(parse_duration_ms(buf, &back) == 0 && back == v);
			format_elapsed(buf, sizeof buf, v);
		}
		break;
	case 1:
		if (parse_size_bytes(s, &v) == 0) {
			FUZZ_ASSERT(v >= 0);
			format_size(buf, sizeof buf, v);
			FUZZ_ASSERT(parse_size_bytes(buf, &back) == 0 && back == v);
		}
		break;
	case 2:
		if (parse_int64(s, &v) == 0) {
			snprintf(buf, sizeof buf, "%lld", (long long)v);
			FUZZ_ASSERT(parse_int64(buf, &back) == 0 && back == v);
		}
		break;
	case 3:
		if (parse_double(s, &d) == 0)
			FUZZ_ASSERT(!isnan(d));
		break;
	}
	free(s);
	return 0;
}
