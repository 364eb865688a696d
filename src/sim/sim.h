/* The simulator: replays a job trace on a virtual clock against a
 * scaling policy — ebb's own plan(), the very function serve runs, or one
 * of the baselines people use today — and measures what it would have
 * cost and how long jobs would have waited. */
#ifndef EBB_SIM_H
#define EBB_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/offer.h"
#include "sim/spec.h"
#include "sim/trace.h"

#define SIM_MAX_OFFERS 16

struct sim_options {
	struct offer offers[SIM_MAX_OFFERS];
	int noffers;
	uint64_t seed;
	int64_t checkpoint_every_ms; /* 0: jobs do not checkpoint */
	int64_t sample_ms;           /* time-series step for plots; 0: none */
	/* ebb's plan() is told each job's exact duration from the trace, a
	 * what-if; by default it is told what serve would know. */
	int oracle_durations;
	/* Keep when each job first started (sim_result.first_start_ms). */
	int job_starts;
	/* The plug-ins a config file may name, so that serve's own config
	 * (with a [local] section, say) loads; NULL: the core sections only. */
	const struct conf_plugins *plugins;
};

struct sim_sample {
	int64_t t_ms;
	int queued;
	int instances[SIM_MAX_OFFERS];
	double cost;
};

/* A replay stops when work has been outstanding for this long with no
 * job ending (or SIM_STALL_JOBS times the longest job, if longer): spot
 * reclaimed faster than its jobs can run would replay forever. After the
 * last job ends, the replay goes on until the policy has released all it
 * holds beyond its standing floor (always-on's fleet, min1's and util's
 * one, ebb's warm pool), billed as it goes: the tail. A policy that still
 * holds more SIM_STALL_MS after the last job, or never would release it,
 * has its tail cut there. */
#define SIM_STALL_MS (30LL * 24 * 3600 * 1000)
#define SIM_STALL_JOBS 10

/* One team of the trace (its `team` column; a name with no [team.NAME]
 * is still reported by its own name), as serve's chargeback has it
 * (docs/TEAMS.md): its jobs' run cost is each run's share of its
 * instance's price by the GPUs it held; what no job used of an instance
 * (its boot, idle time, billing remainder) is the team's whose work ebb
 * launched it for. A team ebb launched for that the trace does not name
 * (`default`, for the trace's teams with no section) has a line of its
 * own, with no jobs; what no job used of the instances launched for no
 * team (the warm floor; every baseline's) is the shared line. */
struct sim_team_result {
	char name[CONF_NAME_MAX + 1];
	int64_t jobs, jobs_done;
	double busy_cost_usd, idle_cost_usd;
	int64_t preempted; /* its jobs' runs ended by a preemption */
	double wait_p50_s, wait_p95_s;
};

struct sim_result {
	char policy[512];
	/* With sim_options.job_starts, per job of the trace (its index),
	 * when it first started, -1: never; else NULL. bound runs none. */
	int64_t *first_start_ms;
	int64_t *last_start_ms; /* and when it last started (after a reclaim, say) */
	/* What the policy knew of durations: "estimated" (ebb, as serve
	 * would), "oracle" (ebb told the trace's own: --oracle-durations),
	 * "foresight" (the references, which see the whole trace by
	 * definition) or "unused" (a baseline that looks at none). */
	const char *durations;
	int64_t jobs, jobs_done;
	int64_t unplaceable; /* jobs no offer of the policy fits: left out */
	int stalled;         /* the replay stopped: no job ended after stalled_ms */
	int64_t stalled_ms;
	/* The tail: from the last job's end to the replay's end, what it cost
	 * (beyond stopping everything then), and whether it was cut. */
	int64_t tail_ms;
	double tail_cost_usd;
	int tail_cut;
	double cost_usd;
	double gpu_hours_billed, gpu_hours_busy, idle_gpu_hours;
	int64_t cold_starts, reclaims, max_instances;
	/* Reclaims of the trace's (trace.reclaims) that found no spot
	 * instance to take: not launched yet, gone, on demand, the job not
	 * running, or after the replay's end. */
	int64_t reclaims_missed;
	int64_t preemptions; /* ebb with teams: runs plan() preempted */
	/* A job's wait is all its time in the queue: before it first ran and
	 * after each time it was put back (a reclaim, a scale-in that
	 * stopped it), until it ran again; those waits alone, requeue_*. */
	double wait_p50_s, wait_p95_s, wait_p99_s, wait_mean_s;
	int64_t requeues;
	double requeue_wait_p95_s;
	int64_t end_ms;
	struct sim_sample *samples;
	size_t nsamples;
	/* Per team, when the trace has more than one (NULL otherwise), in
	 * the trace's order of first appearance. */
	struct sim_team_result *teams;
	int nteams;
};

/* The trace, and the offers of the config at offers_path (NULL: the
 * default offer): 0, or -1 with the reason in err. */
int sim_load(const char *trace_path, const char *offers_path, const struct trace_filter *filters,
	     int nfilters, int skip_bad, struct trace *t, struct sim_options *o, char *err,
	     size_t errsize);

/* The replay of t under p, into r (to sim_result_free). Out of memory, it
 * aborts (common/mem.h: the simulator's rule). */
void sim_run(const struct trace *t, const struct policy *p, const struct sim_options *o,
	     struct sim_result *r);
/* Its samples and teams; the figures stay. */
void sim_result_free(struct sim_result *r);

/* The most jobs of the trace running at once if each started when it
 * arrived (on the reference speed): the largest fixed fleet `ebb tune`
 * tries. -1 when out of memory. */
int64_t sim_peak_concurrency(const struct trace *t);

#endif
