/* The simulator's insides, shared by its discrete-event engine (engine.c:
 * events, queues, instances, billing, the replay) and the policies it
 * replays (sim_policy.h: ebb's adapter to plan() in ebb.c, each baseline
 * in its own file). Only src/sim uses it; sim.h is the simulator's API. */
#ifndef EBB_SIM_INTERNAL_H
#define EBB_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/mem.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "sim/sim.h"
#include "sim/sim_policy.h"

/* EV_RESUME: a job preempted twice in a row back in the queue once its
 * [scaler] preempt_backoff is over (inst: -1). EV_PLACED: a reclaim of
 * the trace's (job: its index in trace.reclaims; inst: -1), whose
 * instance is known when it comes. */
enum ev_kind { EV_READY, EV_FINISH, EV_RECLAIM, EV_RESUME, EV_PLACED };

/* An event of an instance gone since is stale (an instance gone never
 * comes back), and a job's end once the job was put back (sim_put_back:
 * started again, it has an end of its own). */
struct event {
	int64_t at;
	enum ev_kind kind;
	int inst;
	int job; /* EV_FINISH: the job that ends; EV_RESUME: the job back; EV_PLACED: the reclaim */
};

/* Events, the earliest first (then by kind and instance). */
struct heap {
	struct event *e;
	size_t n, cap;
};

enum sstate { S_BOOTING, S_IDLE, S_BUSY, S_GONE };

/* Two shares that add to 1 in floating point (1/3 three times) fit, as
 * on the worker (worker/share.c). */
#define SIM_SHARE_SLACK 1e-9

/* A GPU of an instance that jobs of shared types run on, time-sliced
 * (docs/SCALING.md, "GPUs shared by small services"): the shares and the
 * memory ([type.NAME] vram_gb) of those jobs, and how many run there. A
 * slot with none is no GPU: the instance's GPUs are its free_gpus, those
 * whole jobs hold, and one per slot in use. */
struct sgpu {
	double used;
	int64_t vram_gb;
	int jobs;
};

/* What a job of a shared type takes of one GPU, per type of the trace. */
struct sshare {
	double part; /* its [type.NAME] gpu_share; 1: not shared */
	int64_t vram_gb; /* its [type.NAME] vram_gb; 0: not said */
};

/* An instance runs several jobs at once whose GPUs fit its own, as
 * serve's workers do: S_BUSY while any runs, S_IDLE (from idle_since) once
 * all its GPUs are free. */
struct sinst {
	int offer;
	enum market market;
	enum sstate state;
	int draining;
	int64_t launched, idle_since;
	int free_gpus;    /* whole: that none of its jobs holds, whole or shared */
	int njobs;        /* jobs running on it */
	int newest;       /* the job it started last, -1: none; the others follow (sjob.next_on) */
	char open;        /* in open[] */
	/* ebb with teams: the team (index of [team.NAME]) whose work it was
	 * launched for, -1: none; and its jobs' runs so far, in USD, so that
	 * what no job used is known as it is billed. */
	int launch_team;
	double busy_usd;
	/* The trace's type whose resident handlers it has started (ready,
	 * or setting up for the job that started one), -1: none; and how
	 * many: as serve's worker keeps one a runner, jobs of the type side
	 * by side each need one. One type at a time: a job of another
	 * handler's type replaces them (serve's worker stops only those
	 * whose GPUs it needs: an upper bound on setups where types mix). */
	int warm;
	int handlers;
	/* With shared types (sim.shares): a slot per GPU of its offer, for
	 * those shared jobs run on (sgpu), else NULL. */
	struct sgpu *parts;
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
	unsigned ran : 1;       /* it started once at least */
	unsigned queued : 1;    /* in its class's queue now */
	unsigned counted : 1;   /* its wait is in waits[] (it ended), or it was left out */
	unsigned preempted : 1; /* its last run ended by a preemption */
	/* Running: its run started its type's resident handler on its
	 * instance first, which takes the type's setup (sim.setup_ms). */
	unsigned setup : 1;
	/* Running, of a shared type: its GPU, a slot of its instance's parts
	 * (an offer has 64 GPUs at most). */
	unsigned part : 6;
};

/* Queued jobs of one class (GPUs, lane, team, priority, and the type for
 * a type whose handler has a setup or whose jobs share GPUs) in lease order
 * (policy/lease_order.h): those put back first, then the others as they
 * were submitted. */
struct squeue {
	int gpus, lane;
	int type; /* the trace's type of its jobs if it has a setup or shares, else -1 */
	double share; /* the part of one GPU each of its jobs takes: 1, or a shared type's */
	int team; /* its [team.NAME] index (teams_index), 0 without teams */
	int priority;
	int lane_rank; /* lease_lane_rank() of its lane, looked up once */
	int *items;
	size_t head, len, cap;
	int64_t running; /* its jobs running */
	double work_ms; /* reference work of the queued jobs */
};

