/* The contract between the simulator and each policy it replays, as
 * store/engine.h is the store's and provider/kind.h the providers': the
 * spec reader (spec.c) and the engine (engine.c, instances.c) call a
 * policy only through these hooks, and know none by name. Only src/sim
 * includes this file (and the tests that read a policy's knobs).
 *
 * To add a baseline: a file in sim/ defining a `const struct sim_policy`
 * (its name, its knobs, its hooks, its own state), and its entry in
 * sim_policy.c's registry (docs/SIMULATION.md, "Adding a baseline"). */
#ifndef EBB_SIM_POLICY_H
#define EBB_SIM_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* Declared only: the engine (sim_internal.h) includes this, not the other
 * way round, and the spec reader (spec.h) needs none of its insides. */
struct plan_settings;
struct policy;
struct sim;
struct sim_options;
struct sim_result;
struct trace;

/* A knob of a spec, NAME:KEY=VALUE, and the values it takes: a poll of 0
 * would poll for ever at one instant, a keda target near 0 or an
 * always-on fleet of a billion would launch without end, a utilisation
 * above 1 never occurs. At offset in the policy's params (offer= and
 * market=, which every baseline takes, in struct policy). */
struct knob {
	const char *name;
	enum { K_INT, K_SECONDS, K_NUMBER, K_OFFER, K_MARKET, K_CHOICE } type;
	size_t offset;
	double min, max;      /* K_SECONDS in seconds */
	const char *const *choices; /* K_CHOICE: the words, read as their index (an int) */
	const char *expected;       /* K_CHOICE: what the error says is expected */
};

/* Seconds: 31 years, a knob's "never". */
#define KNOB_NEVER 1e9

/* How `ebb tune` sweeps a baseline: each knob's values (a knob with no
 * values: the fleet sizes, 1 to 4 then doubling up to the trace's peak,
 * which only the sweep knows), every combination a setting of the
 * family, the last knob fastest, each replayed. */
struct sweep_knob {
	const char *name;
	const double *values;
	int n;
};

#define SWEEP_MAX_KNOBS 4
struct sim_sweep {
	const char *family; /* its points' family in the sweep's report */
	const char *suffix; /* knobs every setting of it adds; NULL: none */
	int several_offers; /* swept only when the offers are several */
	/* The cell of the policy's defaults is its reference point (below),
	 * not a point of its own. */
	int defaults_cell;
	const struct sweep_knob *knobs;
	int nknobs; /* SWEEP_MAX_KNOBS at most */
};

/* An array and its length, for sweep_knob's values and sim_sweep's knobs. */
#define SWEEP_ARRAY(a) (a), (int)(sizeof(a) / sizeof *(a))

struct sim_policy {
	const char *name;

	/* ---- its spec (spec.c) ---- */

	/* Its knobs (ended by one with no name), into params: params_size
	 * bytes, from defaults, which the policy reads as p->params. A
	 * baseline takes offer= and market= as well. */
	const struct knob *knobs;
	size_t params_size;
	const void *defaults;
	/* NULL: the knobs above. Else each KEY=VALUE goes here instead (ebb's
	 * overrides of its config); 0, or -1 with the reason in err. */
	int (*set)(struct policy *p, const char *key, const char *value, char *err, size_t errsize);
	/* What the knobs' ranges cannot say, once all are read (given: offer=
	 * or market= was); 0, or -1 with the whole message in err. NULL:
	 * nothing. */
	int (*check)(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		     size_t errsize);
	/* Whether it launches on every offer rather than on p->offer; NULL:
	 * on p->offer. */
	int (*any_offer)(const struct policy *p);
	/* A spec `ebb sim` replays by default beside NAME when the offers are
	 * several; NULL: none. */
	const char *several_offers_spec;

	/* ---- its replay (engine.c) ---- */

