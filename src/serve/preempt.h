/* Leased jobs asked to give their GPUs back to a team owed them
 * (docs/TEAMS.md). The scaler adds a job when plan() preempts it; its
 * worker hears it at once through its watch of the lease (watch.h), or
 * else in the reply to its next heartbeat ("preempt": the reason), and stops the job as it does for a reclaim notice: SIGTERM,
 * reclaim_grace for a last checkpoint, reported interrupted, queued again
 * at the head of its lane with its checkpoint, no attempt counted. Kept
 * in memory, by lease (job and token), and a lease that ended takes its
 * entry along; a serve that restarts reads the entries of the leases still
 * running back from the scaler's recorded decisions (preempt_restore). */
#ifndef EBB_PREEMPT_H
#define EBB_PREEMPT_H

#include <stdint.h>

#include "common/config.h"
#include "store/store.h"

#define PREEMPT_MAX 64
/* The error of a job whose run ended by a preemption, before the reason:
 * a job whose run is preempted with this error from its last run was
 * preempted twice in a row (the thrash guard, queue_interrupt()). */
#define PREEMPTED_ERROR "interrupted: preempted: "

struct preempts {
	struct {
		int64_t job, token;
		char reason[400];
	} at[PREEMPT_MAX];
	int n;
	/* Preemptions since serve started, per team (ebb_team_preemptions_total). */
	struct {
		char team[CONF_NAME_MAX + 1];
		int64_t n;
	} count[CONF_MAX_TEAMS + 1];
	int nteams;
	/* Told of each lease asked to stop (preempt_on_add). */
	void (*added)(void *arg, int64_t job);
	void *added_arg;
};

/* Asks the lease of team's job to stop, and counts it (team NULL: not
 * counted, a restored one): 1 when new, 0 when asked before, -1 when
 * full. */
int preempt_add(struct preempts *p, int64_t job, int64_t token, const char *team, const char *reason);
/* fn(arg, job) whenever a lease of job is asked to stop: its worker's
 * watch hears it at once (watch.h). */
void preempt_on_add(struct preempts *p, void (*fn)(void *arg, int64_t job), void *arg);
/* Why the lease is asked to stop, or NULL when it is not. */
const char *preempt_reason(const struct preempts *p, int64_t job, int64_t token);
/* The preemptions of leases still running, from the newest
 * PREEMPT_RESTORE_DECISIONS decisions: each "preempt" decision on an
 * instance names the job plan() saw there, its newest lease begun by
 * then. 0, or -1 on a store error (what was read is kept). */
#define PREEMPT_RESTORE_DECISIONS 1000
int preempt_restore(struct preempts *p, struct store *st);
/* Drops the entries of leases for which still(arg, job, token) is 0. */
void preempt_prune(struct preempts *p, int (*still)(void *arg, int64_t job, int64_t token), void *arg);

#endif
