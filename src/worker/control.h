/* The lines a job writes on its control fd (EBB_CONTROL_FD), one at a
 * time, each ended by '\n': "progress N" (items done so far),
 * "checkpoint TOKEN N" (a token to resume from, with the items done up to
 * it; the token may hold spaces, N is after the last one) and "result
 * JSON" (the job's result, a JSON value; the last one counts). N is
 * decimal digits only, no sign, at most 2^63-1; the token is UTF-8 (serve
 * takes it as a JSON string) of at most JOB_CHECKPOINT_MAX bytes. A
 * result's text is not looked at here: whether it is JSON and within
 * [queue] result_max is for the worker to say, with a reason. A resident
 * handler (docs/JOBS.md) writes these too, and "ready" once its setup is
 * done, "done" and "failed REASON" at the end of each job. */
#ifndef EBB_CONTROL_H
#define EBB_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/job.h"

struct control_line {
	enum { CONTROL_PROGRESS, CONTROL_CHECKPOINT, CONTROL_RESULT, CONTROL_READY, CONTROL_DONE,
	       CONTROL_FAILED } kind;
	int64_t items;      /* progress, checkpoint */
	const char *token;  /* checkpoint: within the line */
	const char *text;   /* result: its JSON text, within the line (the worker judges it) */
	const char *reason; /* failed: within the line, not empty */
};

/* 0 with *out filled, or -1 for a line of no known form. A checkpoint's
 * token is cut from its count in place (line is written). */
int control_parse(char *line, struct control_line *out);

/* The longest line: "result " and a result of CONF_RESULT_MAX bytes, the
 * most [queue] result_max may allow (a checkpoint's line is shorter). */
#define CONTROL_LINE_MAX (CONF_RESULT_MAX + 64)

/* Cuts what is read from the control fd, in whatever pieces the reads
 * give, into lines. A line longer than CONTROL_LINE_MAX, or with a NUL
 * byte, is refused whole: cut short, it could read as another line. */
struct control_reader {
	char line[CONTROL_LINE_MAX + 1];
	size_t len; /* of the line under way, all of it when refused */
	int bad; /* the line under way is too long or holds a NUL */
};

/* For each line that the n bytes of buf end, fn(arg, line): the line
 * without its '\n', or NULL for one refused. For one refused, cr->len is
 * its whole length and cr->line holds its first CONTROL_LINE_MAX bytes,
 * so that the caller can say what it was (a result too large). The part
 * of a line not yet ended waits for the next call. */
void control_feed(struct control_reader *cr, const char *buf, size_t n, void (*fn)(void *arg, char *line),
		  void *arg);

#endif
