/* The jobs' tallies: per state and class (lane, type, team, GPUs, VRAM,
 * priority) how many jobs there are and their items and estimates, kept
 * in memory by the store's front end beside the engine's tables and
 * undone with them: a journal of changes is rolled back with a savepoint
 * or a batch. The scaler's demand, the scrape and the counts read them,
 * so that what they cost grows with the classes, not with the backlog
 * (docs/ARCHITECTURE.md, "The tallies").
 *
 * They are derived data: an engine counts them at open (SQLite from the
 * jobs; PostgreSQL from the tallies table its writers keep in the same
 * transactions, flushed from counts_changes()), so nothing is held only
 * in memory. Keeping them here rather than in a table maintained by
 * triggers saves two statements per job state change on the hot path
 * (docs/BENCHMARKS.md). */
#ifndef EBB_COUNTS_H
#define EBB_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/job.h"

/* One tally: the jobs of one state and class, and their sums. A reader
 * that wants fewer keys (per state and lane, say) adds rows up. */
struct job_count {
	enum job_state state;
	const char *lane, *type, *team;
	int gpus, min_vram_gb, priority;
	int64_t n;
	int64_t items;
	int64_t no_est; /* of them, those without an estimate */
	int64_t est_s;  /* summed over those with one */
	int64_t run_ms; /* job_run_ms() summed: the finished jobs' run time */
	/* The oldest submission among them, where the reader knows it
	 * (counts_add() from an engine's count; 0 otherwise). */
	int64_t oldest_ms;
};

typedef int (*count_cb)(void *arg, const struct job_count *count);
/* A queued class: *oldest_ms is its oldest submission, 0 when the
 * tallies do not know it (the job that was leaves); the callback may
 * fill it in, and the tallies keep it until it changes again. */
typedef int (*queued_cb)(void *arg, const struct job_count *count, int64_t *oldest_ms);

/* A key whose tallies differ: as kept, and as counted from the jobs (a
 * side that lacks the key has n = 0). */
typedef int (*count_diff_cb)(void *arg, const struct job_count *kept, const struct job_count *counted);

struct counts;

struct counts *counts_new(void);
void counts_free(struct counts *c);

/* Adds an engine's row (not journaled: outside any batch). -1: no
 * memory, nothing added. */
int counts_add(struct counts *c, const struct job_count *row);
/* The job leaves the key of state `from` (-1: it is new), with the run
 * time the store held for it (job->stored_run_ms), for that of `to`,
 * with job_run_ms(job); journaled while a batch is open. -1: no memory,
 * nothing moved. */
int counts_move(struct counts *c, const struct job *job, int from, enum job_state to);

/* The batch and savepoint boundaries of the store, mirrored. */
void counts_begin(struct counts *c);
void counts_commit(struct counts *c);
void counts_rollback(struct counts *c);
void counts_savepoint(struct counts *c);
void counts_release(struct counts *c);
void counts_rollback_savepoint(struct counts *c);

/* What the open batch changed, as one delta per key, in the keys' order
 * (so that writers that flush them take row locks in one order); 0, or
 * the first callback's non-zero result. */
int counts_changes(struct counts *c, count_cb cb, void *arg);

int64_t counts_in_state(const struct counts *c, enum job_state state);
/* The finished jobs' run time, all keys. */
int64_t counts_run_ms(const struct counts *c);
/* Every key with jobs. */
int counts_each(const struct counts *c, count_cb cb, void *arg);
/* Every queued class with jobs. */
int counts_queued(struct counts *c, queued_cb cb, void *arg);
/* Each key on which the two differ to cb; *keys: the keys compared. */
int counts_compare(const struct counts *kept, const struct counts *counted, count_diff_cb cb, void *arg,
		   int64_t *keys);

#endif
