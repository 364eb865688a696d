/* The clairvoyant, split between clairvoyant.c (the policy: its knobs
 * and its replay) and chains.c (its plan): its state, which the replay
 * holds as its policy_state (sim_policy.h). Only those two files include
 * this. */
#ifndef EBB_SIM_CLAIRVOYANT_INTERNAL_H
#define EBB_SIM_CLAIRVOYANT_INTERNAL_H

#include "sim/sim_internal.h"

/* Its plan: chains of jobs, each run by one instance of its offer and
 * market, side by side as its GPUs hold them, launched a boot before its
 * first job; and, as it replays, each instance's chain and the chains
 * whose instance was reclaimed, to launch again. */
struct chain {
	int first, next; /* jobs: its first, and the first not started (-1: none) */
	int retake;      /* the first of its jobs a reclaim put back (-1: none) */
	int offer;
	enum market market;
	int64_t launch_at;
};

struct clairvoyant_state {
	int64_t wait_ms; /* the most a job may wait (clairvoyant_params) */
	int *next_job; /* per job: the next of its chain, -1 */
	int *retake_next; /* per job put back: the next of its chain's retake */
	struct chain *chains; /* by launch time */
	int nchains, launched;
	int *chain_of; /* per instance */
	size_t cap_chain_of;
	int *relaunch;
	int nrelaunch;
};

static inline struct clairvoyant_state *cv_of(const struct sim *s)
{
	return s->policy_state;
}

/* The plan: cv->chains (by launch time) and each job's next in its chain
 * (cv->next_job), with no job waiting longer than cv->wait_ms. */
void clairvoyant_plan(struct sim *s);

#endif
