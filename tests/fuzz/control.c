/* What a job writes on the worker's control fd (worker/control.h), read
 * as the worker reads it: cut into lines by control_feed, in pieces of
 * the sizes the first byte picks (a pipe gives any), and each line read
 * by control_parse. The lines do not depend on the pieces; a line is
 * refused, or read into a count that serve's API takes (0 to 2^63-1),
 * a resident handler's line (ready, done, failed with its reason), a
 * result's text and, for a checkpoint, a token of at most JOB_CHECKPOINT_MAX bytes
 * that can travel to serve as a JSON string. */
#include "common/job.h"
#include "worker/control.h"

#include <jansson.h>

#include "fuzz.h"

/* The lines of one reading, one after another: '>' and the line, or '!'
 * for one refused, each ended by '\n'. */
struct seen {
	char *text;
	size_t len, cap;
};

static void record(struct seen *s, const char *line, size_t len, char mark)
{
	if (s->len + len + 2 > s->cap) {
		s->cap = (s->len + len + 2) * 2;
		FUZZ_ASSERT((s->text = realloc(s->text, s->cap)));
	}
	s->text[s->len++] = mark;
	memcpy(s->text + s->len, line, len);
	s->len += len;
	s->text[s->len++] = '\n';
}

static void on_line(void *arg, char *line)
{
	struct seen *s = arg;
	struct control_line c;
	json_t *body;

	if (!line) {
		record(s, "", 0, '!');
		return;
	}
	FUZZ_ASSERT(strlen(line) <= CONTROL_LINE_MAX);
	record(s, line, strlen(line), '>');
	if (control_parse(line, &c) != 0)
		return;
	FUZZ_ASSERT(c.items >= 0);
	FUZZ_ASSERT((c.kind == CONTROL_CHECKPOINT) == (c.token != NULL));
	/* A handler's failure says why; a result is the rest of its line. */
	FUZZ_ASSERT((c.kind == CONTROL_FAILED) == (c.reason != NULL && c.reason[0] != '\0'));
	FUZZ_ASSERT((c.kind == CONTROL_RESULT) == (c.text != NULL));
	if (c.kind != CONTROL_CHECKPOINT)
		return;
	body = json_pack("{s:s, s:I}", "checkpoint", c.token, "items_done", (json_int_t)c.items);
	FUZZ_ASSERT(body && strlen(c.token) <= JOB_CHECKPOINT_MAX);
	json_decref(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct control_reader whole, pieces;
	struct seen a = {0}, b = {0};
	const char *text = (const char *)data + 1;
	size_t n, step;

	if (size == 0)
		return 0;
	n = size - 1;
	step = 1 + data[0] % 64;
	whole.len = whole.bad = 0;
	pieces.len = pieces.bad = 0;
	control_feed(&whole, text, n, on_line, &a);
	for (size_t at = 0; at < n; at += step)
		control_feed(&pieces, text + at, n - at < step ? n - at : step, on_line, &b);
	FUZZ_ASSERT(a.len == b.len && (a.len == 0 || memcmp(a.text, b.text, a.len) == 0));
	free(a.text);
	free(b.text);
	return 0;
}
