/* See control.h. */
#include "worker/control.h"

#include <errno.h>
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
		return 0;
	}
	return -1;
}
