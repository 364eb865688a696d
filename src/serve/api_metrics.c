/* GET /metrics: the queue, the fleet, the ledger and serve's own counters
 * in the Prometheus text format (docs/METRICS.md lists them).
 *
 * A scrape writes nothing and reads, inside the request's savepoint (one
 * consistent view): the job counts table, the queued jobs grouped by
 * class (the scaler's demand query), the live instances, the offer
 * statistics and the ledger's segments. All but the last are small or
 * bounded by the queue's limit; the ledger is a scan of every segment
 * ever recorded, which grows with the fleet's history. */
#include <stdlib.h>
#include <string.h>

#include "serve/api.h"
#include "common/log.h"
#include "serve/metrics.h"

#define MAX_LANES 64
#define MAX_ROWS 1024

struct lane_row {
	char name[CONF_NAME_MAX + 1];
	int64_t n[JOB_NSTATES];
	int64_t oldest_ms; /* created_at of its oldest queued job; 0: none */
};

/* One offer on one market: its live instances by state and its stats. */
struct offer_row {
	char offer[CONF_NAME_MAX + 1];
	enum market market;
	int configured; /* sold on this market by a configured offer */
	int has_stats;
	int64_t live;
	int64_t inst[INST_NSTATES];
	int64_t reclaims, launch_failures;
};

struct scrape {
	const struct api *api;
	int64_t now_ms;
	int64_t states[JOB_NSTATES];
	struct lane_row lanes[MAX_LANES];
	int nlanes;
	struct offer_row rows[MAX_ROWS];
	int nrows;
	int dropped; /* rows beyond MAX_ROWS */
	double spend_per_hour, cost;
	double busy_gpu_ms, idle_gpu_ms;
	int64_t items;
};

static struct lane_row *lane(struct scrape *x, const char *name)
{
	for (int i = 0; i < x->nlanes; i++) {
		if (strcmp(x->lanes[i].name, name) == 0)
			return &x->lanes[i];
	}
	if (x->nlanes == MAX_LANES) {
		x->dropped++;
		return NULL;
	}
	snprintf(x->lanes[x->nlanes].name, sizeof x->lanes[0].name, "%s", name);
	return &x->lanes[x->nlanes++];
}

static struct offer_row *row(struct scrape *x, const char *offer, enum market m)
{
	for (int i = 0; i < x->nrows; i++) {
		if (x->rows[i].market == m && strcmp(x->rows[i].offer, offer) == 0)
			return &x->rows[i];
	}
	if (x->nrows == MAX_ROWS) {
		x->dropped++;
		return NULL;
	}
	snprintf(x->rows[x->nrows].offer, sizeof x->rows[0].offer, "%s", offer);
	x->rows[x->nrows].market = m;
	return &x->rows[x->nrows++];
}

/* USD per hour of one instance of the offer on market m; 0 when unknown. */
static double price(const struct api *a, const char *offer, enum market m)
{
	return ledger_usd_per_hour(a->fleet->ledger, offer, m);
}

static int add_count(void *arg, const struct job_count *c)
{
	struct scrape *x = arg;
	struct lane_row *l = lane(x, c->lane);

	x->states[c->state] += c->n;
	if (l)
		l->n[c->state] += c->n;
	return 0;
}

static int add_demand(void *arg, const struct demand_row *d)
{
	struct scrape *x = arg;
	struct lane_row *l = lane(x, d->lane);

	if (l && d->jobs > 0 && (l->oldest_ms == 0 || d->oldest_ms < l->oldest_ms))
		l->oldest_ms = d->oldest_ms;
	return 0;
}

static int add_instance(void *arg, const struct instance *inst)
{
	struct scrape *x = arg;
	struct offer_row *r;

	if (inst->state == INST_TERMINATED)
		return 0;
	x->spend_per_hour += price(x->api, inst->offer, inst->market);
	if ((r = row(x, inst->offer, inst->market))) {
		r->inst[inst->state]++;
		r->live++;
	}
	return 0;
}

static int add_stat(void *arg, const struct offer_stat *st)
{
	struct scrape *x = arg;
	struct offer_row *r = row(x, st->offer, st->market);

	x->items += st->items;
	if (r) {
		r->has_stats = 1;
		r->reclaims += st->reclaims;
		r->launch_failures += st->launch_failures;
	}
	return 0;
}

/* A segment still open is costed up to now at its offer's price, as
 * closing it now would; the billing segment of a terminated instance may
 * end after now and counts in full, as it is billed. */
static int add_segment(void *arg, const struct ledger_row *lr)
{
	struct scrape *x = arg;
	const struct segment *g = lr->seg;
	int64_t end = g->end_ms ? g->end_ms : x->now_ms;
	double ms = end > g->start_ms ? (double)(end - g->start_ms) : 0;
	double gpu_ms = ms * (lr->gpus > 0 ? lr->gpus : 1);

	x->cost += g->end_ms ? g->cost : ms * price(x->api, lr->offer, lr->market) / 3600000.0;
	if (strcmp(g->kind, "job") == 0)
		x->busy_gpu_ms += gpu_ms;
	else
		x->idle_gpu_ms += gpu_ms;
	return 0;
}

