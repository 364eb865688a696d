/* Job counts per (state, lane, type, team), kept in memory by the store's
 * front end beside the engine's tables and undone with them: a journal of
 * changes is rolled back with a savepoint or a batch. They are derived data (loaded
 * from the jobs at open), so nothing is held only in memory; keeping them
 * here rather than in a table maintained by triggers saves two statements
 * per job state change on the hot path (docs/BENCHMARKS.md). */
#ifndef EBB_COUNTS_H
#define EBB_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/job.h"

/* One row of job counts: the store keeps them per state, lane, type, team. */
struct job_count {
	enum job_state state;
	const char *lane, *type, *team;
	int64_t n;
};

typedef int (*count_cb)(void *arg, const struct job_count *count);

struct counts;

struct counts *counts_new(void);
void counts_free(struct counts *c);

/* Adds delta to a key's count (journaled while a batch is open). */
void counts_add(struct counts *c, enum job_state state, const char *lane, const char *type,
		const char *team, int64_t delta);

/* The batch and savepoint boundaries of the store, mirrored. */
void counts_begin(struct counts *c);
void counts_commit(struct counts *c);
void counts_rollback(struct counts *c);
void counts_savepoint(struct counts *c);
void counts_release(struct counts *c);
void counts_rollback_savepoint(struct counts *c);

int64_t counts_in_state(const struct counts *c, enum job_state state);
int counts_each(const struct counts *c, count_cb cb, void *arg);

#endif
