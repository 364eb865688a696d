/* Strict JSON bodies: where malformed text is wrong, that absurd nesting
 * is an error and not a crash, and that every field check names its field. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/jsonin.h"

static void parse_ok(void **state)
{
	struct ebb_error err;
	json_t *v = NULL;

	(void)state;
	assert_int(json_parse_object("{\"a\": 1}", 8, &v, &err), 0);
	assert_int(JINT(v, "a"), 1);
	json_decref(v);
	/* An empty body is an empty object: POSTs without a body are fine. */
	v = NULL;
	assert_int(json_parse_object("", 0, &v, &err), 0);
	assert_true(json_is_object(v));
	assert_int(json_object_size(v), 0);
	json_decref(v);
}

static void assert_parse_error(const char *body, const char *want)
{
	struct ebb_error err = {0};
	json_t *v = NULL;

	assert_int(json_parse_object(body, strlen(body), &v, &err), -1);
	assert_null(v);
	assert_int(err.status, 400);
	assert_string_equal(err.code, "bad_json");
	assert_string_equal(err.field, "");
	assert_contains(err.message, want);
}

static void malformed_has_line_and_column(void **state)
{
	(void)state;
	/* The value after "b" is missing: line 3, at the '}'. */
	assert_parse_error("{\n  \"a\": 1,\n  \"b\": }", "malformed JSON at line 3, column 8");
	assert_parse_error("{\"a\": tru}", "at line 1, column ");
	assert_parse_error("{\"a\": 1", "at line 1, column ");
	assert_parse_error("{\"a\": 1}x", "at line 1, column ");
	assert_parse_error("{\"a\": 1, \"a\": 2}", "duplicate object key");
}

static void not_an_object(void **state)
{
	(void)state;
	assert_parse_error("[1, 2]", "expected a JSON object");
	assert_parse_error("\"text\"", "malformed JSON");
	assert_parse_error("42", "malformed JSON");
}

/* A body nested depth levels deep, arrays or objects. */
static char *nested(int depth, int objects)
{
	size_t per = objects ? 5 : 1, len = (size_t)depth * (per + 1) + 8;
	char *s = malloc(len), *p = s;

	if (objects) {
		for (int i = 0; i < depth; i++)
			p += sprintf(p, "{\"a\":");
		p += sprintf(p, "1");
		for (int i = 0; i < depth; i++)
			*p++ = '}';
	} else {
		*p++ = '{';
		p += sprintf(p, "\"a\":");
		for (int i = 0; i < depth; i++)
			*p++ = '[';
		for (int i = 0; i < depth; i++)
			*p++ = ']';
		*p++ = '}';
	}
	*p = '\0';
	return s;
}

static void deep_nesting_is_an_error(void **state)
{
	struct ebb_error err = {0};
	json_t *v = NULL;
	char *body;

	(void)state;
	for (int objects = 0; objects <= 1; objects++) {
		body = nested(10000, objects);
		assert_int(json_parse_object(body, strlen(body), &v, &err), -1);
		assert_null(v);
		assert_int(err.status, 400);
		assert_string_equal(err.code, "bad_json");
		assert_contains(err.message, "malformed JSON at line 1");
		free(body);
	}
	/* Modest nesting is still JSON. */
	body = nested(100, 1);
	assert_int(json_parse_object(body, strlen(body), &v, &err), 0);
	json_decref(v);
	free(body);
}