	/* What it is told of durations, for the outputs: "estimated" (what
	 * serve would know; --oracle-durations tells it the trace's own
	 * instead), "foresight" or "unused" (sim.h). */
	const char *durations;
	/* It shares GPUs among [team.NAME] sections, as serve's lease does. */
	int teams;
	/* It chooses what to stop itself: the engine keeps no order of the
	 * instances idle for it (sim_longest_idle). */
	int picks_stops;
	/* A reference that replays nothing: the whole result, instead of a
	 * replay, with the policy's settings (its config's [type.NAME]).
	 * NULL: it is replayed, through the hooks below. */
	void (*offline)(const struct trace *t, const struct plan_settings *st, const struct sim_options *o,
			struct sim_result *r);
	/* Its own state, state_size bytes zeroed (s->policy_state): made
	 * with the replay, and what it holds freed by free (NULL: nothing). */
	size_t state_size;
	void (*free)(struct sim *s);
	/* What it has up when the replay starts, and when it first looks
	 * (s->next_policy). NULL: nothing, at the first change. */
	void (*start)(struct sim *s);
	/* It looks (when due: s->next_policy, or after a change): launches
	 * and stops. NULL: never. */
	void (*look)(struct sim *s);
	/* After a change (an arrival, an instance up, a job's end, a stop),
	 * when it looks. NULL: not for a change. */
	int64_t (*on_change)(const struct sim *s);
	/* The fleet it keeps with no work: the replay's tail ends there.
	 * NULL: none. */
	int64_t (*floor)(const struct sim *s);
	/* The job instance k takes now (dispatch starts it), -1: none. NULL:
	 * the first in serve's lease order that fits (sim_lease_next). */
	int (*take)(struct sim *s, int k);
	/* Spot reclaimed instance k: it stops it (sim_stop) and does what it
	 * does about it. NULL: it is stopped, that is all. */
	void (*reclaim)(struct sim *s, int k);
	/* Optional, each called as the engine's state changes (NULL: none):
	 * a job arrived (before it is queued); a job joined (+1) or left (-1)
	 * its class's queue; instance k's newest job starts (1) or stops (0)
	 * being its newest while it runs; a job ended after running ran_ms. */
	void (*arrival)(struct sim *s, int job);
	void (*queued)(struct sim *s, int job, int delta);
	void (*running)(struct sim *s, int k, int running);
	void (*finished)(struct sim *s, int job, int64_t ran_ms);
	/* Its view of the fleet, slot for slot of roster[] (NULL: none):
	 * instance k changed; room for cap instances; slot from moved to to
	 * (sim_compact). */
	void (*changed)(struct sim *s, int k);
	void (*grow)(struct sim *s, size_t cap);
	void (*moved)(struct sim *s, int from, int to);

	/* ---- `ebb tune` (tune.c) ---- */

	/* Its sweeps, ended by one with no family; NULL: none (ebb's own
	 * grid is the tuner's). */
	const struct sim_sweep *sweeps;
	/* Its defaults (the spec NAME alone) are one of the sweep's
	 * references: replayed first, and compared against (tune.h). */
	int reference;
	/* A reference at the tune's wait target as well, of this family:
	 * NAME:KNOB, a knob of seconds, replayed as NAME:KNOB=TARGET
	 * ("clairvoyant:wait" makes clairvoyant:wait=600); NULL: none. */
	const char *at_target;
};

/* The registry (sim_policy.c): every policy, in the order `ebb sim` runs
 * them by default; ended by NULL. */
extern const struct sim_policy *const sim_policies[];

/* The check of a baseline on one offer (a check, or a check's last
 * step): its offer must be sold on its market, or it would run for free;
 * with no market given, an offer sold only on spot is taken on spot. */
int policy_check_offer(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		       size_t errsize);
/* The check of a policy that chooses every offer and market itself:
 * offer= and market= are refused, with the reason given. */
int policy_check_no_offer(const char *spec, int market_given, int offer_given, const char *why, char *err,
			  size_t errsize);
/* An any_offer for a policy that chooses among every offer. */
int policy_every_offer(const struct policy *p);

#endif