static int gather(struct scrape *x)
{
	const struct api *a = x->api;
	struct store *st = a->store;

	for (int i = 0; i < a->cfg->nlanes; i++)
		lane(x, a->cfg->lane_names[i]);
	/* With a provider, every offer it may launch has its series from the
	 * start, so a graph shows 0 rather than nothing. */
	for (int k = 0; a->provider && k < a->noffers; k++) {
		for (int m = 0; m < MARKET_COUNT; m++) {
			struct offer_row *r;
			if (a->offers[k].price[m] >= 0 && (r = row(x, a->offers[k].name, (enum market)m)))
				r->configured = 1;
		}
	}
	if (store_job_counts(st, add_count, x) != 0 || store_demand(st, add_demand, x) != 0 ||
	    store_instance_list(st, 0, add_instance, x) != 0 ||
	    store_offer_stats(st, add_stat, x) != 0 || store_ledger(st, 0, add_segment, x) != 0)
		return -1;
	if (x->dropped)
		log_warn("metrics: series left out, too many lanes or offers", "dropped=%d", x->dropped);
	return 0;
}

static void write_queue(struct prom *p, const struct scrape *x)
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

static void write_fleet(struct prom *p, const struct scrape *x)
{
	prom_family(p, "ebb_instances", "gauge", "Live instances (not terminated) by state, offer and market.");
	for (int i = 0; i < x->nrows; i++) {
		const struct offer_row *r = &x->rows[i];
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
	for (int i = 0; i < x->nrows; i++) {
		const struct offer_row *r = &x->rows[i];
		int64_t n = 0;
		int shown = 0, j;
		for (j = 0; j < i && strcmp(x->rows[j].offer, r->offer) != 0; j++)
			;
		if (j < i)
			continue; /* its offer was written with an earlier market */
		for (j = i; j < x->nrows; j++) {
			if (strcmp(x->rows[j].offer, r->offer) == 0) {
				n += x->rows[j].reclaims;
				shown |= x->rows[j].configured || x->rows[j].has_stats;
			}
		}
		if (shown)
			prom_sample(p, "", (double)n, "offer", r->offer, NULL);
	}
	prom_family(p, "ebb_launch_failures_total", "counter", "Launches the provider refused, by offer and market.");
	for (int i = 0; i < x->nrows; i++) {
		const struct offer_row *r = &x->rows[i];
		if (r->configured || r->has_stats)
			prom_sample(p, "", (double)r->launch_failures, "offer", r->offer, "market",
				    market_name(r->market), NULL);
	}
}

static void write_cost(struct prom *p, const struct scrape *x)
{
	prom_family(p, "ebb_cost_dollars_total", "counter",
		    "USD of instance time billed so far, by the ledger; open segments up to now.");
	prom_sample(p, "", x->cost, NULL);
	prom_family(p, "ebb_items_done_total", "counter",
		    "Items done by job runs that succeeded on instances of the fleet.");
	prom_sample(p, "", (double)x->items, NULL);
	if (x->items > 0) {
		prom_family(p, "ebb_cost_per_item_dollars", "gauge",
			    "ebb_cost_dollars_total over ebb_items_done_total: idle and boot time included.");
		prom_sample(p, "", x->cost / (double)x->items, NULL);
	}
	prom_family(p, "ebb_busy_gpu_seconds_total", "counter", "GPU seconds of instances running a job.");
	prom_sample(p, "", x->busy_gpu_ms / 1000.0, NULL);
	prom_family(p, "ebb_idle_gpu_seconds_total", "counter",
		    "GPU seconds billed with no job: booting, idle, and billed past termination.");
	prom_sample(p, "", x->idle_gpu_ms / 1000.0, NULL);
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

int api_metrics(struct api_call *c)
{
	struct scrape *x = calloc(1, sizeof *x);
	struct prom p = {0};
	struct ebb_error err;
	char *text;

	if (!x) {
		error_set(&err, 500, "internal", NULL, "out of memory");
		return api_fail(c, &err);
	}
	x->api = c->api;
	x->now_ms = clock_now(c->api->clock);
	if (gather(x) != 0) {
		free(x);
		return api_store_failed(c);
	}
	write_queue(&p, x);
	write_fleet(&p, x);
	write_cost(&p, x);
	write_serve(&p, c->api->metrics);
	free(x);
	if (!(text = prom_finish(&p))) {
		error_set(&err, 500, "internal", NULL, "out of memory");
		return api_fail(c, &err);
	}
	request_reply_text(c->req, 200, PROM_CONTENT_TYPE, text);
	return 0;
}
