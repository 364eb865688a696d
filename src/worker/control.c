/* See control.h. */
#include "worker/control.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* s as a count: digits only (strtoll would take spaces and a sign), and
 * no larger than int64_t holds (strtoll would clamp it). */
static int count(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Whether serve can take token: a JSON string (UTF-8) of at most
 * JOB_CHECKPOINT_MAX bytes. Else json_pack would make no body at all,
 * and the checkpoint, and the interruption that carries it later, would
 * reach serve without their lease token. */
static int token_ok(const char *token)
{
	json_t *s;

	if (strlen(token) > JOB_CHECKPOINT_MAX || !(s = json_string(token)))
		return 0;
	json_decref(s);
	return 1;
}

int control_parse(char *line, struct control_line *out)
{
	char *items;

	if (strncmp(line, "progress ", 9) == 0) {
		*out = (struct control_line){.kind = CONTROL_PROGRESS};
		return count(line + 9, &out->items);
	}
	if (strncmp(line, "checkpoint ", 11) == 0) {
		*out = (struct control_line){.kind = CONTROL_CHECKPOINT, .token = line + 11};
		items = strrchr(out->token, ' ');
		if (!items || items == out->token || count(items + 1, &out->items) != 0)
			return -1;
		*items = '\0';
		return token_ok(out->token) ? 0 : -1;
	}
	if (strncmp(line, "result ", 7) == 0) {
		*out = (struct control_line){.kind = CONTROL_RESULT, .text = line + 7};
		return 0;
	}
	if (strncmp(line, "failed ", 7) == 0 && line[7]) {
		*out = (struct control_line){.kind = CONTROL_FAILED, .reason = line + 7};
		return 0;
	}
	if (strcmp(line, "ready") == 0 || strcmp(line, "done") == 0) {
		*out = (struct control_line){.kind = line[0] == 'r' ? CONTROL_READY : CONTROL_DONE};
		return 0;
	}
	return -1;
}

void control_feed(struct control_reader *cr, const char *buf, size_t n, void (*fn)(void *arg, char *line),
		  void *arg)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			cr->line[cr->len < CONTROL_LINE_MAX ? cr->len : CONTROL_LINE_MAX] = '\0';
			fn(arg, cr->bad ? NULL : cr->line);
			cr->len = 0;
			cr->bad = 0;
			continue;
		}
		if (buf[i] == '\0' || cr->len >= CONTROL_LINE_MAX)
			cr->bad = 1;
		if (cr->len < CONTROL_LINE_MAX)
			cr->line[cr->len] = buf[i];
		cr->len++;
	}
}
