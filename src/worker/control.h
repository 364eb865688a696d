/* The lines a job writes on its control fd (EBB_CONTROL_FD), one at a
 * time, each ended by '\n': "progress N" (items done so far) and
 * "checkpoint TOKEN N" (a token to resume from, with the items done up to
 * it; the token may hold spaces, N is after the last one). N is decimal
 * digits only, no sign, at most 2^63-1; the token is UTF-8 (serve takes
 * it as a JSON string) of at most JOB_CHECKPOINT_MAX bytes. */
#ifndef EBB_CONTROL_H
#define EBB_CONTROL_H

#include <stdint.h>

struct control_line {
	enum { CONTROL_PROGRESS, CONTROL_CHECKPOINT } kind;
	int64_t items;
	const char *token; /* checkpoint: within the line; NULL for progress */
};

/* 0 with *out filled, or -1 for a line of neither form. A checkpoint's
 * token is cut from its count in place (line is written). */
int control_parse(char *line, struct control_line *out);

#endif