static const struct field fields[] = {
	{"name", F_NAME, 0, 0},
	{"text", F_STRING, 1, 8},
	{"count", F_INT, -10, 10},
	{"flag", F_BOOL, 0, 0},
	{"labels", F_STRINGS, 0, 2},
	{"any", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

/* json_check_fields on body: 0, or -1 with err filled. */
static int check(const char *body, struct ebb_error *err)
{
	struct ebb_error perr;
	json_t *v = NULL;
	int rc;

	memset(err, 0, sizeof *err);
	if (json_parse_object(body, strlen(body), &v, &perr) != 0)
		fail_msg("the test's body does not parse: %s", perr.message);
	rc = json_check_fields(v, fields, err);
	json_decref(v);
	return rc;
}

static void assert_field_error(const char *body, const char *code, const char *field,
			       const char *message)
{
	struct ebb_error err;

	if (check(body, &err) == 0)
		fail_msg("json_check_fields accepted %s", body);
	assert_int(err.status, 400);
	assert_string_equal(err.code, code);
	assert_string_equal(err.field, field);
	assert_string_equal(err.message, message);
}

static void fields_accepted(void **state)
{
	struct ebb_error err;

	(void)state;
	assert_int(check("{}", &err), 0);
	assert_int(check("{\"name\": \"gpu-a100_x.2\", \"text\": \"12345678\", \"count\": -10,"
			 " \"flag\": false, \"labels\": [\"a\", \"b\"], \"any\": {\"x\": [1]}}", &err), 0);
	/* null is "not given", for every type. */
	assert_int(check("{\"name\": null, \"count\": null, \"flag\": null, \"labels\": null}", &err), 0);
}

static void fields_refused(void **state)
{
	(void)state;
	assert_field_error("{\"count\": 1, \"colour\": \"red\"}", "unknown_field", "colour",
			   "unknown field 'colour'");
	assert_field_error("{\"count\": \"3\"}", "bad_value", "count", "count: expected an integer");
	assert_field_error("{\"count\": 1.5}", "bad_value", "count", "count: expected an integer");
	assert_field_error("{\"count\": 11}", "out_of_range", "count", "count: expected -10 to 10, got 11");
	assert_field_error("{\"count\": -11}", "out_of_range", "count", "count: expected -10 to 10, got -11");
	assert_field_error("{\"flag\": 1}", "bad_value", "flag", "flag: expected true or false");
	assert_field_error("{\"text\": \"\"}", "out_of_range", "text",
			   "text: expected 1 to 8 bytes, got 0");
	assert_field_error("{\"text\": \"123456789\"}", "out_of_range", "text",
			   "text: expected 1 to 8 bytes, got 9");
	/* Five characters, ten bytes of UTF-8: the bound is on bytes. */
	assert_field_error("{\"text\": \"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}", "out_of_range",
			   "text", "text: expected 1 to 8 bytes, got 10");
	assert_field_error("{\"text\": 5}", "bad_value", "text", "text: expected a string");
	assert_field_error("{\"name\": \"a b\"}", "bad_value", "name",
			   "name: expected a name of letters, digits, '_', '.' or '-'");
	assert_field_error("{\"name\": \"\"}", "bad_value", "name",
			   "name: expected a name of letters, digits, '_', '.' or '-'");
	assert_field_error("{\"labels\": [\"a\", \"b c\"]}", "bad_value", "labels",
			   "labels[1]: expected a name of letters, digits, '_', '.' or '-'");
	assert_field_error("{\"labels\": [\"a\", 2]}", "bad_value", "labels",
			   "labels[1]: expected a name of letters, digits, '_', '.' or '-'");
	assert_field_error("{\"labels\": [\"a\", \"b\", \"c\"]}", "bad_value", "labels",
			   "labels: expected an array of names");
	assert_field_error("{\"labels\": \"a\"}", "bad_value", "labels", "labels: expected an array of names");
}

static void getters(void **state)
{
	json_t *v = json_pack("{s:s, s:i, s:b, s:n}", "s", "x", "i", 7, "b", 1, "n");

	(void)state;
	assert_string_equal(json_get_str(v, "s", "def"), "x");
	assert_string_equal(json_get_str(v, "i", "def"), "def");
	assert_string_equal(json_get_str(v, "n", "def"), "def");
	assert_string_equal(json_get_str(v, "missing", "def"), "def");
	assert_int(json_get_int(v, "i", -1), 7);
	assert_int(json_get_int(v, "s", -1), -1);
	assert_int(json_get_int(v, "n", -1), -1);
	assert_int(json_get_bool(v, "b", 0), 1);
	assert_int(json_get_bool(v, "missing", 1), 1);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_ok),
		cmocka_unit_test(malformed_has_line_and_column),
		cmocka_unit_test(not_an_object),
		cmocka_unit_test(deep_nesting_is_an_error),
		cmocka_unit_test(fields_accepted),
		cmocka_unit_test(fields_refused),
		cmocka_unit_test(getters),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
