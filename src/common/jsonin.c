/* See jsonin.h. */
#include "common/jsonin.h"

#include <string.h>

#include "common/config.h"

static int parse(const char *body, size_t len, int arrays, json_t **out, struct ebb_error *err)
{
	json_error_t je;
	json_t *v;

	if (len == 0) {
		*out = json_object();
		return 0;
	}
	/* jansson stops at depth 2048, so a 10,000-deep body is an error, not
	 * a stack overflow. */
	v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return error_set(err, 400, "bad_json", NULL, "malformed JSON at line %d, column %d: %s",
				 je.line, je.column, je.text);
	/* Without JSON_DECODE_ANY, jansson reads an object or an array. */
	if (!arrays && !json_is_object(v)) {
		json_decref(v);
		return error_set(err, 400, "bad_json", NULL, "expected a JSON object");
	}
	*out = v;
	return 0;
}

int json_parse_object(const char *body, size_t len, json_t **out, struct ebb_error *err)
{
	return parse(body, len, 0, out, err);
}

int json_parse_object_or_array(const char *body, size_t len, json_t **out, struct ebb_error *err)
{
	return parse(body, len, 1, out, err);
}

static const char *type_name(enum field_type t)
{
	switch (t) {
	case F_STRING: return "a string";
	case F_NAME: return "a name of letters, digits, '_', '.' or '-'";
	case F_INT: return "an integer";
	case F_NUMBER: return "a number";
	case F_BOOL: return "true or false";
	case F_STRINGS: return "an array of names";
	case F_IDS: return "an array of ids";
	case F_ANY: break;
	}
	return "a value";
}

static int check_one(const struct field *f, json_t *v, struct ebb_error *err)
{
	switch (f->type) {
	case F_STRING:
		if (!json_is_string(v))
			break;
		if ((int64_t)json_string_length(v) < f->min || (int64_t)json_string_length(v) > f->max)
			return error_set(err, 400, "out_of_range", f->name,
					 "%s: expected %lld to %lld bytes, got %zu", f->name,
					 (long long)f->min, (long long)f->max, json_string_length(v));
		return 0;
	case F_NAME:
		if (!json_is_string(v) || !config_name_ok(json_string_value(v)))
			break;
		return 0;
	case F_INT:
		if (!json_is_integer(v))
			break;
		if (json_integer_value(v) < f->min || json_integer_value(v) > f->max)
			return error_set(err, 400, "out_of_range", f->name,
					 "%s: expected %lld to %lld, got %lld", f->name, (long long)f->min,
					 (long long)f->max, (long long)json_integer_value(v));
		return 0;
	case F_NUMBER:
		if (!json_is_number(v))
			break;
		if (json_number_value(v) < (double)f->min || json_number_value(v) > (double)f->max)
			return error_set(err, 400, "out_of_range", f->name, "%s: expected %lld to %lld, got %g", f->name,
					 (long long)f->min, (long long)f->max, json_number_value(v));
		return 0;
	case F_BOOL:
		if (!json_is_boolean(v))
			break;
		return 0;
	case F_STRINGS: {
		size_t i;
		json_t *s;
		if (!json_is_array(v) || (int64_t)json_array_size(v) > f->max)
			break;
		json_array_foreach(v, i, s) {
			if (!json_is_string(s) || !config_name_ok(json_string_value(s)))
				return error_set(err, 400, "bad_value", f->name,
						 "%s[%zu]: expected a name of letters, digits, '_', '.' or '-'",
						 f->name, i);
		}
		return 0;
	}
	case F_IDS: {
		size_t i;
		json_t *id;
		if (!json_is_array(v) || (int64_t)json_array_size(v) > f->max)
			break;
		json_array_foreach(v, i, id) {
			if (!json_is_integer(id) || json_integer_value(id) < 1)
				return error_set(err, 400, "bad_value", f->name, "%s[%zu]: expected an id (an integer from 1)",
						 f->name, i);
		}
		return 0;
	}
	case F_ANY:
		return 0;
	}
	return error_set(err, 400, "bad_value", f->name, "%s: expected %s", f->name, type_name(f->type));
}

int json_check_fields(json_t *obj, const struct field *fields, struct ebb_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		const struct field *f = fields;
		while (f->name && strcmp(f->name, key) != 0)
			f++;
		if (!f->name)
			return error_set(err, 400, "unknown_field", key, "unknown field '%s'", key);
		if (json_is_null(v))
			continue;
		if (check_one(f, v, err) != 0)
			return -1;
	}
	return 0;
}

int json_has(json_t *obj, const char *name)
{
	json_t *v = json_object_get(obj, name);
	return v && !json_is_null(v);
}

const char *json_get_str(json_t *obj, const char *name, const char *def)
{
	json_t *v = json_object_get(obj, name);
	return json_is_string(v) ? json_string_value(v) : def;
}

int64_t json_get_int(json_t *obj, const char *name, int64_t def)
{
	json_t *v = json_object_get(obj, name);
	return json_is_integer(v) ? json_integer_value(v) : def;
}

double json_get_number(json_t *obj, const char *name, double def)
{
	json_t *v = json_object_get(obj, name);
	return json_is_number(v) ? json_number_value(v) : def;
}

int json_get_bool(json_t *obj, const char *name, int def)
{
	json_t *v = json_object_get(obj, name);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

json_t *json_seconds(int64_t ms)
{
	return ms ? json_real((double)ms / 1000.0) : json_null();
}
