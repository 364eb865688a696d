/* Job traces for the simulator: CSV with a header. Required columns
 * submit_time_s and duration_s; optional gpus, team, job_class (the job
 * type), priority, lane (16 lanes at most, as serve takes) and est_s (the
 * estimate a submitter gave, whole seconds from 1 to JOB_EST_MAX_S as serve's
 * API takes them; empty: none) and team (a name, as serve takes a job's
 * team; empty: `default`); any other column is ignored. A bad row
 * stops the load with the file, line and column, unless skip_bad, which
 * counts it. */
#ifndef EBB_TRACE_H
#define EBB_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct trace_job {
	int64_t submit_ms;
	int64_t duration_ms; /* on the reference GPU */
	int64_t est_ms;      /* the submitter's estimate; 0: none */
	int gpus;
	int priority;
	int lane; /* index into the trace's lanes */
	int type; /* index into the trace's types */
	int team; /* index into the trace's teams */
};

struct trace {
	struct trace_job *jobs;
	size_t n;
	char **lanes; /* names, in the order first seen */
	int nlanes;
	char **types;
	int ntypes;
	char **teams; /* names, in the order first seen */
	int nteams;
	size_t skipped; /* bad rows passed over with skip_bad */
	size_t filtered; /* rows a filter left out */
	/* Unix ms of the trace's 0 (a "# origin=SECONDS" line before the
	 * header): the replay's calendar months start from it; 0 without. */
	int64_t origin_ms;
};

struct trace_filter {
	const char *column;
	const char *value;
};

/* 0, or -1 with "FILE:LINE: column N (NAME): what was expected" in err. */
int trace_load(const char *path, const struct trace_filter *filters, int nfilters, int skip_bad,
	       struct trace *out, char *err, size_t errsize);
void trace_free(struct trace *t);
/* Keeps the jobs submitted in [from_ms, to_ms) and moves time so that
 * from_ms is 0 (and the origin with it): tune on one part of a history,
 * replay another. */
void trace_window(struct trace *t, int64_t from_ms, int64_t to_ms);

#endif
