/* The simulator's insides, shared by its discrete-event engine (engine.c:
 * events, queues, instances, billing, the replay) and the policies it
 * replays: ebb's adapter to plan() (ebb.c) and the baselines
 * (baselines.c). Only src/sim uses it; sim.h is the simulator's API. */
#ifndef EBB_SIM_INTERNAL_H
#define EBB_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/mem.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "sim/sim.h"

/* EV_RESUME: a job preempted twice in a row back in the queue once its
 * [scaler] preempt_backoff is over (inst: -1). */
enum ev_kind { EV_READY, EV_FINISH, EV_RECLAIM, EV_RESUME };

/* An event of an instance gone since is stale (an instance gone never
 * comes back), and a job's end once the job was put back (sim_put_back:
 * started again, it has an end of its own). */
struct event {
	int64_t at;
	enum ev_kind kind;
	int inst;
	int job; /* EV_FINISH: the job that ends; EV_RESUME: the job back */
};

/* Events, the earliest first (then by kind and instance). */
struct heap {
	struct event *e;
	size_t n, cap;
};

enum sstate { S_BOOTING, S_IDLE, S_BUSY, S_GONE };

/* An instance runs several jobs at once whose GPUs fit its own, as
 * serve's workers do: S_BUSY while any runs, S_IDLE (from idle_since) once
 * all its GPUs are free. */
struct sinst {
	int offer;
	enum market market;
	enum sstate state;
	int draining;
	int64_t launched, idle_since;
	int free_gpus;    /* that none of its jobs holds */
	int njobs;        /* jobs running on it */
	int newest;       /* the job it started last, -1: none; the others follow (sjob.next_on) */
	char open;        /* in open[] */
	/* ebb's (known.c): the other instances whose newest job (the one
	 * serve shows) is of the same type, whose expected ends move together
	 * with its estimate */
	int type_next, type_prev;
	/* ebb with teams: the team (index of [team.NAME]) whose work it was
	 * launched for, -1: none; and its jobs' runs so far, in USD, so that
	 * what no job used is known as it is billed. */
	int launch_team;
	double busy_usd;
};

/* A job of the trace (t->jobs, same index) as it replays: 40 bytes, a
 * million of them. */
struct sjob {
	int64_t left_ms;   /* reference work still to do */
	/* Queued: when it last joined the queue (submitted, or put back);
	 * running: when it started. */
	int64_t since;
	int64_t waited_ms; /* in the queue before its runs so far */
	int inst;          /* running: its instance */
	int next_on;       /* running: the job its instance started before it, -1: none */
	int cls;
	char ran;     /* it started once at least */
	char queued;  /* in its class's queue now */
	char counted; /* its wait is in waits[] (it ended), or it was left out */
	char preempted; /* its last run ended by a preemption */
};

/* Queued jobs of one class (GPUs, lane, team, priority) in lease order
 * (policy/lease_order.h): those put back first, then the others as they
 * were submitted. */
