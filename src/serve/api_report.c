/* Cost calls: GET /v1/report adds the ledger up by team, offer (and
 * market) or job type, for the whole fleet or for one team's chargeback
 * (its monthly report, docs/TEAMS.md); GET /v1/offers shows each offer's prices, declared and measured
 * figures, the estimates in force and what a unit of work is expected to
 * cost on each market (docs/COST.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/api_internal.h"
#include "common/mem.h"
#include "policy/plan.h"
#include "serve/report.h"
#include "serve/estimates.h"
#include "serve/scaler.h"
#include "store/store.h"

#define MAX_SPAN_S (100.0 * 365 * 86400)

static int bad_query(struct api_call *c, const char *field, const char *msg)
{
	struct ebb_error err;

	error_set(&err, 400, "out_of_range", field, "%s: %s", field, msg);
	return api_fail(c, &err);
}

/* A number query parameter in [lo, hi], or def when absent; -1 after replying. */
static int query_number(struct api_call *c, const char *name, double lo, double hi, double def, double *out)
{
	const char *v = request_query(c->req, name);
	char *end;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(*out) || *out < lo || *out > hi) {
		char msg[160];
		snprintf(msg, sizeof msg, "expected a number from %.0f to %.0f, got '%.40s'", lo, hi, v);
		return bad_query(c, name, msg);
	}
	return 0;
}

/* ---- GET /v1/report ---- */

/* Segment ids a turn of the loop walks: some 10 ms of serve's thread
 * (BENCHMARKS.md, "A scrape against the length of history": a million
 * segments in 1.3 s); a longer ledger is walked over several turns, the
 * requests that came meanwhile served between them (serve/slices.h). */
#define REPORT_SLICE_IDS 8000

/* A report being added up: the ids walked so far, and the last one when
 * it was asked for; segments made after it are not in it. */
struct report_call {
	struct api *api;
	struct report r;
	int by;
	int64_t since_ms, after_id, last_id;
	int oom;
};

static int add_row(void *arg, const struct ledger_row *row)
{
	struct report_call *rc = arg;
	double usd_per_ms = ledger_usd_per_ms(rc->api->fleet->ledger, row->offer, row->market);

	if (report_add(&rc->r, row, usd_per_ms) != 0) {
		rc->oom = 1;
		return -1;
	}
	return 0;
}

/* By market, each line's price now, USD per hour. */
static void add_prices(const struct report_call *rc, json_t *reply)
{
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(reply, "groups"), i, g) {
		int m = market_parse(json_string_value(json_object_get(g, "market")));
		const char *offer = json_string_value(json_object_get(g, "name"));
		json_object_set_new(g, "price_usd_per_hour",
				    json_real(ledger_usd_per_hour(rc->api->fleet->ledger, offer,
								  m == MARKET_SPOT ? MARKET_SPOT : MARKET_ONDEMAND)));
	}
}

/* The next slice of the ledger into rc's report; when the last is in,
 * the reply. 1 answered, 0 more to walk; with last, answered (or gone). */
static int report_step(void *state, struct request *req, int last)
{
	struct report_call *rc = state;
	int64_t upto = rc->after_id + REPORT_SLICE_IDS;
	struct ebb_error err;
	json_t *reply;

	if (store_ledger(rc->api->store, rc->since_ms, rc->after_id, upto, add_row, rc) != 0) {
		if (rc->oom)
			error_set(&err, 500, "store", NULL, "store: out of memory adding up the ledger");
		else
			store_failure(rc->api->store, &err);
		request_reply(req, err.status, error_to_json(&err));
		return 1;
	}
	rc->after_id = upto;
	if (rc->after_id < rc->last_id) {
		if (!last)
			return 0;
		error_set(&err, 503, "stopping", NULL, "serve is stopping (or the client left): the report was not finished");
		request_reply(req, err.status, error_to_json(&err));
		return 1;
	}
	report_finish(&rc->r);
	reply = report_to_json(&rc->r);
	if (rc->by == REPORT_BY_MARKET)
		add_prices(rc, reply);
	request_reply(req, 200, reply);
	return 1;
}

/* slices.h's free: the report and its call. */
static void report_call_free(void *state)
{
	struct report_call *rc = state;

	report_free(&rc->r);
	free(rc);
}

