/* ebb's policy in the simulator, split between ebb.c (its adapter to
 * plan()) and known.c (what it is told of durations): its state, which
 * the replay holds as its policy_state (sim_policy.h). Only those two
 * files include this. */
#ifndef EBB_SIM_EBB_INTERNAL_H
#define EBB_SIM_EBB_INTERNAL_H

#include "sim/sim_internal.h"

/* What ebb is told of durations (known.c), per type of the trace: the
 * estimate in force for its jobs submitted without one, the instances
 * running one of its jobs, and the classes its jobs without an estimate
 * are queued in or arrived in lately, so that a change of the estimate
 * reaches the work plan() sees at once. */
struct known_class {
	int cls;
	int64_t queued;
	double arrived; /* weighted by exp(-age / arrival_window) as of arrived_at */
	int64_t arrived_at;
};

struct known_type {
	int64_t est_ms;
	int running; /* the first instance of the list, -1: none */
	struct known_class *in;
	int nin, capin;
};

struct known_state {
	struct durations *history;
	struct known_type *types;
};

/* What ebb knows of a class of the engine's (s->q, same index) beyond
 * its queue: its queued jobs' work as ebb expects it (known.c), and the
 * jobs and reference work submitted, each weighted by exp(-age /
 * arrival_window) as of arrivals_at: the class's arrival rate. */
struct ebb_queue {
	int64_t est_work_ms;
	double arrived_jobs, arrived_work_ms;
	int64_t arrivals_at;
};

/* Per instance (known.c): the other instances whose newest job (the one
 * serve shows) is of the same type, whose expected ends move together
 * with its estimate. */
struct type_link {
	int next, prev;
};

/* ebb's, between its plans (ebb.c). */
struct ebb_state {
	struct ebb_queue *queues; /* per class */
	struct type_link *links;  /* per instance, grown with the fleet */
	/* plan()'s classes and answer, reused from call to call */
	struct plan_class *classes;
	size_t cap_classes;
	struct plan_result *result;
	/* The fleet as plan() sees it, kept in step with roster[] (same order,
	 * same length) as instances change, rather than built for each of
	 * the million calls of a long trace. */
	struct plan_instance *fleet;
	int starting; /* the first plan, before any job: its launches are up already */
	/* The latest gaps between submissions, for the auto idle timeout. */
	int64_t gaps[PLAN_IDLE_GAPS];
	size_t ngaps;
	int64_t last_submit;
	int64_t idle_timeout_ms[SIM_MAX_OFFERS]; /* in force, for each offer */
	int64_t idle_surplus_ms[SIM_MAX_OFFERS]; /* the same for idle_surplus_timeout */
	/* As serve's offer statistics count them: the reference work of the
	 * finished runs, and the launches. */
	double work_done_s;
	int64_t launches;
	/* What it is told of durations (known.c). */
	struct known_state known;
};

static inline struct ebb_state *ebb_of(const struct sim *s)
{
	return s->policy_state;
}

/* Only the expected end of instance k's job changed. */
void ebb_fleet_end(struct sim *s, int k);

/* ---- what ebb is told of durations (known.c) ---- */

/* Whether the replay tells ebb what serve would know (not the trace's
 * exact durations): then the hooks below keep it. */
int known_estimates(const struct sim *s);
/* Its arrays. */
void known_start(struct sim *s);
void known_free(struct sim *s);
/* A job joins (+1) or leaves (-1) its class's queue (sim_policy.queued). */
void known_queued(struct sim *s, int job, int delta);
/* Instance k's newest job starts (1) or stops (0) being the one whose
 * end ebb expects (sim_policy.running). */
void known_running(struct sim *s, int k, int running);
/* A job succeeded after running run_ms: the estimates follow. */
void known_finished(struct sim *s, int job, int64_t run_ms);
/* When ebb expects the newest job of busy instance k to end, as serve
 * shows the newest: its start and its est_s, else its type's estimate;
 * with --oracle-durations, its end. */
int64_t known_end_ms(const struct sim *s, int k);
/* A class's arrivals aged to now (arrival_window). */
void known_decay(const struct sim *s, struct ebb_queue *q);
/* A job arrived: its class's arrivals count it, and the work expected of it. */
void known_arrived(struct sim *s, int job);

#endif
