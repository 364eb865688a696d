/* A request target as sent (serve/target.c): what serve checks of every
 * request line before libmicrohttpd reads its query. The parameters are
 * counted as the library reads them (counted here another way, as its
 * loop goes); the target is refused with a 414 exactly when it is over
 * 4096 bytes or 100 parameters, and then its query is cut to nothing and
 * its path left as it was; one within the limits is left whole. */
#include "serve/target.h"

#include "fuzz.h"

/* The library's loop: a parameter starts wherever text is left, and
 * ends at the next '&'. */
static int pieces(const char *target)
{
	const char *q = strchr(target, '?');
	int n = 0;

	if (!q)
		return 0;
	for (q++; *q; q++) {
		n++;
		if (!(q = strchr(q, '&')))
			break;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *target = fuzz_string(data, size), *copy = strdup(target), *query = strchr(target, '?');
	size_t len = strlen(target);
	int params = target_params(target);
	struct ebb_error e;
	json_t *body;
	char *text;

	FUZZ_ASSERT(copy);
	FUZZ_ASSERT(params == pieces(target));
	if (target_check(target, &e) == 0) {
		FUZZ_ASSERT(len <= TARGET_MAX_BYTES && params <= TARGET_MAX_PARAMS);
		FUZZ_ASSERT(strcmp(target, copy) == 0);
	} else {
		FUZZ_ASSERT(len > TARGET_MAX_BYTES || params > TARGET_MAX_PARAMS);
		FUZZ_ASSERT(e.status == 414 && strcmp(e.code, "uri_too_long") == 0);
		FUZZ_ASSERT(strncmp(target, copy, query ? (size_t)(query - target) + 1 : len) == 0);
		FUZZ_ASSERT(query ? query[1] == '\0' : strlen(target) == len);
		FUZZ_ASSERT(target_params(target) == 0);
		body = error_to_json(&e);
		FUZZ_ASSERT(body && (text = json_dumps(body, 0)));
		free(text);
		json_decref(body);
	}
	free(copy);
	free(target);
	return 0;
}
