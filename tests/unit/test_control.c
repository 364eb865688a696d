/* The lines a job writes on its control fd (worker/control.h): what
 * reads, to what, and what is refused, the fuzz target's finding (a
 * checkpoint token that is not UTF-8) among them. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/job.h"
#include "worker/control.h"

/* line read (a copy: control_parse writes it); fails the test if refused. */
static struct control_line parsed(const char *line, char *copy, size_t size)
{
	struct control_line c;

	snprintf(copy, size, "%s", line);
	if (control_parse(copy, &c) != 0)
		fail_msg("control_parse(\"%s\") refused it", line);
	return c;
}

static int refused(const char *line)
{
	char copy[256];
	struct control_line c;

	snprintf(copy, sizeof copy, "%s", line);
	return control_parse(copy, &c) == -1;
}

static void lines_read(void **state)
{
	char copy[256];
	struct control_line c;

	(void)state;
	c = parsed("progress 42", copy, sizeof copy);
	assert_int(c.kind, CONTROL_PROGRESS);
	assert_int(c.items, 42);
	assert_null(c.token);
	c = parsed("progress 9223372036854775807", copy, sizeof copy);
	assert_int(c.items, INT64_MAX);
	c = parsed("checkpoint step-10 10", copy, sizeof copy);
	assert_int(c.kind, CONTROL_CHECKPOINT);
	assert_string_equal(c.token, "step-10");
	assert_int(c.items, 10);
	/* The count is after the last space: the token may hold spaces. */
	c = parsed("checkpoint s3://bucket/run 1/x 7", copy, sizeof copy);
	assert_string_equal(c.token, "s3://bucket/run 1/x");
	assert_int(c.items, 7);
	c = parsed("checkpoint caf\xc3\xa9 1", copy, sizeof copy);
	assert_string_equal(c.token, "caf\xc3\xa9");
}

static void lines_refused(void **state)
{
	(void)state;
	assert_true(refused(""));
	assert_true(refused("hello"));
	assert_true(refused("progress"));
	assert_true(refused("progress "));
	assert_true(refused("progress -1"));
	assert_true(refused("progress +1"));
	assert_true(refused("progress  1"));
	assert_true(refused("progress 1x"));
	assert_true(refused("progress 9223372036854775808")); /* not clamped to 2^63-1 */
	assert_true(refused("checkpoint 5"));
	assert_true(refused("checkpoint  5"));
	assert_true(refused("checkpoint tok"));
	assert_true(refused("checkpoint tok -1"));
	/* serve takes the token as a JSON string: UTF-8 only. */
	assert_true(refused("checkpoint t\xcf" "es 98"));
	assert_true(refused("checkpoint \xff 1"));
	assert_true(refused("checkpoint \xed\xa0\x80 1")); /* a surrogate */
}

static void token_at_most_64_kib(void **state)
{
	size_t n = JOB_CHECKPOINT_MAX + 40;
	char *line = malloc(n);
	struct control_line c;

	(void)state;
	assert_non_null(line);
	memcpy(line, "checkpoint ", 11);
	memset(line + 11, 'a', JOB_CHECKPOINT_MAX);
	strcpy(line + 11 + JOB_CHECKPOINT_MAX, " 3");
	assert_int(control_parse(line, &c), 0);
	assert_int(strlen(c.token), JOB_CHECKPOINT_MAX);
	memset(line + 11, 'a', JOB_CHECKPOINT_MAX + 1);
	strcpy(line + 12 + JOB_CHECKPOINT_MAX, " 3");
	assert_int(control_parse(line, &c), -1);
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_read),
		cmocka_unit_test(lines_refused),
		cmocka_unit_test(token_at_most_64_kib),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
