/* Teams' shares of the GPUs (docs/TEAMS.md): how many GPUs each team may
 * use now, from the quotas, borrowing and lending limits and weights of
 * [team.NAME] and what each team uses and has queued. A pure function:
 * plan() caps its launches with it and serve's lease hands a team's job
 * only within it, from views built by serve and by the simulator alike.
 *
 * GPUs are counted as jobs ask for them (a job's `gpus`, at least 1), as
 * Kueue counts requests: a 1-GPU job on an 8-GPU instance holds 1 of its
 * team's GPUs and 8 of [scaler] max_gpus. VRAM is a fit, not a resource
 * here: it picks the offers a job may run on, never the team's share. */
#ifndef EBB_TEAMS_H
#define EBB_TEAMS_H

#include <stdint.h>

#include "common/config.h"

/* One team as plan() and the lease see it; no pointers, so that settings
 * compare by their bytes. */
struct plan_team {
	char name[CONF_NAME_MAX + 1];
	int64_t quota_gpus;
	int64_t borrowing_limit_gpus; /* -1: no limit */
	int64_t lending_limit_gpus;   /* -1: all its unused quota */
	double weight;
	double monthly_budget; /* USD; -1: none */
	int preempt_within;    /* at its share, its higher priority preempts its lower */
};

/* What one team holds and wants, and what it may hold. */
struct team_share {
	int64_t used_gpus;   /* held by its running jobs */
	int64_t queued_gpus; /* asked for by its queued jobs */
	int64_t allowed_gpus; /* out: its quota as far as it has work, and what it borrows */
	int64_t borrowed_gpus; /* out: of allowed_gpus, those beyond its quota */
};

/* The teams of [team.NAME] into out (at most CONF_MAX_TEAMS + 1), the
 * `default` team first: [team.default] when configured, else quota 0,
 * no borrowing limit, weight 1. Returns how many; 0 when no team is
 * configured (teams are off: one pool, as before). */
int teams_from_config(const struct config *cfg, struct plan_team *out);

/* The team's index: its section, or 0 (`default`) for a team with none. */
int teams_index(const struct plan_team *teams, int n, const char *name);

/* Fills each team's allowed_gpus and borrowed_gpus. A team is owed
 * min(its quota, used + queued). The pool others may borrow is max_gpus
 * less all quotas, plus each team's unowed quota up to its lending limit;
 * it is shared among the teams that want more than their quota by
 * weighted max-min, each capped by its borrowing limit and by what it
 * wants. Whole GPUs: what the shares' fractions leave goes one GPU at a
 * time to the team furthest below its weighted share, the first listed
 * on a tie. allowed_gpus may be below used_gpus: the team holds GPUs
 * another team is now owed. */
void teams_share(const struct plan_team *teams, int n, int64_t max_gpus, struct team_share *shares);

/* Bit t: team t has a monthly_budget and spent it, spend[t] in USD this
 * month (serve's from its ledger, a replay's as it goes). */
uint64_t teams_over_budget(const struct plan_team *teams, int n, const double *spend);

/* The start of the calendar month (UTC) of now_ms, `ahead` months on
 * (1: the next month's), in milliseconds since the epoch: the month a
 * budget counts. */
int64_t teams_month_start_ms(int64_t now_ms, int ahead);

#endif
