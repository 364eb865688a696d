/* The simulator's insides, shared by its discrete-event engine (engine.c:
 * events, queues, instances, billing, the replay) and the policies it
 * replays: ebb's adapter to plan() (ebb.c) and the baselines
 * (baselines.c). Only src/sim uses it; sim.h is the simulator's API. */
#ifndef EBB_SIM_ENGINE_H
#define EBB_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "policy/plan.h"
#include "sim/sim.h"

enum ev_kind { EV_READY, EV_FINISH, EV_RECLAIM };

struct event {
	int64_t at;
	enum ev_kind kind;
	int inst;
	int64_t gen; /* the instance's generation when scheduled: stale if it moved on */
};

enum sstate { S_BOOTING, S_IDLE, S_BUSY, S_GONE };

struct sinst {
	int offer;
	enum market market;
	enum sstate state;
	int draining;
	int64_t launched, idle_since, run_start, run_end; /* run_end: when its job ends */
	int job;
	int64_t gen;
	/* ebb's (known.c): the other instances running a job of the same
	 * type, whose expected ends move together with its estimate */
	int type_next, type_prev;
};

struct sjob {
	int64_t submit, left_ms; /* reference work still to do */
	int64_t queued_at;       /* when it last joined the queue: submitted, or put back */
	int64_t waited_ms;       /* in the queue before its runs so far */
	int runs;                /* times it started */
	int cls;
	char queued;             /* in its class's queue now */
	char counted;            /* its wait is in waits[] (it ended), or it was left out */
};

/* Queued jobs of one class (GPUs, lane), oldest first. */
struct squeue {
	int gpus, lane;
	int *items;
	size_t head, len, cap;
	double work_ms; /* reference work of the queued jobs */
	int64_t est_work_ms; /* their work as ebb expects it (known.c) */
	/* ebb's (ebb.c). The lane's rank and wait target, looked up once:
	 * plan() is called millions of times. The jobs and reference work
	 * submitted, each weighted by exp(-age / arrival_window) as of
	 * arrivals_at: the class's arrival rate. */
	int lane_rank;
	int64_t wait_target_ms;
	double arrived_jobs, arrived_work_ms;
	int64_t arrivals_at;
};

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

#define EBB_GAPS 1000 /* as many as serve looks at */

/* ebb's, between its plans (ebb.c). */
struct ebb_state {
	/* plan()'s classes and answer, reused from call to call */
	struct plan_class *classes;
	size_t cap_classes;
	struct plan_result *result;
	/* The fleet as plan() sees it, kept in step with alive[] (same order,
	 * same length) as instances change, rather than built for each of
	 * the million calls of a long trace. */
	struct plan_instance *fleet;
	int starting; /* the first plan, before any job: its launches are up already */
	/* The latest gaps between submissions, for the auto idle timeout. */
	int64_t gaps[EBB_GAPS];
	size_t ngaps;
	int64_t last_submit, idle_timeout_ms;
};

/* keda's (baselines.c): the last moment with work, and the HPA's
 * recommendations of its stabilisation window. */
struct keda_state {
	int64_t last_active;
	int64_t *hist_at, *hist_n;
	size_t nhist;
};

