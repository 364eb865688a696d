/* See team_state.h. */
#include "serve/team_state.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

#define DAY_MS 86400000LL

struct month_sums {
	const struct plan_team *teams;
	int n;
	double *spend;
};

/* A job's run is its team's; the time no job used, the team's whose work
 * the instance was launched for, and no team's (shared) when "". */
static int add_sum(void *arg, const struct ledger_sum *s)
{
	struct month_sums *m = arg;
	const char *team = s->team ? s->team : "";

	if (strcmp(s->kind, "job") == 0 || team[0])
		m->spend[teams_index(m->teams, m->n, team)] += s->cost;
	return 0;
}

int team_month_spend(struct store *st, const struct plan_team *teams, int n, int64_t now_ms, double *spend)
{
	struct month_sums m = {.teams = teams, .n = n, .spend = spend};

	for (int t = 0; t < n; t++)
		spend[t] = 0;
	return store_ledger_sums(st, teams_month_start_ms(now_ms, 0) / DAY_MS, add_sum, &m) != 0 ? -1 : 0;
}


struct budgets {
	struct plan_team *teams;
	int n;
};

static int apply_budget(void *arg, const struct team_budget *b)
{
	struct budgets *bs = arg;

	/* By its exact name: a team whose section is gone has no budget to set. */
	for (int t = 0; t < bs->n; t++) {
		if (strcmp(bs->teams[t].name, b->team) == 0)
			bs->teams[t].monthly_budget = b->budget < 0 ? -1 : b->budget;
	}
	return 0;
}

int team_budgets_apply(struct store *st, struct plan_team *teams, int n)
{
	struct budgets bs = {.teams = teams, .n = n};

	return n == 0 ? 0 : store_team_budgets(st, apply_budget, &bs);
}

static int64_t job_gpus(int gpus) { return gpus > 1 ? gpus : 1; }

static int add_leased(void *arg, const struct job *job)
{
	struct team_state *ts = arg;

	ts->shares[teams_index(ts->teams, ts->n, job->team)].used_gpus += job_gpus(job->gpus);
	return 0;
}

static int add_queued(void *arg, const struct demand_row *r)
{
	struct team_state *ts = arg;
	char **names;
	int64_t *rooms;

	ts->shares[teams_index(ts->teams, ts->n, r->team)].queued_gpus += r->jobs * job_gpus(r->gpus);
	for (int k = 0; k < ts->nnames; k++) {
		if (strcmp(ts->names[k], r->team) == 0)
			return 0;
	}
	if (!(names = mem_realloc(ts->names, (size_t)(ts->nnames + 1) * sizeof *names)))
		return TEAM_STATE_NOMEM;
	ts->names = names;
	if (!(rooms = mem_realloc(ts->rooms, (size_t)(ts->nnames + 1) * sizeof *rooms)))
		return TEAM_STATE_NOMEM;
	ts->rooms = rooms;
	if (!(ts->names[ts->nnames] = mem_strdup(r->team)))
		return TEAM_STATE_NOMEM;
	ts->nnames++;
	return 0;
}

int team_state_read(struct team_state *ts, struct store *st, const struct config *cfg, int64_t now_ms)
{
	struct job_filter leased = {.state = JOB_LEASED, .limit = INT_MAX};
	int rc;

	memset(ts, 0, sizeof *ts);
	if ((ts->n = teams_from_config(cfg, ts->teams)) == 0)
		return 0;
	if (team_budgets_apply(st, ts->teams, ts->n) != 0)
		return -1;
	if ((rc = store_job_list(st, &leased, add_leased, ts)) != 0 || (rc = store_demand(st, add_queued, ts)) != 0)
		return rc == TEAM_STATE_NOMEM ? rc : -1;
	if (team_month_spend(st, ts->teams, ts->n, now_ms, ts->spend) != 0)
		return -1;
	ts->over_budget = teams_over_budget(ts->teams, ts->n, ts->spend);
	teams_share(ts->teams, ts->n, cfg->max_gpus, ts->shares);
	for (int k = 0; k < ts->nnames; k++) {
		int t = teams_index(ts->teams, ts->n, ts->names[k]);
		/* A team over its budget gets nothing new; what runs finishes. */
		ts->rooms[k] = ts->over_budget >> t & 1 ? 0 : ts->shares[t].allowed_gpus - ts->shares[t].used_gpus;
	}
	return 0;
}

int team_state_held(const struct team_state *ts, const char *team, int gpus, char *why, size_t size)
{
	int t = teams_index(ts->teams, ts->n, team);
	const struct team_share *s = &ts->shares[t];
	const struct plan_team *tm = &ts->teams[t];

	if (ts->n == 0)
		return 0;
	if (ts->over_budget >> t & 1) {
		snprintf(why, size, "team %s spent its monthly budget ($%.2f of $%.2f this month): nothing is launched"
			 " or leased for its work", tm->name, ts->spend[t], tm->monthly_budget);
		return 1;
	}
	if (s->allowed_gpus - s->used_gpus >= job_gpus(gpus))
		return 0;
	snprintf(why, size, "team %s is at its share: its jobs use %lld GPUs of the %lld it may use now (quota %lld);"
		 " it waits for its own jobs to end or for GPUs other teams leave unused", tm->name,
		 (long long)s->used_gpus, (long long)s->allowed_gpus, (long long)tm->quota_gpus);
	return 1;
}

void team_state_free(struct team_state *ts)
{
	for (int k = 0; k < ts->nnames; k++)
		free(ts->names[k]);
	free(ts->names);
	free(ts->rooms);
	memset(ts, 0, sizeof *ts);
}
