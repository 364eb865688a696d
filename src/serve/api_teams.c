/* GET /v1/teams: each team's share as the lease sees it now (quota, GPUs
 * in use, beyond its quota, queued, allowed) and its spend this month
 * against its budget (team_state.h). An admin sees every team; a submit
 * token only its own. Without [team.NAME] sections teams are off: an
 * empty list. */
#include "serve/api.h"
#include "serve/queue.h"
#include "serve/team_state.h"

static json_t *limit_json(int64_t v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *team_json(const struct team_state *ts, int t)
{
	const struct plan_team *tm = &ts->teams[t];
	const struct team_share *sh = &ts->shares[t];
	int64_t beyond = sh->used_gpus - tm->quota_gpus;

	return json_pack("{s:s, s:I, s:o, s:o, s:f, s:I, s:I, s:I, s:I, s:f, s:o, s:b}", "name", tm->name,
			 "quota_gpus", (json_int_t)tm->quota_gpus, "borrowing_limit_gpus",
			 limit_json(tm->borrowing_limit_gpus), "lending_limit_gpus", limit_json(tm->lending_limit_gpus),
			 "weight", tm->weight, "used_gpus", (json_int_t)sh->used_gpus, "borrowed_gpus",
			 (json_int_t)(beyond > 0 ? beyond : 0), "queued_gpus", (json_int_t)sh->queued_gpus,
			 "allowed_gpus", (json_int_t)sh->allowed_gpus, "month_spend_usd", ts->spend[t],
			 "monthly_budget_usd", tm->monthly_budget >= 0 ? json_real(tm->monthly_budget) : json_null(),
			 "over_budget", (int)(ts->over_budget >> t & 1));
}

int api_teams(struct api_call *c)
{
	struct team_state ts;
	struct ebb_error err;
	json_t *teams = json_array();
	int rc = team_state_read(&ts, c->api->store, c->api->cfg, clock_now(c->api->clock));

	if (rc != 0) {
		team_state_free(&ts);
		json_decref(teams);
		if (rc != TEAM_STATE_NOMEM)
			return api_store_failed(c);
		error_set(&err, 500, "memory", NULL, "out of memory");
		return api_fail(c, &err);
	}
	for (int t = 0; t < ts.n; t++) {
		/* A submit token sees its team, or the default one if it has no section. */
		if (!c->team || teams_index(ts.teams, ts.n, c->team) == t)
			json_array_append_new(teams, team_json(&ts, t));
	}
	team_state_free(&ts);
	request_reply(c->req, 200, json_pack("{s:o, s:I}", "teams", teams, "max_gpus",
					     (json_int_t)c->api->cfg->max_gpus));
	return 0;
}
