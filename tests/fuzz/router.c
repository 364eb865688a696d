/* The HTTP API's router (serve/api.c): "METHOD PATH" (the first space
 * splits them) to a route, a 404 or a 405, with the {id} of the path.
 * A path that routes has a positive id where its pattern has {id}; one
 * that does not gets an error reply that is JSON whatever bytes the path
 * holds (it quotes the path). */
#include "common/error.h"
#include "serve/api_internal.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *method = fuzz_string(data, size), *path = strchr(method, ' '), *text;
	const char *pattern;
	struct ebb_error err;
	int64_t id = 0;
	int status;
	json_t *reply;

	if (!path) {
		free(method);
		return 0;
	}
	*path++ = '\0';
	pattern = api_route(method, path, &id, &status);
	if (pattern) {
		FUZZ_ASSERT(status == 200);
		FUZZ_ASSERT(!strstr(pattern, "{id}") || id > 0);
		free(method);
		return 0;
	}
	FUZZ_ASSERT(status == 404 || status == 405);
	if (status == 405)
		error_set(&err, 405, "method_not_allowed", NULL, "%s is not allowed on %s", method, path);
	else
		error_set(&err, 404, "not_found", NULL, "no such path: %s", path);
	reply = error_to_json(&err);
	FUZZ_ASSERT(reply && (text = json_dumps(reply, 0)));
	free(text);
	json_decref(reply);
	free(method);
	return 0;
}