struct squeue {
	int gpus, lane;
	int team; /* its [team.NAME] index (teams_index), 0 without teams */
	int priority;
	int lane_rank; /* lease_lane_rank() of its lane, looked up once */
	int *items;
	size_t head, len, cap;
	int64_t running; /* its jobs running */
	double work_ms; /* reference work of the queued jobs */
	int64_t est_work_ms; /* their work as ebb expects it (known.c) */
	/* ebb's (ebb.c): the jobs and reference work submitted, each
	 * weighted by exp(-age / arrival_window) as of arrivals_at: the
	 * class's arrival rate. */
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

/* ebb's, between its plans (ebb.c). */
struct ebb_state {
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
};

/* Timed values over a sliding window, oldest first (window.c). */
struct window {
	struct window_entry {
		int64_t at;
		double a, b;
	} *e;
	size_t head, n, cap;
};

/* keda's (keda.c): the last moment with work, and the HPA's
 * recommendations of its stabilisation window (each with a: the
 * recommendation), only those that a later and larger one does not hide:
 * the first is the largest. */
struct keda_state {
	int64_t last_active;
	struct window recommendations;
	/* The GPUs of the replicas the HPA keeps: its jobs run in them. */
	int64_t replica_gpus;
	/* placement=cheapest: until when Karpenter leaves each offer's spot
	 * out after one of its instances was reclaimed. */
	int64_t spot_unavailable_until[SIM_MAX_OFFERS];
};

/* The clairvoyant's plan (clairvoyant.c): chains of jobs, each run by
 * one instance of its offer and market, side by side as its GPUs hold
 * them, launched a boot before its first job; and, as it replays, each
 * instance's chain and the chains whose instance was reclaimed, to
 * launch again. */
struct chain {
	int first, next; /* jobs: its first, and the first not started (-1: none) */
	int retake;      /* the first of its jobs a reclaim put back (-1: none) */
	int offer;
	enum market market;
	int64_t launch_at;
};

struct clairvoyant_state {
	int *next_job; /* per job: the next of its chain, -1 */
	int *retake_next; /* per job put back: the next of its chain's retake */
	struct chain *chains; /* by launch time */
	int nchains, launched;
	int *chain_of; /* per instance */
	size_t cap_chain_of;
	int *relaunch;
	int nrelaunch;
};

struct sim {
	const struct trace *trace;
	const struct policy *policy;
	const struct sim_options *opts;
	struct sim_result *result;
	int64_t now;
	uint64_t rng;
	struct heap events;
	struct sinst *inst;
	int ninst, capinst;
	int nup, booting, idling; /* instances not gone; booting; idle */
	int64_t running; /* jobs */
	/* The GPUs of the instances not gone, and those jobs hold. */
	int64_t gpus_live, gpus_busy;
	/* The roster: the instances not gone, in launch (index) order; and
	 * those up with room for a job (sinst.open) for dispatch to look at,
	 * in index order: nroster and nopen of them, with holes (instances
	 * since gone, or full) that who walks them skips, until
	 * sim_compact() (instances.c) or dispatch takes them out. */
	int *roster, nroster;
	int *open, nopen;
	struct sjob *jobs;
	struct squeue *q;
	int nq;
	int64_t queued, queued_gpus;
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
	/* GPU time up and held by jobs since the replay's start, for util,
	 * and its polls' (a: up, b: busy, in GPU-ms as of each). */
	double util_alive_ms, util_busy_ms;
	struct window util;
	int64_t next_sample;
	size_t cap_samples; /* room in r->samples */
	/* The last job end, or the last moment with no work outstanding; the
	 * replay stops when work has waited stall_ms past it (sim.h). */
	int64_t progress_ms, stall_ms;
	/* The fleet always-on, min1 and util keep with no work; the last
	 * job's end (-1 before) and the cost had everything stopped then. */
	int64_t floor;
	int64_t tail_from;
	double cost_at_tail;
	/* ebb with [team.NAME] sections (0: none, or another policy): each of
	 * the trace's teams' index among them (teams_index), and at each
	 * dispatch the GPUs each team may still take, from teams_share() as
	 * serve's lease has them. */
	int nteams;
	int *team_index;
	int64_t team_room[CONF_MAX_TEAMS + 1];
	/* Each team's spend this calendar month of the trace's clock (UTC),
	 * runs as they end and what no job used as instances stop, and when
	 * the month ends; the teams over budget (teams_over_budget()). And
	 * the line of r->teams each team's launches go to (-1: none). */
	double month_spend[CONF_MAX_TEAMS + 1];
	int64_t month_end_ms;
	uint64_t over_budget;
	int launch_line[CONF_MAX_TEAMS + 1];
	struct ebb_state ebb;
	struct known_state known;
	/* The instances as they became idle (a: the instance), oldest first;
	 * an entry is stale once its instance is busy or gone since
	 * (sim_longest_idle). The first not yet booted is at boot_head or
	 * after. */
	struct window idled;
	int boot_head;
	struct keda_state keda;
	struct clairvoyant_state cv;
	/* The baselines' scratch for choosing what to stop (baselines.c). */
	struct victim *victims;
	size_t cap_victims;
};

/* ---- the engine (engine.c) ---- */

/* Room for n items of size bytes, p's kept: a replay out of memory
 * aborts (common/mem.h: the simulator's rule). */
void *sim_grown(void *p, size_t n, size_t size);
/* A ring of n items of size bytes, from *head in *cap, copied in order
 * into twice the room (*head and *cap follow). */
void *sim_ring_grow(void *items, size_t *head, size_t n, size_t *cap, size_t size);
void heap_push(struct heap *h, struct event e);
struct event heap_pop(struct heap *h);
/* An event into the replay's heap. */
void sim_push(struct sim *s, struct event e);
/* A job joins its class's queue, at its head when it was put back. */
void sim_enqueue(struct sim *s, int job, int front);
/* When a running job ends, at its instance's speed. */
int64_t sim_run_end(const struct sim *s, int job);

/* Waits (non-negative milliseconds) in ascending order. */
void sim_sort_waits(int64_t *w, size_t n);
/* The q-quantile of n sorted waits, in seconds; 0 when n is 0. */
double sim_quantile_s(const int64_t *sorted, size_t n, double q);

/* ---- per-team results (replay_teams.c) ---- */

/* r->teams for a trace of more than one team; -1 when out of memory. */
void sim_teams_start(struct sim *s);
/* What a job's run cost, to its team; what no job used of instance k
 * as it is billed, to the team it was launched for. */
void sim_teams_ran(struct sim *s, int job, double usd);
void sim_teams_billed(struct sim *s, int k, double usd);
/* A new month of the trace's clock: spends from zero. The teams over
 * their budget. */
void sim_teams_month(struct sim *s);
/* Each team's jobs done and waits, at the replay's end. */
void sim_teams_summarise(struct sim *s);

/* ---- the instances (instances.c) ---- */

static inline const struct offer *sim_offer(const struct sim *s, const struct sinst *i)
{
	return &s->opts->offers[i->offer];
}

/* A new instance of offer on market m, up at once if warm; its index. */
int sim_launch(struct sim *s, int offer, enum market m, int warm);
/* Stops an instance; each job on it is put back (sim_put_back). */
void sim_stop(struct sim *s, int k);
/* A job stops running on its instance (it ended, or is put back): its GPUs
 * are free, and busy for the time it ran; its instance is idle when all
 * are free, else open. */
void sim_job_leaves(struct sim *s, int job);
/* A running job loses the work since its last checkpoint and leaves its
 * instance, which stays; sim_put_back() puts it at the head of its
 * queue too. */
void sim_interrupt(struct sim *s, int job);
void sim_put_back(struct sim *s, int job);
/* Instance k becomes idle now (all its GPUs free), and open. */
void sim_make_idle(struct sim *s, int k);
/* The GPUs job holds while it runs: those it asks for, one at least. */
static inline int sim_job_gpus(const struct sim *s, int job)
{
	return s->trace->jobs[job].gpus > 1 ? s->trace->jobs[job].gpus : 1;
}
/* ebb's view of the fleet follows every change of an instance. */
void sim_changed(struct sim *s, int k);
/* roster[] and open[] without their holes. */
void sim_compact(struct sim *s);
/* The instance idle the longest (the first to have become idle of those
 * idle now), and the first launched of those booting; -1 if none. */
int sim_longest_idle(struct sim *s);
int sim_first_booting(struct sim *s);
/* What instance k would cost were it stopped now; sim_bill() adds it to
 * the result as it stops. */
double sim_billed_usd(const struct sim *s, int k);
void sim_bill(struct sim *s, int k);

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
void ebb_start(struct sim *s);
/* A job arrived: the arrival rates and the auto idle timeout follow. */
void ebb_arrival(struct sim *s, int job);
/* plan() on the simulated state, and its actions carried out. */
void ebb_policy(struct sim *s);
/* Its view of the fleet follows the engine's, slot for slot of roster[]
 * (sim_compact() moves both): room for cap instances (-1 when out of
 * memory), instance k changed. */
void ebb_fleet_grow(struct sim *s, size_t cap);
void ebb_fleet_sync(struct sim *s, int k);
/* Only the expected end of instance k's job changed. */
void ebb_fleet_end(struct sim *s, int k);

/* ---- what ebb is told of durations (known.c) ---- */

/* Whether the replay tells ebb what serve would know (not the trace's
 * exact durations): then the hooks below keep it. */
int known_estimates(const struct sim *s);
/* Its arrays; -1 when out of memory. */
void known_start(struct sim *s);
void known_free(struct sim *s);
/* A job joins (+1) or leaves (-1) its class's queue. */
void known_queued(struct sim *s, int job, int delta);
/* Instance k's newest job starts (1) or stops (0) being the one whose
 * end ebb expects (it started, ended, or one started after it). */
void known_running(struct sim *s, int k, int running);
/* A job succeeded after running run_ms: the estimates follow. */
void known_finished(struct sim *s, int job, int64_t run_ms);
/* When ebb expects the newest job of busy instance k to end, as serve
 * shows the newest: its start and its est_s, else its type's estimate;
 * with --oracle-durations, its end. */
int64_t known_end_ms(const struct sim *s, int k);
/* The arrivals of class q aged to now (arrival_window). */
void known_decay(const struct sim *s, struct squeue *q);
/* A job arrived: its class's arrivals count it, and the work expected of it. */
void known_arrived(struct sim *s, int job);

/* ---- sliding windows (window.c) ---- */

/* Adds the newest entry. */
void window_push(struct window *w, int64_t at, double a, double b);
/* The k-th entry from the oldest. */
const struct window_entry *window_at(const struct window *w, size_t k);
void window_pop_front(struct window *w);
void window_pop_back(struct window *w);
/* Keeps the entries keep() says yes to, in order. */
void window_keep(struct window *w, int (*keep)(const struct window_entry *e, const void *arg), const void *arg);
void window_free(struct window *w);

/* ---- the baselines (baselines.c, util_scaling.c, keda.c) ---- */

/* The fleet always-on, min1 and util start the replay with. */
void baseline_start(struct sim *s);
/* Stops instances while those left have want GPUs at least: idle ones
 * first (the longest idle), then booting; if allow_busy (keda's replicas
 * deleted), first puts back running jobs until they hold want GPUs at
 * most. */
void baseline_scale_down(struct sim *s, int64_t want, int allow_busy);
void min1_policy(struct sim *s);
void util_policy(struct sim *s);
void keda_policy(struct sim *s);
/* Instance k was reclaimed: Karpenter leaves its offering out a while. */
void keda_reclaimed(struct sim *s, int k);
/* ---- the clairvoyant (clairvoyant.c) ---- */

/* Its plan, from the whole trace; -1 when out of memory. */
void clairvoyant_start(struct sim *s);
void clairvoyant_policy(struct sim *s);
/* The job instance k takes now (dispatch starts it): one of its chain's
 * put back by a reclaim, else the next of its chain once queued, if it
 * fits the instance's free GPUs; -1 if none. */
int clairvoyant_take(struct sim *s, int k);
/* Instance k was reclaimed: its chain is launched again. */
void clairvoyant_reclaimed(struct sim *s, int k);
void clairvoyant_free(struct sim *s);

/* The offline lower bound: no replay, each job at its cheapest. */
void bound_run(const struct trace *t, const struct sim_options *o, struct sim_result *r);

#endif
