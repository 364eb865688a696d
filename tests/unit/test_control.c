/* The lines a job writes on its control fd (worker/control.h): how the
 * bytes read are cut into lines, what reads, to what, and what is
 * refused, the fuzz target's finding (a checkpoint token that is not
 * UTF-8) among them. */
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
	/* A result's text is the worker's to judge, JSON or not. */
	c = parsed("result {\"n\": 3}", copy, sizeof copy);
	assert_int(c.kind, CONTROL_RESULT);
	assert_string_equal(c.text, "{\"n\": 3}");
	c = parsed("result not json", copy, sizeof copy);
	assert_string_equal(c.text, "not json");
}

static void lines_refused(void **state)
{
	(void)state;
	assert_true(refused(""));
	assert_true(refused("hello"));
	assert_true(refused("progress"));
	assert_true(refused("result"));
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

/* A resident handler's lines, and the result any job may write. */
static void handler_lines(void **state)
{
	char copy[256];
	struct control_line c;

	(void)state;
	assert_int(parsed("ready", copy, sizeof copy).kind, CONTROL_READY);
	assert_int(parsed("done", copy, sizeof copy).kind, CONTROL_DONE);
	c = parsed("failed CUDA out of memory", copy, sizeof copy);
	assert_int(c.kind, CONTROL_FAILED);
	assert_string_equal(c.reason, "CUDA out of memory");
	c = parsed("result {\"label\": \"cat\", \"p\": 0.9}", copy, sizeof copy);
	assert_int(c.kind, CONTROL_RESULT);
	assert_string_equal(c.text, "{\"label\": \"cat\", \"p\": 0.9}");
	assert_true(refused("ready now"));
	assert_true(refused("done "));
	assert_true(refused("failed"));
	assert_true(refused("failed "));
	assert_true(refused("result"));
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

/* The lines control_feed gives, as "line|" each, "!|" for one refused
 * (cut to fit), and the length of the longest. */
struct lines {
	char text[256];
	size_t longest;
	const struct control_reader *cr;
	size_t refused_len; /* the last refused line's, as cr told it */
	int refused_progress; /* it began "progress 000" */
};

static void on_line(void *arg, char *line)
{
	struct lines *l = arg;
	size_t used = strlen(l->text);

	snprintf(l->text + used, sizeof l->text - used, "%s|", line ? line : "!");
	if (!line) {
		l->refused_len = l->cr->len;
		l->refused_progress = strncmp(l->cr->line, "progress 000", 12) == 0;
	}
	if (line && strlen(line) > l->longest)
		l->longest = strlen(line);
}

static void lines_cut(void **state)
{
	struct control_reader *cr = calloc(1, sizeof *cr);
	struct lines l = {{0}, 0, cr, 0, 0};
	char *big = malloc(CONTROL_LINE_MAX + 100);

	(void)state;
	assert_non_null(cr);
	l.cr = cr;
	assert_non_null(big);
	/* In pieces, as a pipe gives them: a line waits for its end. */
	control_feed(cr, "progress 1\nprog", 15, on_line, &l);
	assert_string_equal(l.text, "progress 1|");
	control_feed(cr, "ress 2\n\n", 8, on_line, &l);
	assert_string_equal(l.text, "progress 1|progress 2||");
	/* A NUL byte: the line is refused, not read as "progress 5". */
	control_feed(cr, "progress 5\0junk\nprogress 6\n", 27, on_line, &l);
	assert_string_equal(l.text, "progress 1|progress 2||!|progress 6|");
	/* Too long: refused whole, not cut to "progress 000...0". */
	memcpy(big, "progress ", 9);
	memset(big + 9, '0', CONTROL_LINE_MAX + 10);
	memcpy(big + 9 + CONTROL_LINE_MAX + 10, "7\n", 2);
	l.text[0] = '\0';
	control_feed(cr, big, 9 + CONTROL_LINE_MAX + 12, on_line, &l);
	assert_string_equal(l.text, "!|");
	/* What the refused line was is there for fn: its start, its length. */
	assert_int(l.refused_len, 9 + CONTROL_LINE_MAX + 11);
	assert_true(l.refused_progress);
	control_feed(cr, "progress 8\n", 11, on_line, &l);
	assert_string_equal(l.text, "!|progress 8|");
	/* The longest line is read. */
	memset(big + 9, '0', CONTROL_LINE_MAX - 10);
	memcpy(big + CONTROL_LINE_MAX - 1, "9\n", 2);
	l.text[0] = '\0';
	control_feed(cr, big, CONTROL_LINE_MAX + 1, on_line, &l);
	assert_int(l.longest, CONTROL_LINE_MAX);
	assert_true(strncmp(l.text, "progress 000", 12) == 0);
	free(big);
	free(cr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_read),
		cmocka_unit_test(lines_refused),
		cmocka_unit_test(handler_lines),
		cmocka_unit_test(token_at_most_64_kib),
		cmocka_unit_test(lines_cut),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
