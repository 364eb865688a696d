/* What `ebb sim` and `ebb tune` print: a table for people, JSON for
 * scripts, and an SVG chart. */
#ifndef EBB_SIMOUT_H
#define EBB_SIMOUT_H

#include <jansson.h>
#include <stdio.h>

#include "sim/sim.h"

/* The line that says ebb was told the trace's durations (a what-if). */
extern const char simout_oracle_note[];
void simout_table(const struct sim_result *r, int n, FILE *out);
void simout_json(const struct sim_result *r, int n, FILE *out);
json_t *simout_result_json(const struct sim_result *r);
/* Queue depth, instances by offer and cumulative cost over time, one
 * panel each: a colour per policy, and in the instance panel a dash per
 * offer. */
int simout_plot(const struct sim_result *r, int n, const struct sim_options *o, const char *path,
		char *err, size_t errsize);
/* Each job's first start and wait under each policy that ran jobs, and
 * its last start (after a reclaim, say; else its first), as CSV:
 * policy,job,submit_s,start_s,wait_s,last_start_s (the last three empty
 * for a job that never started); job is its row among the trace's, in
 * submission order. */
int simout_jobs(const struct sim_result *r, int n, const struct trace *t, const char *path, char *err,
		size_t errsize);
struct tune;
/* Cost against p95 wait, each family's frontier as a line. */
int simout_frontier_plot(const struct tune *t, const char *path, char *err, size_t errsize);
/* A sample step giving about 600 points over the trace. */
int64_t simout_sample_step(const struct trace *t);


#endif