struct sim {
	const struct trace *t;
	const struct policy *p;
	const struct sim_options *o;
	struct sim_result *r;
	int64_t now;
	uint64_t rng;
	struct event *heap;
	size_t nheap, capheap;
	struct sinst *inst;
	int ninst, capinst, live, busy;
	int *idle, nidle; /* the instances in S_IDLE, in index order: dispatch's to look at */
	int *alive; /* the instances not gone, in launch order: live of them */
	struct sjob *jobs;
	struct squeue *q;
	int nq;
	int64_t queued;
	double spend_per_ms, cost; /* running cost, for samples */
	int64_t *waits; /* each job's time in the queue, once it ended */
	size_t nwaits;
	/* Each wait of a job put back in the queue (a reclaim, a scale-in)
	 * until it ran again. */
	int64_t *requeue_waits;
	size_t nrequeue_waits, cap_requeue_waits;
	size_t done;
	/* when the policy looks */
	int64_t next_policy, last_policy;
	int dirty;
	double util_busy_ms, util_alive_ms; /* integrated since util_since, for util */
	int64_t util_since;
	int64_t next_sample;
	size_t cap_samples; /* room in r->samples */
	int nomem; /* an allocation failed: the replay stops, sim_run fails */
	/* The last job end, or the last moment with no work outstanding; the
	 * replay stops when work has waited stall_ms past it (sim.h). */
	int64_t progress_ms, stall_ms;
	struct ebb_state ebb;
	struct known_state known;
	struct keda_state keda;
};

/* ---- the engine (engine.c) ---- */

/* realloc that marks the replay out of memory when it fails; the caller
 * gives up its step and keeps what it had, and the replay stops at the
 * top of its loop. */
void *sim_grown(struct sim *s, void *p, size_t n, size_t size);
/* A new instance of offer on market m, up at once if warm; its index, or
 * -1 when out of memory. */
int sim_launch(struct sim *s, int offer, enum market m, int warm);
/* Stops an instance; a job on it loses the work since its last
 * checkpoint and goes back to the head of its queue. */
void sim_stop(struct sim *s, int k);

/* Where k is, or would go, in the sorted array a of n. */
static inline int sim_position(const int *a, int n, int k)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (a[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The earlier of two times, 0 meaning none. */
static inline int64_t min_positive(int64_t a, int64_t b) { return a == 0 ? b : b == 0 ? a : a < b ? a : b; }

/* ---- ebb (ebb.c) ---- */

/* Its arrays, its classes' lanes, and its first plan: the warm floor is
 * up when the replay starts. -1 when out of memory. */
int ebb_start(struct sim *s);
/* A job arrived: the arrival rates and the auto idle timeout follow. */
void ebb_arrival(struct sim *s, int job);
/* plan() on the simulated state, and its actions carried out. */
void ebb_policy(struct sim *s);
/* Its view of the fleet follows the engine's: room for cap instances
 * (-1 when out of memory), instance k changed, the one at alive[a] went. */
int ebb_fleet_grow(struct sim *s, size_t cap);
void ebb_fleet_sync(struct sim *s, int k);
void ebb_fleet_drop(struct sim *s, int a);

/* ---- what ebb is told of durations (known.c) ---- */

/* Whether the replay tells ebb what serve would know (not the trace's
 * exact durations): then the hooks below keep it. */
int known_estimates(const struct sim *s);
/* Its arrays; -1 when out of memory. */
int known_start(struct sim *s);
void known_free(struct sim *s);
/* A job joins (+1) or leaves (-1) its class's queue. */
void known_queued(struct sim *s, int job, int delta);
/* Instance k starts (1) or stops (0) running its job. */
void known_running(struct sim *s, int k, int running);
/* A job succeeded after running run_ms: the estimates follow. */
void known_finished(struct sim *s, int job, int64_t run_ms);
/* When ebb expects the job of busy instance k to end: its start and its
 * est_s, else its type's estimate; with --oracle-durations, its end. */
int64_t known_end_ms(const struct sim *s, int k);
/* The arrivals of class q aged to now (arrival_window). */
void known_decay(const struct sim *s, struct squeue *q);
/* A job arrived: its class's arrivals count it, and the work expected of it. */
void known_arrived(struct sim *s, int job);

/* ---- the baselines (baselines.c) ---- */

/* The fleet always-on, min1 and util start the replay with. */
void baseline_start(struct sim *s);
void min1_policy(struct sim *s);
void util_policy(struct sim *s);
void keda_policy(struct sim *s);
/* The offline lower bound: no replay, each job at its cheapest. */
void bound_run(const struct trace *t, const struct sim_options *o, struct sim_result *r);

#endif
