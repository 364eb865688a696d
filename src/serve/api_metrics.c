/* GET /metrics: the queue, the fleet, the ledger and serve's own counters
 * in the Prometheus text format (docs/METRICS.md lists them), written
 * from a snapshot (snapshot.h: one consistent view, whose cost does not
 * grow with history). */
#include <stdlib.h>
#include <string.h>

#include "serve/alerts.h"
#include "serve/api.h"
#include "serve/metrics.h"
#include "serve/snapshot.h"

static void write_queue(struct prom *p, const struct snapshot *x)
{
	static const struct {
		const char *name;
		enum job_state state;
		const char *help;
	} per_lane[] = {
		{"ebb_queue_depth", JOB_QUEUED, "Jobs queued, ready to be leased, by lane."},
		{"ebb_queue_delayed", JOB_DELAYED, "Jobs waiting for their run_at (a delay or a retry backoff), by lane."},
		{"ebb_jobs_leased", JOB_LEASED, "Jobs leased to a worker, by lane."},
	};

	for (size_t k = 0; k < sizeof per_lane / sizeof *per_lane; k++) {
		prom_family(p, per_lane[k].name, "gauge", per_lane[k].help);
		for (int i = 0; i < x->nlanes; i++)
			prom_sample(p, "", (double)x->lanes[i].n[per_lane[k].state], "lane", x->lanes[i].name, NULL);
	}
	prom_family(p, "ebb_queue_oldest_age_seconds", "gauge",
		    "Time since the submission of the oldest queued job, by lane; 0 when none is queued.");
	for (int i = 0; i < x->nlanes; i++) {
		int64_t t = x->lanes[i].oldest_ms, age = t && x->now_ms > t ? x->now_ms - t : 0;
		prom_sample(p, "", (double)age / 1000.0, "lane", x->lanes[i].name, NULL);
	}
	prom_family(p, "ebb_jobs", "gauge", "Jobs in the store in each state (a gauge: jobs move between states).");
	for (int i = 0; i < JOB_NSTATES; i++)
		prom_sample(p, "", (double)x->states[i], "state", job_state_name((enum job_state)i), NULL);
}

static void write_fleet(struct prom *p, const struct snapshot *x)
{
	prom_family(p, "ebb_instances", "gauge", "Live instances (not terminated) by state, offer and market.");
	for (int i = 0; i < x->noffers; i++) {
		const struct snap_offer *r = &x->offers[i];
		if (!r->configured && !r->live)
			continue;
		for (int st = INST_REQUESTED; st < INST_TERMINATED; st++)
			prom_sample(p, "", (double)r->inst[st], "state", instance_state_name((enum instance_state)st),
				    "offer", r->offer, "market", market_name(r->market), NULL);
	}
	prom_family(p, "ebb_spend_dollars_per_second", "gauge",
		    "USD per second of the live instances, each at its offer's price on its market.");
	prom_sample(p, "", x->spend_per_hour / 3600.0, NULL);
	prom_family(p, "ebb_reclaims_total", "counter", "Instances ended by a spot reclaim, by offer.");
	for (int i = 0; i < x->noffers; i++) {
		const struct snap_offer *r = &x->offers[i];
		int64_t n = 0;
		int shown = 0, j;
		for (j = 0; j < i && strcmp(x->offers[j].offer, r->offer) != 0; j++)
			;
		if (j < i)
			continue; /* its offer was written with an earlier market */
		for (j = i; j < x->noffers; j++) {
			if (strcmp(x->offers[j].offer, r->offer) == 0) {
				n += x->offers[j].reclaims;
				shown |= x->offers[j].configured || x->offers[j].has_stats;
			}
		}
		if (shown)
			prom_sample(p, "", (double)n, "offer", r->offer, NULL);
	}
	prom_family(p, "ebb_launch_failures_total", "counter", "Launches the provider refused, by offer and market.");
	for (int i = 0; i < x->noffers; i++) {
		const struct snap_offer *r = &x->offers[i];
		if (r->configured || r->has_stats)
			prom_sample(p, "", (double)r->launch_failures, "offer", r->offer, "market",
				    market_name(r->market), NULL);
	}
}

static void write_cost(struct prom *p, const struct snapshot *x)
{
	const struct snap_money *all = &x->money[SNAP_ALL];

	prom_family(p, "ebb_cost_dollars_total", "counter",
		    "USD of instance time billed so far, by the ledger; open segments up to now.");
	prom_sample(p, "", all->cost, NULL);
	prom_family(p, "ebb_items_done_total", "counter",
		    "Items done by job runs that succeeded on instances of the fleet.");
	prom_sample(p, "", (double)all->items, NULL);
	if (all->items > 0) {
		prom_family(p, "ebb_cost_per_item_dollars", "gauge",
			    "ebb_cost_dollars_total over ebb_items_done_total: idle and boot time included.");
		prom_sample(p, "", all->cost / (double)all->items, NULL);
	}
	prom_family(p, "ebb_busy_gpu_seconds_total", "counter", "GPU seconds of instances running a job.");
	prom_sample(p, "", all->busy_gpu_ms / 1000.0, NULL);
	prom_family(p, "ebb_idle_gpu_seconds_total", "counter",
		    "GPU seconds billed with no job: booting, idle, and billed past termination.");
	prom_sample(p, "", all->idle_gpu_ms / 1000.0, NULL);
}

static void write_serve(struct prom *p, const struct serve_metrics *m)
{
	char code[8];

	prom_family(p, "ebb_lease_latency_seconds", "histogram",
		    "Time from a job becoming ready to its lease, per lease granted since serve started.");
	prom_histogram(p, &m->lease_latency);
	prom_family(p, "ebb_http_requests_total", "counter",
		    "HTTP requests answered since serve started, by status code.");
	for (int i = 100; i < 600; i++) {
		if (m->http_requests[i]) {
			snprintf(code, sizeof code, "%d", i);
			prom_sample(p, "", (double)m->http_requests[i], "code", code, NULL);
		}
	}
}

static void write_alerts(struct prom *p, const struct api *a)
{
	prom_family(p, "ebb_alerts_firing", "gauge", "Alerts firing now, by rule (docs/ALERTS.md); rules switched off have no sample.");
	for (int r = 0; r < ALERT_NRULES; r++) {
		if (alert_rule_on(&a->cfg->alerts, (enum alert_rule)r))
			prom_sample(p, "", (double)alerts_firing(a->alerts, (enum alert_rule)r), "alertname",
				    alert_rules[r].name, NULL);
	}
}

int api_metrics(struct api_call *c)
{
	struct snapshot *x = malloc(sizeof *x);
	struct prom p = {0};
	struct ebb_error err;
	char *text;

	if (!x) {
		error_set(&err, 500, "internal", NULL, "out of memory");
		return api_fail(c, &err);
	}
	if (snapshot_take(x, &c->api->snap) != 0) {
		free(x);
		return api_store_failed(c);
	}
	write_queue(&p, x);
	write_fleet(&p, x);
	write_cost(&p, x);
	write_serve(&p, c->api->metrics);
	write_alerts(&p, c->api);
	free(x);
	if (!(text = prom_finish(&p))) {
		error_set(&err, 500, "internal", NULL, "out of memory");
		return api_fail(c, &err);
	}
	request_reply_text(c->req, 200, PROM_CONTENT_TYPE, text);
	return 0;
}
