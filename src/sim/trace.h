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

/* A spot reclaim placed at a chosen time (trace_load_reclaims). */
struct trace_reclaim {
	int64_t at_ms; /* on the trace's clock, as submit_ms */
	int target;    /* the instance (from 1) or the job (from 0) */
};

struct trace {
	struct trace_job *jobs;
	size_t n;
	/* The spot reclaims to replay, in time order, when has_reclaims
	 * (none drawn at random then); reclaims_by_job: their targets are
	 * jobs, else instances. */
	struct trace_reclaim *reclaims;
	size_t nreclaims;
	int has_reclaims, reclaims_by_job;
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
/* The spot reclaims of the CSV at path into t (freed by trace_free):
 * a header, time_s,instance or time_s,job, then a reclaim a line: the
 * time in seconds on the trace's clock (as submit_time_s) and whose
 * instance it takes, the Nth the replay launched (from 1, the standing
 * floor's first, in launch order), or the one running the job then (its
 * number as `ebb sim --jobs` writes it: its row among the trace's jobs
 * in submission order, from 0). 0, or -1 with "FILE:LINE: what was
 * expected" in err. */
int trace_load_reclaims(const char *path, struct trace *t, char *err, size_t errsize);
/* Keeps the jobs submitted in [from_ms, to_ms), and the reclaims from
 * from_ms on, and moves time so that from_ms is 0 (and the origin with
 * it): tune on one part of a history, replay another. */
void trace_window(struct trace *t, int64_t from_ms, int64_t to_ms);

#endif
