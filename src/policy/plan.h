/* plan(): the scaling policy. A pure function of a view (clock, demand,
 * fleet, offers, settings) that returns actions, each with its reason. No
 * I/O, no clock reads, no globals: `ebb serve` and `ebb sim` call the same
 * function on views they build from the store or from a trace. */
#ifndef EBB_PLAN_H
#define EBB_PLAN_H

#include <stdint.h>

#include "common/config.h"
#include "common/instance.h"
#include "common/offer.h"
#include "common/warm.h"
#include "policy/teams.h"

/* Queued work of one requirement class in one lane. */
struct plan_class {
	const char *lane;
	int gpus;
	/* The part of one GPU each of its jobs takes ([type.NAME] gpu_share):
	 * 1, a whole GPU, or below for a shared type's one-GPU jobs. */
	double gpu_share;
	int min_vram_gb;
	int lane_rank; /* smaller is served first */
	int team;      /* index into the settings' teams; read only when there are teams */
	int64_t jobs;
	/* The highest priority among its jobs, and how many have it: what
	 * [team.NAME] preempt_within weighs against the team's running jobs. */
	int top_priority;
	int64_t top_jobs;
	int64_t items;          /* units of work of those jobs, summed */
	double work_s;          /* estimated run time on the reference GPU, summed */
	int64_t oldest_ms;      /* submit time of the oldest of them */
	/* The longest resident handler setup among its jobs' types
	 * (classes_setup_ms()): a launch's cold start is its offer's boot
	 * plus this. */
	double setup_s;
	int64_t wait_target_ms; /* the lane's wait target */
	/* The rate at which the class's jobs and work arrived lately,
	 * weighted by exp(-age / arrival_window): what is expected to keep
	 * coming. */
	double arrival_jobs_per_s, arrival_work_per_s;
};

struct plan_instance {
	int64_t id;
	int offer; /* index into the view's offers */
	enum market market;
	enum instance_state state;
	int running;            /* runs a job (busy, or draining with a job) */
	int64_t launched_ms;    /* launch requested */
	int64_t idle_since_ms;  /* last job finished, or registered */
	int64_t busy_until_ms;  /* estimated end of its job; 0 when it runs none */
	int64_t busy_since_ms;  /* when its job started; 0 when it runs none */
	/* When it runs a job and there are teams: the job's team (an index
	 * into the settings' teams) and the GPUs the job asks for, which it
	 * holds of its team's share. */
	int team;
	int team_gpus;
	int priority; /* of its job: the lowest is preempted first */
	/* While it runs jobs: the GPUs none of them holds, room for more
	 * beside them when the view packs. */
	int free_gpus;
	int lane_rank; /* of its job: a job preempted within its team must not come back first */
	int preempting; /* its job was asked to stop for a preemption already: its GPUs are on their way */
};

/* A lane, for the classes plan()'s callers build: its rank and wait target. */
struct plan_lane {
	char name[CONF_NAME_MAX + 1];
	int64_t wait_target_ms;
};

/* [scaler] idle_timeout: fixed, or chosen for each offer from the gaps
 * between submissions (plan_idle_timeouts() in policy/settings.h). */
struct plan_idle_timeout {
	int64_t ms; /* CONF_AUTO: chosen */
	int64_t min_ms, max_ms;
};

/* Every [scaler] key and every lane's wait target, filled by
 * plan_settings_from_config() (policy/settings.h) for serve and the
 * simulator alike. plan() reads the limits, timeouts and prices; the
 * fields marked "callers" are what serve and the simulator build its view
 * with. No pointers: two settings are the same when their bytes are. */
struct plan_settings {
	int64_t interval_ms; /* callers: the least time between two plans */
	int64_t max_instances;
	int64_t max_gpus;
	double max_spend_per_hour; /* 0: no limit */
	struct plan_idle_timeout idle_timeout; /* callers: the view's idle_timeout_ms */
	int64_t idle_surplus_ms;   /* idle instances beyond the last go after this; 0: off; CONF_AUTO: chosen */
	int64_t arrival_window_ms; /* time constant of the classes' arrival rates; 0: off */
	int idle_decay;
	int64_t decay_t1_ms, decay_t2_ms;
	int64_t boot_timeout_ms;
	struct warm_schedule warm;
	int64_t default_est_ms; /* callers: the run time of a job nothing tells about */
	double max_price;           /* USD per hour; 0: no limit */
	double min_reliability;     /* spot: P(no reclaim in an hour) at least */
	double max_share_per_offer; /* of the spot fleet */
	int use_spot;
	int64_t checkpoint_every_ms; /* assumed, to price the work a reclaim loses */
	/* callers: a market whose launch found no capacity rests this long */
	int64_t capacity_rest_ms;
	/* callers: [queue] lanes in rank order with their wait targets; a
	 * lane not among them waits the default one. */
	struct plan_lane lanes[CONF_MAX_LANES];
	int nlanes;
	int64_t default_wait_target_ms;
	/* [team.NAME], `default` first (teams_from_config()); none: teams
	 * are off and every job draws on the whole fleet. */
	struct plan_team teams[CONF_MAX_TEAMS + 1];
	int nteams;
	/* [type.NAME]: the types' gpu_share (classes_gpu_share()); the
	 * config's, which outlives the settings. */
	const struct type_conf *types;
	size_t ntypes;
	/* A job runs this long at least before it is preempted. */
	int64_t preempt_min_runtime_ms;
	/* callers: a job preempted twice in a row waits this long before its
	 * next lease (serve's queue; a replay preempts nothing yet). */
	int64_t preempt_backoff_ms;
};

