/* The trace loader (see trace.h). Rows are read with getline and split
 * on commas; quoted fields are refused with a clear error, since the
 * traces ebb reads have none. */
#include "sim/trace.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/fnv.h"
#include "common/job.h"
#include "common/mem.h"
#include "common/units.h"

#define MAX_COLUMNS 64

enum column { C_SUBMIT, C_DURATION, C_GPUS, C_PRIORITY, C_LANE, C_TYPE, C_EST, C_TEAM, C_KNOWN };
static const char *const known[C_KNOWN] = {"submit_time_s", "duration_s", "gpus", "priority", "lane",
					   "job_class", "est_s", "team"};

/* The names of one column (lanes, types or teams) and an open-addressing table
 * of them: a trace of a million job classes loads in linear time. */
struct names {
	char ***list; /* the trace's array, room for cap / 2 */
	int *n;
	int *slot; /* index + 1 of the name there; 0: free */
	size_t cap;
};

struct loader {
	const char *path;
	size_t line;
	int index[C_KNOWN]; /* column of each known field, -1 if absent */
	char *names[MAX_COLUMNS];
	int ncols;
	int filter_col[8];
	struct names lanes, types, teams;
	char *err;
	size_t errsize;
};

static int split(char *line, char **fields, int max)
{
	int n = 0;

	for (char *p = line;; p++) {
		if (n < max)
			fields[n] = p;
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

/* Doubles the table (and the list's room), keeping the names. */
static void rehash(struct names *ns)
{
	size_t cap = ns->cap ? ns->cap * 2 : 16;
	int *slot = xcalloc(cap, sizeof *slot);
	char **list = xrealloc(*ns->list, cap / 2 * sizeof *list);

	*ns->list = list;
	for (int i = 0; i < *ns->n; i++) {
		size_t j = (size_t)fnv1a(FNV1A_START, list[i]) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = i + 1;
	}
	free(ns->slot);
	ns->slot = slot;
	ns->cap = cap;
}

/* The index of s, appended if new; -2 when s is new and there are max
 * names already, -3 when s is new and valid (if given) says no: a name is
 * checked once, not on each of a million rows. */
static int intern(struct names *ns, const char *s, int max, int (*valid)(const char *))
{
	size_t j;

	if ((size_t)*ns->n + 1 > ns->cap / 2)
		rehash(ns);
	for (j = (size_t)fnv1a(FNV1A_START, s) & (ns->cap - 1); ns->slot[j]; j = (j + 1) & (ns->cap - 1)) {
		if (strcmp((*ns->list)[ns->slot[j] - 1], s) == 0)
			return ns->slot[j] - 1;
	}
	if (*ns->n == max)
		return -2;
	if (valid && !valid(s))
		return -3;
	(*ns->list)[*ns->n] = xstrdup(s);
	ns->slot[j] = *ns->n + 1;
	return (*ns->n)++;
}

/* The index of the row's name in column col (fallback where the field is
 * empty), as intern() answers. Without the column every row has the
 * fallback, the first name: looked up once, not on each row. */
static int name_of(struct loader *l, char **fields, enum column col, struct names *ns, const char *fallback,
		   int max, int (*valid)(const char *))
{
	const char *s;

	if (l->index[col] < 0)
		return *ns->n ? 0 : intern(ns, fallback, max, valid);
	s = fields[l->index[col]];
	return intern(ns, *s ? s : fallback, max, valid);
}

static int bad(struct loader *l, int col, const char *what, const char *got)
{
	snprintf(l->err, l->errsize, "%s:%zu: column %d (%s): %s, got '%.40s'", l->path, l->line, col + 1,
		 col < l->ncols ? l->names[col] : "?", what, got);
	return -1;
}

/* The index of the header's column name, -1 if there is none, -2 (the
 * error in l->err) if there are two: which one is meant is anyone's guess. */
static int column(struct loader *l, const char *name)
{
	int found = -1;

	for (int i = 0; i < l->ncols; i++) {
		if (strcmp(l->names[i], name) != 0)
			continue;
		if (found >= 0) {
			snprintf(l->err, l->errsize, "%s:%zu: columns %d and %d are both named %s", l->path, l->line,
				 found + 1, i + 1, name);
			return -2;
		}
		found = i;
	}
	return found;
}

static int read_header(struct loader *l, char *line, const struct trace_filter *filters, int nfilters)
{
	char *fields[MAX_COLUMNS];
	int n = split(line, fields, MAX_COLUMNS);

	if (n > MAX_COLUMNS) {
		snprintf(l->err, l->errsize, "%s:%zu: more than %d columns", l->path, l->line, MAX_COLUMNS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		l->names[i] = xstrdup(fields[i]);
		l->ncols = i + 1;
	}
	for (int k = 0; k < C_KNOWN; k++) {
		if ((l->index[k] = column(l, known[k])) == -2)
			return -1;
	}
	for (int k = 0; k < 2; k++) {
		if (l->index[k] < 0) {
			snprintf(l->err, l->errsize, "%s:%zu: the header has no %s column (required: submit_time_s,"
				 " duration_s)", l->path, l->line, known[k]);
			return -1;
		}
	}
	for (int f = 0; f < nfilters; f++) {
		if ((l->filter_col[f] = column(l, filters[f].column)) == -2)
			return -1;
		if (l->filter_col[f] < 0) {
			snprintf(l->err, l->errsize, "%s:%zu: --filter %s=%s: no column %s in the header", l->path,
				 l->line, filters[f].column, filters[f].value, filters[f].column);
			return -1;
		}
	}
	return 0;
}

/* A comment line before the header: "# origin=SECONDS" says when the
 * trace's 0 was (Unix seconds; `ebb trace export` writes it), so that
 * the replay's months are the calendar's; other comments are passed
 * over. 0, or -1 with the error in l->err. */
static int read_comment(struct loader *l, const char *line, struct trace *out)
{
	const char *at = line + 1 + strspn(line + 1, " \t");
	int64_t origin;

	if (strncmp(at, "origin=", 7) != 0)
		return 0;
	if (parse_int64(at + 7, &origin) != 0 || origin < 0 || origin > INT64_MAX / 1000) {
		snprintf(l->err, l->errsize, "%s:%zu: origin=%s: expected Unix seconds (the trace's 0), e.g."
			 " origin=1764547200", l->path, l->line, at + 7);
		return -1;
	}
	out->origin_ms = origin * 1000;
	return 0;
}

/* A field of digits with at most one point and 15 digits, as traces
 * write nearly every number, into *out: 1, else 0 (strtod's to read).
 * The digits as an integer below 2^53 over a power of ten, both exact in
 * a double, divided once: IEEE division rounds that to the same double
 * as strtod does (Clinger's fast path), at a fraction of strtod's cost,
 * which was half of the load of a million rows. Only where doubles are
 * computed in double precision (not x87's wider registers). */
static int plain_decimal(const char *s, double *out)
{
	static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
				       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	uint64_t digits = 0;
	int ndigits = 0, decimals = -1; /* -1: no point yet */

	if (FLT_EVAL_METHOD != 0)
		return 0;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			if (++ndigits > 15)
				return 0;
			digits = digits * 10 + (uint64_t)(*s - '0');
			decimals += decimals >= 0;
		} else if (*s == '.' && decimals < 0) {
			decimals = 0;
		} else {
			return 0;
		}
	}
	if (ndigits == 0)
		return 0;
	*out = (double)digits / pow10[decimals > 0 ? decimals : 0];
	return 1;
}

static int number(struct loader *l, char **fields, int k, double min, double max, double *out)
{
	const char *s = fields[l->index[k]];
	char *end;
	int read = plain_decimal(s, out);

	/* Decimal digits only: strtod also reads hex ("0x10" is 16), which
	 * in a trace of seconds is a broken field. An overflow is infinite,
	 * and refused as such; an underflow (1e-400) is 0, to the ms anyway. */
	if (!read) {
		*out = strtod(s, &end);
		read = end != s && !*end && !s[strspn(s, "0123456789.eE+-")];
	}
	if (!read || !isfinite(*out) || *out < min || *out > max) {
		char what[80];
		snprintf(what, sizeof what, "expected a number from %g to %g", min, max);
		return bad(l, l->index[k], what, s);
	}
	return 0;
}

/* One data row into job; 1 when a filter leaves it out, -1 for a bad row. */
static int read_row(struct loader *l, char *line, const struct trace_filter *filters, int nfilters,
		    struct trace_job *job)
{
	char *fields[MAX_COLUMNS];
	int n = split(line, fields, MAX_COLUMNS);
	double v;

	/* Quotes first: a quoted field usually holds a comma, which would
	 * otherwise be reported as a wrong column count. */
	for (int i = 0; i < n && i < MAX_COLUMNS; i++) {
		if (fields[i][0] == '"')
			return bad(l, i, "quoted fields are not supported", fields[i]);
	}
	if (n != l->ncols) {
		snprintf(l->err, l->errsize, "%s:%zu: %d columns, the header has %d", l->path, l->line, n,
			 l->ncols);
		return -1;
	}
	for (int f = 0; f < nfilters; f++) {
		if (strcmp(fields[l->filter_col[f]], filters[f].value) != 0)
			return 1;
	}
	memset(job, 0, sizeof *job);
	if (number(l, fields, C_SUBMIT, 0, 1e10, &v) != 0)
		return -1;
	job->submit_ms = (int64_t)llround(v * 1000);
	if (number(l, fields, C_DURATION, 0, 1e9, &v) != 0)
		return -1;
	job->duration_ms = (int64_t)llround(v * 1000);
	job->gpus = 1;
	if (l->index[C_GPUS] >= 0 && fields[l->index[C_GPUS]][0]) {
		if (number(l, fields, C_GPUS, 0, 64, &v) != 0)
			return -1;
		if (v != floor(v))
			return bad(l, l->index[C_GPUS], "expected a whole number of GPUs", fields[l->index[C_GPUS]]);
		job->gpus = (int)v;
	}
	if (l->index[C_PRIORITY] >= 0 && fields[l->index[C_PRIORITY]][0]) {
		if (number(l, fields, C_PRIORITY, -1000, 1000, &v) != 0)
			return -1;
		/* serve takes a whole priority: the lease order compares them. */
		if (v != floor(v))
			return bad(l, l->index[C_PRIORITY], "expected a whole priority", fields[l->index[C_PRIORITY]]);
		job->priority = (int)v;
	}
	/* What a submitter told serve, in the whole seconds serve takes. */
	if (l->index[C_EST] >= 0 && fields[l->index[C_EST]][0]) {
		if (number(l, fields, C_EST, 1, (double)JOB_EST_MAX_S, &v) != 0)
			return -1;
		if (v != floor(v))
			return bad(l, l->index[C_EST], "expected whole seconds, as serve's est_s", fields[l->index[C_EST]]);
		job->est_ms = (int64_t)v * 1000;
	}
	/* serve takes no more; the replay looks at every lane for each job.
	 * Checked before the lane is kept: a row passed over with skip_bad
	 * must not leave a 17th lane behind. */
	job->lane = name_of(l, fields, C_LANE, &l->lanes, "standard", CONF_MAX_LANES, NULL);
	if (job->lane == -2) {
		char what[80];
		snprintf(what, sizeof what, "a lane beyond the %d that [queue] lanes may list", CONF_MAX_LANES);
		return bad(l, l->index[C_LANE], what, fields[l->index[C_LANE]]);
	}
	job->type = name_of(l, fields, C_TYPE, &l->types, "default", INT_MAX, NULL);
	/* A name as serve takes a job's team; which of them has a [team.NAME]
	 * section is the replay's to say (teams_index), as it is serve's. */
	job->team = name_of(l, fields, C_TEAM, &l->teams, "default", INT_MAX, config_name_ok);
	if (job->team == -3)
		return bad(l, l->index[C_TEAM], "expected a team name ([A-Za-z0-9_.-], 1 to 64 characters)",
			   fields[l->index[C_TEAM]]);
	return 0;
}

/* The next line into *line: 1, 0 at the end of the file, or -1 when it
 * cannot be read (an I/O error, a directory, no memory for a long line),
 * which getline reports as it reports the end: a read error must not pass
 * for the end of a shorter trace. */
static int next_line(struct loader *l, FILE *f, char **line, size_t *cap)
{
	ssize_t len;
	char *nul;

	errno = 0;
	if ((len = getline(line, cap, f)) < 0) {
		if (feof(f))
			return 0;
		snprintf(l->err, l->errsize, "%s:%zu: cannot read: %s", l->path, l->line + 1,
			 strerror(errno ? errno : EIO));
		return -1;
	}
	l->line++;
	/* The row is read as a C string: past a NUL byte it would be cut
	 * short without a word. */
	if ((nul = memchr(*line, '\0', (size_t)len))) {
		snprintf(l->err, l->errsize, "%s:%zu: a NUL byte at character %zu (not a text file?)", l->path,
			 l->line, (size_t)(nul - *line) + 1);
		return -1;
	}
	/* LF or CRLF, from Unix or Windows tools; a CR elsewhere is a file
	 * with old Mac line ends, which would read as one line. */
	if (len > 0 && (*line)[len - 1] == '\n')
		(*line)[--len] = '\0';
	if (len > 0 && (*line)[len - 1] == '\r')
		(*line)[--len] = '\0';
	if ((nul = memchr(*line, '\r', (size_t)len))) {
		snprintf(l->err, l->errsize, "%s:%zu: a carriage return at character %zu (lines must end in LF or"
			 " CRLF)", l->path, l->line, (size_t)(nul - *line) + 1);
		return -1;
	}
	return 1;
}

static void grow_jobs(struct trace *t, size_t *alloc)
{
	*alloc = *alloc ? *alloc * 2 : 1024;
	t->jobs = xrealloc(t->jobs, *alloc * sizeof *t->jobs);
}

static int by_submit(const void *a, const void *b)
{
	const struct trace_job *x = a, *y = b;
	return (x->submit_ms > y->submit_ms) - (x->submit_ms < y->submit_ms);
}

int trace_load(const char *path, const struct trace_filter *filters, int nfilters, int skip_bad,
	       struct trace *out, char *err, size_t errsize)
{
	struct loader l = {.path = path, .err = err, .errsize = errsize,
			   .lanes = {.list = &out->lanes, .n = &out->nlanes},
			   .types = {.list = &out->types, .n = &out->ntypes},
			   .teams = {.list = &out->teams, .n = &out->nteams}};
	FILE *f;
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	int rc = 0, sorted = 1;

	memset(out, 0, sizeof *out);
	if (nfilters > 8) {
		snprintf(err, errsize, "at most 8 filters");
		return -1;
	}
	if (!(f = fopen(path, "r"))) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while ((rc = next_line(&l, f, &line, &cap)) > 0 && line[0] == '#') {
		if ((rc = read_comment(&l, line, out)) != 0)
			break;
	}
	if (rc == 0) {
		snprintf(err, errsize, "%s:%zu: empty file (expected a header with submit_time_s,duration_s)", path,
			 l.line + 1);
		rc = -1;
	} else if (rc > 0) {
		/* The byte order mark that Windows tools write first. */
		rc = read_header(&l, line + (strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0), filters, nfilters);
	}
	while (rc == 0) {
		struct trace_job job;
		int r = next_line(&l, f, &line, &cap);

		if (r <= 0) {
			rc = r;
			break;
		}
		if (line[0] == '\0')
			continue;
		r = read_row(&l, line, filters, nfilters, &job);
		if (r == -1 && skip_bad) {
			out->skipped++;
			continue;
		}
		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 1) {
			out->filtered++;
			continue;
		}
		if (out->n == alloc)
			grow_jobs(out, &alloc);
		if (out->n && job.submit_ms < out->jobs[out->n - 1].submit_ms)
			sorted = 0;
		out->jobs[out->n++] = job;
	}
	free(line);
	fclose(f);
	for (int i = 0; i < l.ncols; i++)
		free(l.names[i]);
	free(l.lanes.slot);
	free(l.types.slot);
	free(l.teams.slot);
	if (rc != 0) {
		trace_free(out);
		return -1;
	}
	if (!sorted)
		qsort(out->jobs, out->n, sizeof *out->jobs, by_submit);
	return 0;
}

void trace_free(struct trace *t)
{
	for (int i = 0; i < t->nlanes; i++)
		free(t->lanes[i]);
	for (int i = 0; i < t->ntypes; i++)
		free(t->types[i]);
	for (int i = 0; i < t->nteams; i++)
		free(t->teams[i]);
	free(t->teams);
	free(t->lanes);
	free(t->types);
	free(t->jobs);
	free(t->reclaims);
	memset(t, 0, sizeof *t);
}

void trace_window(struct trace *t, int64_t from_ms, int64_t to_ms)
{
	size_t n = 0;

	for (size_t k = 0; k < t->n; k++) {
		if (t->jobs[k].submit_ms < from_ms || t->jobs[k].submit_ms >= to_ms)
			continue;
		t->jobs[n] = t->jobs[k];
		t->jobs[n++].submit_ms -= from_ms;
	}
	t->n = n;
	t->origin_ms += from_ms;
	n = 0;
	for (size_t k = 0; k < t->nreclaims; k++) {
		if (t->reclaims[k].at_ms < from_ms)
			continue;
		t->reclaims[n] = t->reclaims[k];
		t->reclaims[n++].at_ms -= from_ms;
	}
	t->nreclaims = n;
}
