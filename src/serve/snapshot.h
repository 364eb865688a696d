/* serve seen whole, for the views that show it: GET /metrics (api_metrics.c)
 * and the dashboard's GET /v1/dashboard (api_dashboard.c). Taken inside a
 * batch step, so that it is one consistent view, and writing nothing.
 *
 * What it reads does not grow with the fleet's history: the job counts
 * (in memory beside the store), the queued jobs by class (bounded by
 * [queue] max_queued), the live instances, the offers' statistics, and of
 * the ledger its running sums (of all time, of today and of this month,
 * UTC) and its open segments, costed up to now at their offer's price. */
#ifndef EBB_SNAPSHOT_H
#define EBB_SNAPSHOT_H

#include "common/clock.h"
#include "common/config.h"
#include "serve/ledger.h"
#include "store/store.h"

#define SNAP_MAX_LANES 64
#define SNAP_MAX_OFFERS 1024 /* offer and market pairs */
#define SNAP_MAX_TEAMS 64

enum snap_period { SNAP_ALL, SNAP_TODAY, SNAP_MONTH, SNAP_PERIODS };

/* Money and GPU time of a period, from the ledger. */
struct snap_money {
	double cost; /* USD */
	double busy_gpu_ms, idle_gpu_ms; /* running a job; booting, idle, billed past the end */
	int64_t items; /* done by job runs that succeeded on the fleet */
};

struct snap_lane {
	char name[CONF_NAME_MAX + 1];
	int64_t n[JOB_NSTATES];
	int64_t oldest_ms; /* submission of its oldest queued job; 0: none */
	int64_t wait_target_ms; /* [lane.NAME] wait_target, or the default */
};

/* One offer on one market. */
struct snap_offer {
	char offer[CONF_NAME_MAX + 1];
	enum market market;
	int configured; /* sold on this market by an offer the provider may launch */
	int has_stats;
	int64_t live, inst[INST_NSTATES];
	int64_t idle_since_ms; /* of its instance idle the longest; 0: none idle */
	int64_t launches, reclaims, launch_failures, lost;
	int64_t failing_since_ms; /* its launches have all failed since; 0: they work */
};

/* A team: its jobs, and what its jobs' runs cost (idle time is no team's). */
struct snap_team {
	char name[CONF_NAME_MAX + 1];
	int64_t jobs[JOB_NSTATES];
	struct snap_money money[SNAP_PERIODS];
};

struct snapshot {
	int64_t now_ms;
	int64_t since_ms[SNAP_PERIODS]; /* each period's start: 0, today 00:00, the 1st 00:00 (UTC) */
	int64_t states[JOB_NSTATES];
	struct snap_lane lanes[SNAP_MAX_LANES];
	int nlanes;
	struct snap_offer offers[SNAP_MAX_OFFERS];
	int noffers;
	struct snap_team teams[SNAP_MAX_TEAMS];
	int nteams;
	double spend_per_hour; /* USD, of the live instances at their prices */
	struct snap_money money[SNAP_PERIODS];
	int dropped; /* lanes, offers or teams past the limits above, left out */
};

/* What a snapshot reads. */
struct snapshot_env {
	const struct config *cfg;
	struct store *store;
	const struct clock *clock;
	const struct ledger *ledger; /* the prices */
	const struct offer *offers;  /* the catalogue as configured */
	int noffers;
	int with_provider; /* every configured offer has its rows, 0 when none */
};

/* Fills *x (large: allocate it): 0, or -1 on a store error (store_error()). */
int snapshot_take(struct snapshot *x, const struct snapshot_env *env) STORE_CHECK;

#endif
