/* See exec_reply.h. */
#include "provider/exec_reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonin.h"

json_t *exec_reply(const char *program, const char *call, const struct exec_result *r, char *why, size_t size)
{
	struct ebb_error err;
	json_t *o;

	if (r->out_too_long) {
		snprintf(why, size, "%.200s %s: more than %d bytes on standard output", program, call, EXEC_OUT_MAX);
		return NULL;
	}
	if (json_parse_object(r->out ? r->out : "", r->out_len, &o, &err) != 0) {
		snprintf(why, size, "%.200s %s: standard output is not a JSON object: %.200s", program, call,
			 err.message);
		return NULL;
	}
	if (json_integer_value(json_object_get(o, "version")) != EXEC_CONTRACT_VERSION) {
		snprintf(why, size, "%.200s %s: expected \"version\": %d", program, call, EXEC_CONTRACT_VERSION);
		json_decref(o);
		return NULL;
	}
	return o;
}

void exec_launch_reply(const char *program, json_t *reply, struct launch_result *res)
{
	json_t *ref = json_object_get(reply, "ref"), *data = json_object_get(reply, "data");
	char *text;

	res->ok = 0;
	if (!json_is_string(ref) || json_string_length(ref) == 0 || json_string_length(ref) >= sizeof res->ref) {
		snprintf(res->error, sizeof res->error, "%.200s launch: expected \"ref\": a string of 1 to %zu bytes",
			 program, sizeof res->ref - 1);
		return;
	}
	if (data && !json_is_object(data) && !json_is_null(data)) {
		snprintf(res->error, sizeof res->error, "%.200s launch: \"data\" must be an object", program);
		return;
	}
	text = json_is_object(data) ? json_dumps(data, JSON_COMPACT) : NULL;
	if (text && strlen(text) > PROVIDER_DATA_MAX) {
		snprintf(res->error, sizeof res->error, "%.200s launch: \"data\" over %d bytes", program,
			 PROVIDER_DATA_MAX);
		free(text);
		return;
	}
	snprintf(res->ref, sizeof res->ref, "%s", json_string_value(ref));
	if (text)
		snprintf(res->data, sizeof res->data, "%s", text);
	free(text);
	res->ok = 1;
}

int exec_list_item(const char *program, json_t *item, struct provider_item *out, char *why, size_t size)
{
	json_t *ref = json_object_get(item, "ref"), *id = json_object_get(item, "instance");
	const char *state = json_string_value(json_object_get(item, "state"));
	int terminating = state && strcmp(state, "terminating") == 0, stopped = state && strcmp(state, "stopped") == 0;

	if (!json_is_object(item)) {
		snprintf(why, size, "%.200s list: each instance is an object", program);
		return -1;
	}
	if (!json_is_string(ref) || json_string_length(ref) == 0 || json_string_length(ref) > 255 ||
	    (id && !json_is_null(id) && !json_is_integer(id))) {
		snprintf(why, size, "%.200s list: each instance needs a \"ref\" (1 to 255 bytes) and"
			 " an integer \"instance\"", program);
		return -1;
	}
	if (!state || !(terminating || stopped || strcmp(state, "pending") == 0 || strcmp(state, "running") == 0)) {
		snprintf(why, size, "%.200s list: each instance's \"state\" is pending, running, stopped or"
			 " terminating", program);
		return -1;
	}
	*out = (struct provider_item){json_string_value(ref), json_integer_value(id), "", terminating, stopped};
	return 0;
}
