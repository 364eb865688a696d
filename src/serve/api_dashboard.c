/* GET /v1/dashboard: what the dashboard page shows, in one reply (API.md,
 * docs/DASHBOARD.md): the queue by lane, the fleet by offer and market,
 * the live instances with their resident handlers, the spend rate now,
 * money and items today, this month and in all, the spot share, idle
 * GPU-hours, the alerts firing, the last decisions, the teams, and the
 * last hours of the queue and the fleet. The figures are the snapshot's
 * (snapshot.h), as /metrics has them. */
#include <stdlib.h>
#include <string.h>

#include "serve/alerts.h"
#include "common/mem.h"
#include "serve/api_internal.h"
#include "serve/history.h"
#include "serve/snapshot.h"
#include "serve/team_state.h"

#define DECISIONS 10
#define HOUR_MS 3600000.0

static json_t *ratio(double num, double den) { return den > 0 ? json_real(num / den) : json_null(); }

static json_t *money_json(const struct snap_money *m)
{
	return json_pack("{s:f, s:I, s:o, s:f, s:f}", "cost_usd", m->cost, "items", (json_int_t)m->items, "cost_per_item",
			 ratio(m->cost, (double)m->items), "busy_gpu_hours", m->busy_gpu_ms / HOUR_MS, "idle_gpu_hours",
			 m->idle_gpu_ms / HOUR_MS);
}

static json_t *queue_json(const struct snapshot *x)
{
	json_t *lanes = json_array();

	for (int i = 0; i < x->nlanes; i++) {
		const struct snap_lane *l = &x->lanes[i];
		double wait = l->oldest_ms && x->now_ms > l->oldest_ms ? (double)(x->now_ms - l->oldest_ms) / 1000.0 : 0;
		json_array_append_new(lanes, json_pack("{s:s, s:I, s:I, s:I, s:f, s:f}", "name", l->name, "queued",
						       (json_int_t)l->n[JOB_QUEUED], "delayed", (json_int_t)l->n[JOB_DELAYED],
						       "leased", (json_int_t)l->n[JOB_LEASED], "oldest_wait_s", wait,
						       "wait_target_s", (double)l->wait_target_ms / 1000.0));
	}
	return json_pack("{s:o, s:I, s:I}", "lanes", lanes, "queued", (json_int_t)x->states[JOB_QUEUED], "leased",
			 (json_int_t)x->states[JOB_LEASED]);
}

/* instances: the live ones, as GET /v1/fleet lists them. */
static json_t *fleet_json(const struct snapshot *x, json_t *instances)
{
	json_t *offers = json_array();
	int64_t live = 0, spot = 0, busy = 0, idle = 0;

	for (int i = 0; i < x->noffers; i++) {
		const struct snap_offer *r = &x->offers[i];
		json_t *o;
		if (!r->configured && !r->live)
			continue;
		o = json_pack("{s:s, s:s, s:I}", "offer", r->offer, "market", market_name(r->market), "live", (json_int_t)r->live);
		for (int st = INST_REQUESTED; st < INST_TERMINATED; st++)
			json_object_set_new(o, instance_state_name((enum instance_state)st), json_integer(r->inst[st]));
		json_array_append_new(offers, o);
		live += r->live;
		spot += r->market == MARKET_SPOT ? r->live : 0;
		busy += r->inst[INST_BUSY];
		idle += r->inst[INST_IDLE];
	}
	return json_pack("{s:o, s:o, s:I, s:I, s:I, s:o, s:f}", "offers", offers, "instances", instances, "live",
			 (json_int_t)live, "busy",
			 (json_int_t)busy, "idle", (json_int_t)idle, "spot_share", ratio((double)spot, (double)live),
			 "spend_per_hour", x->spend_per_hour);
}

/* A team's quota and budget, where it has a [team.NAME] section: the
 * GPUs it holds of its quota, its month's chargeback against its budget
 * (team_state.h); null where it has none. */
