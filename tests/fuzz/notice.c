/* The replies of spot reclaim notices (worker/notice.h): AWS's and
 * serve's JSON with "time". Any body gives a time the worker can count
 * down to: 0 (not said) or a time since the epoch. */
#include "worker/notice.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fuzz_string(data, size);

	FUZZ_ASSERT(notice_time(body) >= 0);
	free(body);
	return 0;
}
