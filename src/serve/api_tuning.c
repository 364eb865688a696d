/* The last comparison `ebb tune --history --publish` sent: POST
 * /v1/admin/tuning keeps it (one row, replaced), and the dashboard's JSON
 * carries it (docs/SIMULATION.md, "Tuning on ebb's own history"). */
#include <stdlib.h>

#include "serve/api_internal.h"
#include "common/mem.h"
#include "store/store.h"

#define TUNING_NAME "last"

const struct field api_tuning_fields[] = {
	{"comparison", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

static int read_row(void *arg, const struct tuning_row *t)
{
	json_t **out = arg;
	json_t *comparison = json_loads(t->body, 0, NULL);

	json_decref(*out);
	/* NULL on no memory: the pack fails too, and the caller says so. */
	*out = json_pack("{s:f, s:o}", "published_at", (double)t->published_ms / 1000.0, "comparison",
			 comparison ? comparison : json_null());
	return 0;
}

int api_tuning_last(struct api_call *c, json_t **out)
{
	*out = json_null();
	return store_tunings(c->api->store, read_row, out);
}

int api_tuning_publish(struct api_call *c)
{
	json_t *comparison, *last;
	struct ebb_error err;
	char *body;
	int rc;

	if (api_body(c, api_tuning_fields) != 0)
		return -1;
	if (!json_is_object(comparison = json_object_get(c->body, "comparison"))) {
		error_set(&err, 400, "bad_value", "comparison", "comparison: expected the object `ebb tune --history --json` "
								 "prints as history");
		return api_fail(c, &err);
	}
	if (!(body = json_dumps(comparison, JSON_REPLY_FLAGS))) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	rc = store_tuning_set(c->api->store, &(struct tuning_row){.name = TUNING_NAME, .body = body,
								   .published_ms = clock_now(c->api->clock)});
	free(body);
	if (rc != 0 || api_tuning_last(c, &last) != 0)
		return api_store_failed(c);
	request_reply(c->req, 200, json_pack("{s:o}", "tuning", last));
	return 0;
}