int api_report(struct api_call *c)
{
	struct api *a = c->api;
	struct report_call *rc;
	const char *by_s = request_query(c->req, "by"), *month = request_query(c->req, "month");
	const char *team = request_query(c->req, "team");
	int64_t now = clock_now(a->clock), since_ms, until_ms = 0;
	int by = by_s ? report_by_parse(by_s) : REPORT_BY_OFFER;
	double since;
	struct ebb_error err;

	if (by < 0)
		return bad_query(c, "by", "expected team, offer, market or type");
	if (team && !config_name_ok(team)) {
		error_set(&err, 400, "bad_value", "team", "team: expected a team name ([A-Za-z0-9_.-], 1 to 64)");
		return api_fail(c, &err);
	}
	if (team && c->team && strcmp(team, c->team) != 0) {
		error_set(&err, 403, "forbidden", "team", "team: a submit token of team %s reads its own team's report only",
			  c->team);
		return api_fail(c, &err);
	}
	/* Negative: that many seconds before the server's now (ebb report --since 24h). */
	if (query_number(c, "since", -MAX_SPAN_S, 1e11, 0, &since) != 0)
		return -1;
	since_ms = since < 0 ? now + (int64_t)(since * 1000.0) : (int64_t)(since * 1000.0);
	/* A calendar month (UTC): the chargeback's period. */
	if (month && report_month(month, &since_ms, &until_ms) != 0)
		return bad_query(c, "month", "expected a month YYYY-MM, e.g. 2026-11");
	if (!(rc = mem_calloc(1, sizeof *rc))) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	rc->api = a;
	rc->by = by;
	rc->since_ms = since_ms;
	report_init(&rc->r, (enum report_by)by, since_ms, now);
	rc->r.until_ms = until_ms;
	rc->r.team = team;
	if (store_segment_last_id(a->store, &rc->last_id) != 0) {
		report_call_free(rc);
		return api_store_failed(c);
	}
	/* The first slice now: most ledgers are one. */
	if (report_step(rc, c->req, 0) == 1) {
		report_call_free(rc);
		return request_status(c->req) == 200 ? 0 : -1;
	}
	if (slices_park(a->slices, c->req, report_step, report_call_free, rc) != 0) {
		report_call_free(rc);
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	return 0;
}

/* ---- GET /v1/offers ---- */

struct samples_call {
	const struct offer *offers;
	int noffers;
	struct offer_samples *samples;
};

static int add_stat(void *arg, const struct offer_stat *st)
{
	struct samples_call *sc = arg;
	int k = offer_index(sc->offers, sc->noffers, st->offer);

	if (k >= 0)
		offer_samples_add(&sc->samples[k], st);
	return 0;
}

static json_t *price_json(double p) { return p >= 0 ? json_real(p) : json_null(); }
static json_t *reliability(double reclaims_per_hour) { return json_real(exp(-reclaims_per_hour)); }
static json_t *maybe(int ok, double v) { return ok ? json_real(v) : json_null(); }

/* Why plan() would not launch o on m (the filters of its candidates()),
 * or NULL. */
static const char *why_not(const struct config *cfg, const struct offer *o, enum market m)
{
	if (o->price[m] < 0)
		return "not sold on this market";
	if (cfg->max_price > 0 && o->price[m] > cfg->max_price)
		return "over [scaler] max_price";
	if (m == MARKET_SPOT) {
		if (!cfg->use_spot)
			return "[scaler] spot = off";
		if (exp(-o->reclaims_per_hour) < cfg->min_reliability)
			return "reliability below [scaler] min_reliability";
	}
	if (o->resting[m])
		return "resting: its last launch found no capacity, or its launches fail and back off";
	return NULL;
}

static json_t *market_json(const struct config *cfg, const struct offer *live, enum market m,
			   const struct offer_samples *x, double run_s, double job_s)
{
	const char *no = why_not(cfg, live, m);
	double per_s = plan_cost_per_work_s(live, m, cfg->checkpoint_every_ms, run_s, job_s, 0);
	json_t *j = json_pack("{s:o, s:b, s:o, s:o, s:I, s:I}", "price", price_json(live->price[m]), "usable", !no,
			      "why_not", no ? json_string(no) : json_null(), "usd_per_work_hour",
			      maybe(live->price[m] >= 0, per_s * 3600.0), "launches", (json_int_t)x->launches[m],
			      "launch_failures", (json_int_t)x->launch_failures[m]);

	if (m == MARKET_SPOT) {
		double hours = (double)x->alive_ms[m] / 3600000.0;
		json_object_set_new(j, "hours_observed", json_real(hours));
		json_object_set_new(j, "reclaims", json_integer(x->reclaims[m]));
	}
	json_object_set_new(j, "resting", json_boolean(live->resting[m]));
	return j;
}

static const char *const billing_names[] = {"per-second", "per-minute", "per-hour"};

static json_t *offer_json(const struct config *cfg, const struct offer *declared, const struct offer *live,
			  const struct offer_samples *x, double run_s, double job_s)
{
	/* Without a scaler nothing is launched: the declared figures stand. */
	int live_ok = live != declared;
	int speed_measured = live_ok && x->speed_n >= ESTIMATE_MIN_SAMPLES;
	int boot_measured = live_ok && x->boots >= ESTIMATE_MIN_SAMPLES;
	double spot_hours = (double)x->alive_ms[MARKET_SPOT] / 3600000.0;
	double speed = x->speed_n > 0 ? x->speed_sum / (double)x->speed_n : 0;
	double items_per_s = x->run_ms > 0 ? (double)x->items * 1000.0 / (double)x->run_ms : 0;
	double boot_s = x->boots > 0 ? (double)x->boot_ms / 1000.0 / (double)x->boots : 0;

	return json_pack(
		"{s:s, s:i, s:i, s:s, s:f, s:i,"
		" s:{s:f, s:f, s:o, s:f},"
		" s:{s:f, s:s, s:f, s:s, s:o, s:f, s:s},"
		" s:{s:I, s:o, s:I, s:I, s:f, s:o, s:I, s:o, s:f, s:I},"
		" s:{s:o, s:o}}",
		"name", declared->name, "gpus", declared->gpus, "vram_gb", declared->vram_gb, "billing",
		billing_names[declared->billing], "billing_minimum_s", (double)declared->billing_minimum_ms / 1000.0,
		"max_instances", declared->max_instances,
		"declared", "speed", declared->speed, "boot_s", (double)declared->boot_ms / 1000.0, "reliability",
		reliability(declared->reclaims_per_hour), "reclaims_per_hour", declared->reclaims_per_hour,
		"in_force", "speed", live->speed, "speed_from", speed_measured ? "measured" : "declared", "boot_s",
		(double)live->boot_ms / 1000.0, "boot_from", boot_measured ? "measured" : "declared", "reliability",
		reliability(live->reclaims_per_hour), "reclaims_per_hour", live->reclaims_per_hour, "reclaims_from",
		live_ok && (spot_hours > 0 || x->reclaims[MARKET_SPOT]) ? "declared blended with observed" : "declared",
		"measured", "speed_n", (json_int_t)x->speed_n, "speed", maybe(x->speed_n > 0, speed),
		"runs", (json_int_t)x->runs, "items", (json_int_t)x->items, "run_s", (double)x->run_ms / 1000.0,
		"items_per_s", maybe(x->run_ms > 0, items_per_s), "boots",
		(json_int_t)x->boots, "boot_s", maybe(x->boots > 0, boot_s),
		"spot_hours", spot_hours, "spot_reclaims", (json_int_t)x->reclaims[MARKET_SPOT],
		"markets", "on-demand", market_json(cfg, live, MARKET_ONDEMAND, x, run_s, job_s), "spot",
		market_json(cfg, live, MARKET_SPOT, x, run_s, job_s));
}

int api_offers(struct api_call *c)
{
	struct api *a = c->api;
	const struct config *cfg = a->cfg;
	const struct offer *live = a->offers;
	struct offer_samples samples[64] = {{0}};
	struct samples_call sc = {.offers = a->offers, .noffers = a->noffers, .samples = samples};
	double run_s, job_s;
	json_t *list;
	int n = a->noffers;

	if (query_number(c, "work_s", 1, 30.0 * 86400, 3600, &run_s) != 0 ||
	    query_number(c, "job_s", 1, 30.0 * 86400, (double)cfg->default_est_ms / 1000.0, &job_s) != 0)
		return -1;
	if (store_offer_stats(a->store, add_stat, &sc) != 0 ||
	    (a->scaler && scaler_offers(a->scaler, &live, &n) != 0))
		return api_store_failed(c);
	list = json_array();
	for (int k = 0; k < a->noffers && k < n; k++)
		json_array_append_new(list, offer_json(cfg, &a->offers[k], &live[k], &samples[k], run_s, job_s));
	request_reply(c->req, 200,
		      json_pack("{s:o, s:i, s:f, s:f, s:f, s:b}", "offers", list, "min_samples", ESTIMATE_MIN_SAMPLES,
				"work_s", run_s, "job_s", job_s, "checkpoint_every_s",
				(double)cfg->checkpoint_every_ms / 1000.0, "estimates_live", a->scaler != NULL));
	return 0;
}