struct plan_view {
	int64_t now_ms;
	const struct plan_settings *settings;
	/* In force for each offer (as offers): the fixed idle timeout, or the
	 * one chosen from the gaps seen so far. What is observed is the
	 * view's; what is configured, the settings'. */
	const int64_t *idle_timeout_ms;
	/* The same for idle_surplus_timeout; NULL: the settings' (a fixed
	 * one). */
	const int64_t *idle_surplus_ms;
	const struct plan_class *classes;
	int nclasses;
	const struct plan_instance *fleet;
	int nfleet;
	const struct offer *offers;
	int noffers;
	/* The simulator reads no reason: leave them empty (each costs a
	 * printf). serve and `ebb tune`'s reports keep them. */
	int no_reasons;
	/* Bit t: team t has spent its monthly_budget this month; nothing is
	 * launched for its work. */
	uint64_t over_budget;
	/* Workers run jobs side by side on an instance's GPUs (serve's do,
	 * and ebb sim's replay): an instance is capacity for as many jobs of
	 * a class at once as its GPUs hold, a launch too. 0: one job an
	 * instance. */
	int packs;
	/* Reference seconds of work the instances launched so far did in
	 * their lives, per launch (serve: its offers' statistics; a replay:
	 * its own so far; 0: none yet). A launch is priced over this much
	 * work at least: an instance up takes the work that comes after the
	 * queue it was launched for, so its boot is shared by all of it, and
	 * the offer cheapest per unit of work wins where one cheap per hour
	 * but slow would win for the queue alone. */
	double work_per_launch_s;
	/* How long past its idle timeout an idle instance is left to its
	 * worker, which was told that timeout (the longest of the offers'):
	 * the worker leaves by itself and powers its machine off, with no
	 * call to the provider, and the scaler's release is the backstop.
	 * serve: PLAN_LEAVE_GRACE_MS; a replay's instances end at the
	 * timeout, as a worker's leave would end them: 0. */
	int64_t leave_grace_ms;
};

/* The longest of the offers' idle timeouts in force (ms, as offers):
 * what a worker is told, as its own. It leaves by itself at it, and the
 * scaler releases each instance at its offer's (release_due in plan.c). */
int64_t plan_idle_timeout_longest(const int64_t *ms, int noffers);

/* A worker notices its idle timeout within a second (its lease polls
 * wait at least that long) and tells serve at once: 5 s covers both on a
 * busy machine. */
#define PLAN_LEAVE_GRACE_MS 5000

/* ACTION_PREEMPT: the job the instance runs gives its GPUs back to a team
 * owed them, through its checkpoint (docs/TEAMS.md); the instance stays. */
enum action_kind { ACTION_LAUNCH, ACTION_DRAIN, ACTION_TERMINATE, ACTION_PREEMPT };

struct action {
	enum action_kind kind;
	int offer;        /* launch */
	enum market market;
	int count;        /* launch */
	const char *lane; /* launch: the lane of the work it is for ("" for the warm pool); the view's */
	/* launch: the team (index into the settings' teams) whose work it is
	 * for, whose its boot and idle time are; -1: none (the warm pool, or
	 * teams off). */
	int team;
	int64_t instance; /* drain, terminate, preempt */
	char reason[400];
};

#define PLAN_MAX_ACTIONS 64

struct plan_result {
	struct action actions[PLAN_MAX_ACTIONS];
	int n;
	/* When the plan may change with no new event (an idle timeout ends,
	 * the warm floor changes, a boot times out); 0 if never. */
	int64_t next_ms;
	/* No memory for plan()'s scratch arrays on a fleet too large for
	 * its stack: no actions; the caller gives up this run. */
	int nomem;
};

void plan(const struct plan_view *v, struct plan_result *out);

/* Expected USD per second of reference work on offer o and market m, for
 * an instance that will do run_ref_s of it in jobs of job_ref_s: its cold
 * start (boot and a resident handler's setup_s) is billed, it runs at
 * o->speed, and on spot each reclaim loses half a checkpoint interval (or
 * half a job, if shorter) plus a new cold start. The price plan() compares
 * offers by (docs/COST.md); 0 when m is not sold. */
double plan_cost_per_work_s(const struct offer *o, enum market m, int64_t checkpoint_every_ms,
			    double run_ref_s, double job_ref_s, double setup_s);

#endif
