/* Spot reclaims at chosen times (`--reclaims FILE.csv`, see trace.h):
 * read whole, checked line by line, kept in time order. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "sim/trace.h"

/* A file of reclaims is short: a reclaim a line, written by hand or
 * from a provider's log. */
#define RECLAIMS_LINE_MAX 256
/* Seconds into a trace, as the trace's own submit_time_s takes them. */
#define RECLAIM_TIME_MAX 1e10

static int by_time(const void *a, const void *b)
{
	const struct trace_reclaim *x = a, *y = b;
	if (x->at_ms != y->at_ms)
		return (x->at_ms > y->at_ms) - (x->at_ms < y->at_ms);
	return (x->target > y->target) - (x->target < y->target);
}

/* The header: time_s and one of instance or job, in that order. */
static int read_header(const char *path, char *line, struct trace *t, char *err, size_t errsize)
{
	/* The byte order mark that Windows tools write first. */
	if (strncmp(line, "\xEF\xBB\xBF", 3) == 0)
		line += 3;
	if (strcmp(line, "time_s,instance") == 0) {
		t->reclaims_by_job = 0;
		return 0;
	}
	if (strcmp(line, "time_s,job") == 0) {
		t->reclaims_by_job = 1;
		return 0;
	}
	snprintf(err, errsize, "%s:1: expected the header time_s,instance or time_s,job, got '%.60s'", path, line);
	return -1;
}

/* One row, "SECONDS,WHOLE_NUMBER", into r. */
static int read_row(const char *path, size_t n, char *line, int by_job, struct trace_reclaim *r, char *err,
		    size_t errsize)
{
	char *comma = strchr(line, ','), *end;
	const char *what = by_job ? "job" : "instance";
	long long target;
	double s;

	if (!comma || strchr(comma + 1, ',')) {
		snprintf(err, errsize, "%s:%zu: expected two fields, time_s,%s, got '%.60s'", path, n, what, line);
		return -1;
	}
	*comma = '\0';
	errno = 0;
	s = strtod(line, &end);
	if (end == line || *end || !isfinite(s) || s < 0 || s > RECLAIM_TIME_MAX || line[strspn(line, "0123456789.")]) {
		snprintf(err, errsize, "%s:%zu: time_s: expected seconds from 0 to %g, got '%.40s'", path, n,
			 RECLAIM_TIME_MAX, line);
		return -1;
	}
	errno = 0;
	target = strtoll(comma + 1, &end, 10);
	/* Jobs are counted from 0 (as --jobs writes them), instances from 1. */
	if (end == comma + 1 || *end || errno || comma[1] == '-' || comma[1] == '+' || target < !by_job ||
	    target > INT32_MAX) {
		snprintf(err, errsize, "%s:%zu: %s: expected a whole number from %d, got '%.40s'", path, n, what,
			 !by_job, comma + 1);
		return -1;
	}
	r->at_ms = (int64_t)llround(s * 1000);
	r->target = (int)target;
	return 0;
}

int trace_load_reclaims(const char *path, struct trace *t, char *err, size_t errsize)
{
	FILE *f = fopen(path, "r");
	char line[RECLAIMS_LINE_MAX + 2];
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!f) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	free(t->reclaims);
	t->reclaims = NULL;
	t->nreclaims = 0;
	t->has_reclaims = 1;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		n++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			snprintf(err, errsize, "%s:%zu: a line longer than %d characters", path, n, RECLAIMS_LINE_MAX);
			rc = -1;
			break;
		}
		/* LF or CRLF. */
		line[strcspn(line, "\r\n")] = '\0';
		if (n == 1) {
			rc = read_header(path, line, t, err, errsize);
			continue;
		}
		if (line[0] == '\0')
			continue;
		if (t->nreclaims == cap) {
			cap = cap ? cap * 2 : 16;
			t->reclaims = xrealloc(t->reclaims, cap * sizeof *t->reclaims);
		}
		rc = read_row(path, n, line, t->reclaims_by_job, &t->reclaims[t->nreclaims], err, errsize);
		t->nreclaims += rc == 0;
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, errsize, "%s: read failed", path);
		rc = -1;
	}
	if (rc == 0 && n == 0) {
		snprintf(err, errsize, "%s:1: empty file (expected the header time_s,instance or time_s,job)", path);
		rc = -1;
	}
	fclose(f);
	if (rc != 0) {
		free(t->reclaims);
		t->reclaims = NULL;
		t->nreclaims = 0;
		t->has_reclaims = 0;
		return -1;
	}
	if (t->nreclaims > 1) /* a header alone has none: qsort takes no NULL */
		qsort(t->reclaims, t->nreclaims, sizeof *t->reclaims, by_time);
	return 0;
}
