/* GET /v1/teams: each team's share as the lease sees it now (quota, GPUs
 * in use, beyond its quota, queued, allowed) and its spend this month
 * against its budget (team_state.h). An admin sees every team; a submit
 * token only its own. Without [team.NAME] sections teams are off: an
 * empty list.
 *
 * POST /v1/teams/budget (admin): raises, lowers or lifts a team's
 * monthly budget at run time. Kept in the store over the config's (it
 * outlives a restart), recorded as a decision, and in force at once: the
 * lease and the next plan read it. */
#include "serve/api_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
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
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
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

/* The most a budget may be, as [team.NAME] monthly_budget. */
#define BUDGET_MAX 1e9

const struct field api_team_budget_fields[] = {
	{"team", F_NAME, 0, 0},
	{"monthly_budget", F_ANY, 0, 0},
	{NULL, 0, 0, 0},
};

/* The budget asked for into *usd (-1: none), or a 400 naming the problem. */
static int budget_asked(struct api_call *c, double *usd)
{
	json_t *v = json_object_get(c->body, "monthly_budget");
	struct ebb_error err;

	if (!v)
		error_set(&err, 400, "missing_field", "monthly_budget",
			  "monthly_budget: USD a month, or null to lift the team's budget");
	else if (json_is_null(v))
		return *usd = -1, 0;
	else if (!json_is_number(v))
		error_set(&err, 400, "bad_value", "monthly_budget", "monthly_budget: expected a number of USD, or null");
	else if (!isfinite(*usd = json_number_value(v)) || *usd < 0 || *usd > BUDGET_MAX)
		error_set(&err, 400, "out_of_range", "monthly_budget", "monthly_budget: expected 0 to %.0f USD, got %g",
			  BUDGET_MAX, json_number_value(v));
	else
		return 0;
	return api_fail(c, &err);
}

static void usd_text(char *buf, size_t size, double usd)
{
	if (usd < 0)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "$%.2f", usd);
}

int api_team_budget(struct api_call *c)
{
	struct plan_team teams[CONF_MAX_TEAMS + 1];
	const char *name;
	char was[32], now[32], why[300];
	struct ebb_error err;
	double usd = -1;
	int n, t;

	if (api_body(c, api_team_budget_fields) != 0 || budget_asked(c, &usd) != 0)
		return -1;
	if (!(name = json_get_str(c->body, "team", NULL))) {
		error_set(&err, 400, "missing_field", "team", "team: the name of a [team.NAME] section");
		return api_fail(c, &err);
	}
	n = teams_from_config(c->api->cfg, teams);
	t = teams_index(teams, n, name);
	/* Only a team of its own: one without a section is the default team's. */
	if (n == 0 || strcmp(teams[t].name, name) != 0) {
		error_set(&err, 404, "not_found", "team", "no team %s: the config has no [team.%s] section%s", name,
			  name, n == 0 ? " (teams are off)" : "");
		return api_fail(c, &err);
	}
	if (team_budgets_apply(c->api->store, teams, n) != 0)
		return api_store_failed(c);
	usd_text(was, sizeof was, teams[t].monthly_budget);
	usd_text(now, sizeof now, usd);
	snprintf(why, sizeof why, "team %s: monthly budget %s (was %s), set by %s", name, now, was,
		 c->token ? c->token->name : "an admin (open API)");
	if (store_team_budget_set(c->api->store, &(struct team_budget){.team = name, .budget = usd,
									.set_ms = clock_now(c->api->clock)}) != 0 ||
	    store_decision_insert(c->api->store, &(struct decision){.at_ms = clock_now(c->api->clock),
								    .kind = "budget", .offer = "", .reason = why}) != 0)
		return api_store_failed(c);
	/* A lifted budget may free the team's queued jobs for waiting workers. */
	queue_ready_changed(c->api->queue);
	log_info("team budget set", "team=%s budget=%s was=%s", name, now, was);
	return api_teams(c);
}