static json_t *quota_json(const struct team_state *ts, const char *name)
{
	for (int t = 0; t < ts->n; t++) {
		const struct plan_team *tm = &ts->teams[t];
		if (strcmp(tm->name, name) != 0)
			continue;
		return json_pack("{s:I, s:I, s:f, s:o}", "quota_gpus", (json_int_t)tm->quota_gpus, "used_gpus",
				 (json_int_t)ts->shares[t].used_gpus, "month_spend_usd", ts->spend[t],
				 "monthly_budget_usd", tm->monthly_budget >= 0 ? json_real(tm->monthly_budget) : json_null());
	}
	return json_null();
}

static json_t *teams_json(const struct snapshot *x, const struct team_state *ts)
{
	json_t *teams = json_array();

	for (int i = 0; i < x->nteams; i++) {
		const struct snap_team *t = &x->teams[i];
		json_array_append_new(teams, json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:o}", "name", t->name, "queued",
						       (json_int_t)t->jobs[JOB_QUEUED], "leased", (json_int_t)t->jobs[JOB_LEASED],
						       "succeeded", (json_int_t)t->jobs[JOB_SUCCEEDED], "today",
						       money_json(&t->money[SNAP_TODAY]), "month",
						       money_json(&t->money[SNAP_MONTH]), "quota", quota_json(ts, t->name)));
	}
	return teams;
}

struct live_list {
	const struct api *api;
	json_t *instances;
	int64_t now_ms;
};

static int add_live(void *arg, const struct instance *inst)
{
	struct live_list *l = arg;

	return json_array_append_new(l->instances, api_instance_json(l->api, inst, l->now_ms));
}

static int add_decision(void *arg, const struct decision *d)
{
	json_array_append_new(arg, json_pack("{s:f, s:s, s:s, s:s}", "at", (double)d->at_ms / 1000.0, "kind", d->kind,
					      "offer", d->offer, "reason", d->reason));
	return 0;
}

/* The alerts firing, from alerts_json(), without those pending. */
static json_t *firing(const struct api *a)
{
	json_t *all, *out = json_array(), *al;
	size_t i;

	alerts_refresh(a->alerts);
	all = alerts_json(a->alerts);

	json_array_foreach(json_object_get(all, "alerts"), i, al) {
		if (strcmp(json_string_value(json_object_get(al, "state")), "firing") == 0)
			json_array_append(out, al);
	}
	json_decref(all);
	return out;
}

int api_dashboard(struct api_call *c)
{
	struct api *a = c->api;
	struct snapshot *x = mem_alloc(sizeof *x);
	json_t *decisions = json_array(), *tuning = NULL;
	struct live_list live = {.api = a, .instances = json_array()};
	struct team_state ts = {0};
	struct ebb_error err;
	int rc;

	if (!x) {
		json_decref(decisions);
		json_decref(live.instances);
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	if ((rc = snapshot_take(x, &a->snap)) == 0 &&
	    (rc = store_decision_list(a->store, INT64_MAX, DECISIONS, add_decision, decisions)) == 0)
		rc = team_state_read(&ts, a->store, a->cfg, x->now_ms);
	live.now_ms = x->now_ms;
	if (rc == 0)
		rc = store_instance_list(a->store, add_live, &live);
	if (rc == 0)
		rc = api_tuning_last(c, &tuning);
	if (rc != 0) {
		json_decref(tuning);
		team_state_free(&ts);
		free(x);
		json_decref(decisions);
		json_decref(live.instances);
		return api_store_failed(c);
	}
	request_reply(c->req, 200,
		      json_pack("{s:f, s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, s:o, s:o, s:o}", "at", (double)x->now_ms / 1000.0,
				"queue", queue_json(x), "fleet", fleet_json(x, live.instances), "money", "today",
				money_json(&x->money[SNAP_TODAY]), "month", money_json(&x->money[SNAP_MONTH]), "all",
				money_json(&x->money[SNAP_ALL]), "alerts", firing(a), "decisions", decisions, "teams",
				teams_json(x, &ts), "history", history_json(a->history), "tuning", tuning));
	team_state_free(&ts);
	free(x);
	return 0;
}