/* Timed values over a sliding window, oldest first (window.c). */
struct window {
	struct window_entry {
		int64_t at;
		double a, b;
	} *e;
	size_t head, n, cap;
};

struct sim {
	const struct trace *trace;
	const struct policy *policy;
	const struct sim_policy *kind; /* policy->kind */
	void *policy_state;            /* its own (sim_policy.state_size) */
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
	/* Per type of the trace: its resident handler's setup, the config's
	 * [type.NAME] setup (policy/classes.h; 0: no handler). NULL when no
	 * type has one: the replay then skips all that concerns handlers. */
	int64_t *setup_ms;
	/* Per type of the trace: what its jobs take of a GPU, the config's
	 * [type.NAME] gpu_share and vram_gb. NULL when no type shares: the
	 * replay then gives every job whole GPUs, as it always did. */
	struct sshare *shares;
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
	/* GPU time up and held by jobs since the replay's start (GPU-ms). */
	double gpu_up_ms, gpu_busy_ms;
	int64_t next_sample;
	size_t cap_samples; /* room in r->samples */
	/* The last job end, or the last moment with no work outstanding; the
	 * replay stops when work has waited stall_ms past it (sim.h). */
	int64_t progress_ms, stall_ms;
	/* The last job's end (-1 before) and the cost had everything stopped
	 * then. */
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
	/* The instances as they became idle (a: the instance), oldest first;
	 * an entry is stale once its instance is busy or gone since
	 * (sim_longest_idle). The first not yet booted is at boot_head or
	 * after. */
	struct window idled;
	int boot_head;
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
/* The queued job instance k takes, -1 if none: the first in serve's
 * lease order (policy/lease_order.h) of the heads of the classes' queues
 * that fit it (sim_fits) with room of its whole GPUs free, and their
 * team's share. */
int sim_lease_next(struct sim *s, int k, int room);
/* The replay's clock: an on_change that looks at every change at once. */
int64_t sim_now(const struct sim *s);
/* The setup of the resident handler a running job started first, 0: none. */
int64_t sim_setup_ms(const struct sim *s, int job);
/* When a running job ends: its handler's setup, then its work at its
 * instance's speed. */
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
/* The GPUs job asks for, one at least: those it holds while it runs,
 * unless it shares one (sim_share_of). */
static inline int sim_job_gpus(const struct sim *s, int job)
{
	return s->trace->jobs[job].gpus > 1 ? s->trace->jobs[job].gpus : 1;
}

/* The policy's view of the fleet (sim_policy.changed) follows every
 * change of an instance. */
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

/* ---- GPUs shared by small services (shares.c) ---- */

/* sim.shares from the config's [type.NAME] gpu_share and vram_gb, by the
 * trace's type names; left NULL when no type shares. */
void sim_shares_start(struct sim *s);
/* The part of one GPU a job of the trace takes: its type's gpu_share for
 * a one-GPU job of a shared type (serve takes no other), else 1: whole
 * GPUs. */
static inline double sim_share_of(const struct sim *s, const struct trace_job *j)
{
	return s->shares && j->gpus <= 1 ? s->shares[j->type].part : 1;
}
/* The GPUs a running job holds, as the ledger splits the cost by them:
 * its part of one if it shares, else its GPUs. */
static inline double sim_job_held(const struct sim *s, int job)
{
	double part = sim_share_of(s, &s->trace->jobs[job]);

	return part < 1 ? part : sim_job_gpus(s, job);
}
/* Whether instance k can take job now with room of its whole GPUs free
 * (a policy may allow fewer than it has): a job of whole GPUs in room;
 * one of a shared type on a GPU already shared whose shares and memory
 * leave it room, else on a whole one, as the worker places it. */
int sim_fits(const struct sim *s, int k, int job, int room);
/* Whether a GPU of instance k is shared with share left on it. */
int sim_share_room(const struct sim *s, int k);
/* Job starts on instance k, which has room for it (sim_fits): it holds
 * its GPUs there, or its part of one. */
void sim_hold(struct sim *s, int k, int job);
/* Job leaves instance k: what it held is free; a shared GPU whose last
 * job it was is whole again. */
void sim_release(struct sim *s, int k, int job);

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

/* ---- what the baselines share (baselines.c) ---- */

/* The most jobs (weighted by GPUs if by_gpus) of the trace running at
 * once had each started when it arrived. */
int64_t sim_peak_running(const struct trace *t, int by_gpus);
/* Stops instances while those left have want GPUs at least: idle ones
 * first (the longest idle), then booting. */
void baseline_scale_down(struct sim *s, int64_t want);
/* A floor of one instance (sim_policy.floor). */
int64_t baseline_one(const struct sim *s);

#endif
