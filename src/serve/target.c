/* See target.h. */
#include "serve/target.h"

#include <string.h>

int target_params(const char *target)
{
	const char *q = strchr(target, '?');
	int n = 0;

	if (!q || !q[1])
		return 0;
	for (q++; *q; q++)
		n += *q == '&';
	return q[-1] == '&' ? n : n + 1;
}

int target_check(char *target, struct ebb_error *e)
{
	size_t len = strlen(target);
	int params = target_params(target);
	char *query;

	if (len > TARGET_MAX_BYTES)
		error_set(e, 414, "uri_too_long", NULL, "request target of %zu bytes, over %d", len, TARGET_MAX_BYTES);
	else if (params > TARGET_MAX_PARAMS)
		error_set(e, 414, "uri_too_long", NULL, "%d query parameters, over %d", params, TARGET_MAX_PARAMS);
	else
		return 0;
	if ((query = strchr(target, '?')))
		query[1] = '\0';
	return -1;
}
