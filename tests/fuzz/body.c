/* Request bodies against each endpoint's field table (serve/api.h), as
 * the router and the handlers read them: the first byte picks the
 * endpoint, the rest is the body. A body is refused with a 400 that
 * names the problem, or accepted with every field as its table says;
 * either way nothing leaks. */
#include "common/jsonin.h"
#include "serve/api_internal.h"

#include "fuzz.h"

static const struct field *const tables[] = {
	api_submit_fields, api_lease_fields, api_heartbeat_fields, api_checkpoint_fields,
	api_complete_fields, api_fail_fields, api_interrupt_fields, api_register_fields,
	api_leave_fields, api_clock_fields, api_team_budget_fields, api_tuning_fields, api_no_fields,
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* An accepted body holds only the table's fields, each of its type and
 * within its bounds: what the handlers take for granted. */
static void check_accepted(json_t *body, const struct field *fields)
{
	const char *key;
	json_t *v;

	json_object_foreach(body, key, v) {
		const struct field *f = fields;
		while (f->name && strcmp(f->name, key) != 0)
			f++;
		FUZZ_ASSERT(f->name);
		if (!json_has(body, key))
			continue;
		switch (f->type) {
		case F_INT:
			FUZZ_ASSERT(json_is_integer(v));
			FUZZ_ASSERT(json_get_int(body, key, 0) >= f->min && json_get_int(body, key, 0) <= f->max);
			break;
		case F_NUMBER:
			FUZZ_ASSERT(json_is_number(v));
			FUZZ_ASSERT(json_get_number(body, key, 0) >= (double)f->min &&
				    json_get_number(body, key, 0) <= (double)f->max);
			break;
		case F_STRING:
		case F_NAME:
			FUZZ_ASSERT(json_get_str(body, key, NULL) != NULL);
			break;
		case F_BOOL:
			FUZZ_ASSERT(json_is_boolean(v));
			(void)json_get_bool(body, key, 0);
			break;
		case F_STRINGS:
			FUZZ_ASSERT(json_is_array(v) && (int64_t)json_array_size(v) <= f->max);
			break;
		case F_IDS: {
			/* A lease's running jobs fill an array of that many. */
			json_t *id;
			size_t i;
			FUZZ_ASSERT(json_is_array(v) && (int64_t)json_array_size(v) <= f->max);
			json_array_foreach(v, i, id)
				FUZZ_ASSERT(json_is_integer(id) && json_integer_value(id) >= 1);
			break;
		}
		case F_ANY:
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ebb_error err;
	const struct field *fields;
	json_t *body;

	if (size == 0)
		return 0;
	fields = tables[data[0] % NTABLES];
	if (json_parse_object((const char *)data + 1, size - 1, &body, &err) != 0) {
		FUZZ_ASSERT(err.status == 400 && err.message[0]);
		return 0;
	}
	FUZZ_ASSERT(json_is_object(body));
	if (json_check_fields(body, fields, &err) == 0)
		check_accepted(body, fields);
	else
		FUZZ_ASSERT(err.status == 400 && err.message[0]);
	json_decref(body);
	return 0;
}
