/* The teams as serve sees them now: what each team's leased jobs hold and
 * its queued jobs ask for, read from the store, and the GPUs
 * teams_share() (policy/teams.h) lets it hold. The lease hands a team's
 * job only within that, as plan() launches for it only within it. */
#ifndef EBB_TEAM_STATE_H
#define EBB_TEAM_STATE_H

#include <stdint.h>

#include "common/config.h"
#include "policy/teams.h"
#include "store/store.h"

struct team_state {
	struct plan_team teams[CONF_MAX_TEAMS + 1];
	struct team_share shares[CONF_MAX_TEAMS + 1];
	double spend[CONF_MAX_TEAMS + 1]; /* this month, USD */
	uint64_t over_budget;
	int n; /* 0: no teams configured */
	/* The team names of the queued jobs, each with the GPUs its team
	 * may still take (its allowed less what it holds): what the lease
	 * offer carries. A name with no [team.NAME] is the default team's. */
	char **names;
	int64_t *rooms;
	int nnames;
};

#define TEAM_STATE_NOMEM (-2)

/* Each team's spend this calendar month (UTC) up to now, in USD, from the
 * ledger's closed segments: its chargeback (chargeback.h), its jobs' runs
 * and the time no job used of the instances launched for its work. 0,
 * or -1 on a store error. */
int team_month_spend(struct store *st, const struct plan_team *teams, int n, int64_t now_ms, double *spend);

/* Puts the monthly budgets an admin set at run time (store_team_budgets,
 * POST /v1/teams/budget) over the config's in teams: 0, or -1 on a store
 * error. Every reader of the budgets (plan()'s view, the lease, the
 * alerts, the API) calls it, so that a change holds at once. */
int team_budgets_apply(struct store *st, struct plan_team *teams, int n);

/* 0; -1: the store failed (store_error()); TEAM_STATE_NOMEM. */
int team_state_read(struct team_state *ts, struct store *st, const struct config *cfg, int64_t now_ms);
void team_state_free(struct team_state *ts);
/* Why a queued job of team asking for gpus waits for its team into why
 * (the budget spent, or the team at its share), and 1; 0 when its team
 * does not hold it back (or there are no teams). */
int team_state_held(const struct team_state *ts, const char *team, int gpus, char *why, size_t size);

#endif
