/* GET /metrics: the queue, the fleet, the ledger and serve's own counters
 * in the Prometheus text format (docs/METRICS.md lists them), written
 * from a snapshot (snapshot.h: one consistent view, whose cost does not
 * grow with history). */
#include <stdlib.h>
#include <string.h>

#include "serve/alerts.h"
#include "common/mem.h"
#include "serve/api_internal.h"
#include "serve/metrics.h"
#include "serve/queue.h"
#include "serve/snapshot.h"
#include "serve/team_state.h"

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
	prom_family(p, "ebb_lane_wait_target_seconds", "gauge",
		    "The lane's wait target ([lane.NAME] wait_target): the scaler launches when queued work would miss it.");
	for (int i = 0; i < x->nlanes; i++)
		prom_sample(p, "", (double)x->lanes[i].wait_target_ms / 1000.0, "lane", x->lanes[i].name, NULL);
	prom_family(p, "ebb_jobs_dead_lettered_total", "counter",
		    "Jobs dead-lettered (their last attempt failed), by lane: dead jobs stay dead.");
	for (int i = 0; i < x->nlanes; i++)
		prom_sample(p, "", (double)x->lanes[i].n[JOB_DEAD], "lane", x->lanes[i].name, NULL);
	prom_family(p, "ebb_jobs", "gauge", "Jobs in the store in each state (a gauge: jobs move between states).");
	for (int i = 0; i < JOB_NSTATES; i++)
		prom_sample(p, "", (double)x->states[i], "state", job_state_name((enum job_state)i), NULL);
}

static double launches(const struct snapshot *x, const struct snap_offer *r) { (void)x; return (double)r->launches; }
static double launch_failures(const struct snapshot *x, const struct snap_offer *r) { (void)x; return (double)r->launch_failures; }
static double lost(const struct snapshot *x, const struct snap_offer *r) { (void)x; return (double)r->lost; }

static double seconds_since(const struct snapshot *x, int64_t t)
{
	return t && x->now_ms > t ? (double)(x->now_ms - t) / 1000.0 : 0;
}

static double failing(const struct snapshot *x, const struct snap_offer *r) { return seconds_since(x, r->failing_since_ms); }
static double idle_longest(const struct snapshot *x, const struct snap_offer *r) { return seconds_since(x, r->idle_since_ms); }

/* The families of one sample per offer and market: for each sold by an
 * offer the provider may launch, or seen in the statistics or the fleet. */
static void write_per_market(struct prom *p, const struct snapshot *x)
{
	static const struct {
		const char *name, *type, *help;
		double (*value)(const struct snapshot *, const struct snap_offer *);
	} families[] = {
		{"ebb_launches_total", "counter", "Launches asked of the provider, by offer and market.", launches},
		{"ebb_launch_failures_total", "counter", "Launches the provider refused, by offer and market.", launch_failures},
		{"ebb_launch_failing_seconds", "gauge",
		 "Time since the first of the launches failing now, by offer and market; 0 while launches work.", failing},
		{"ebb_workers_lost_total", "counter",
		 "Workers lost: instances gone while they booted or ran a job, workers that left orphaned.", lost},
		{"ebb_instance_idle_longest_seconds", "gauge",
		 "Time the instance idle the longest has been idle, by offer and market; 0 when none is.", idle_longest},
	};

	for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
		prom_family(p, families[f].name, families[f].type, families[f].help);
		for (int i = 0; i < x->noffers; i++) {
			const struct snap_offer *r = &x->offers[i];
			if (r->configured || r->has_stats || r->live)
				prom_sample(p, "", families[f].value(x, r), "offer", r->offer, "market",
					    market_name(r->market), NULL);
		}
	}
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
	write_per_market(p, x);
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

/* What each team's jobs cost: the ledger's segments of their runs (idle
 * and boot time are no team's), items done, jobs by state. */
static void write_teams(struct prom *p, const struct snapshot *x)
{
	prom_family(p, "ebb_team_cost_dollars_total", "counter", "USD of instance time running the team's jobs.");
	for (int i = 0; i < x->nteams; i++)
		prom_sample(p, "", x->teams[i].money[SNAP_ALL].cost, "team", x->teams[i].name, NULL);
	prom_family(p, "ebb_team_items_done_total", "counter", "Items done by the team's job runs that succeeded on the fleet.");
	for (int i = 0; i < x->nteams; i++)
		prom_sample(p, "", (double)x->teams[i].money[SNAP_ALL].items, "team", x->teams[i].name, NULL);
	prom_family(p, "ebb_team_jobs", "gauge", "The team's jobs in each state.");
	for (int i = 0; i < x->nteams; i++) {
		for (int st = 0; st < JOB_NSTATES; st++)
			prom_sample(p, "", (double)x->teams[i].jobs[st], "team", x->teams[i].name, "state",
				    job_state_name((enum job_state)st), NULL);
	}
}

static void write_serve(struct prom *p, const struct api *a)
{
	const struct serve_metrics *m = a->metrics;
	char code[8];

	prom_family(p, "ebb_serve_leader", "gauge",
		    "1 when this serve runs the scaler: alone, or the leader of several on one database (docs/HA.md).");
	prom_sample(p, "", a->leads, NULL);

	prom_family(p, "ebb_lease_latency_seconds", "histogram",
		    "Time from a job becoming ready to its lease, per lease granted since serve started.");
	prom_histogram(p, &m->lease_latency);
	prom_family(p, "ebb_scaler_run_seconds", "histogram",
		    "Time serve's thread spent in each scaler run (the view, the plan and its actions), since serve started.");
	prom_histogram(p, &m->scaler_run);
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
	prom_family(p, "ebb_store_errors_total", "counter", "Calls to the store that failed since serve started.");
	prom_sample(p, "", (double)store_errors(a->store), NULL);
	prom_family(p, "ebb_alerts_firing", "gauge", "Alerts firing now, by rule (docs/ALERTS.md); rules switched off have no sample.");
	alerts_refresh(a->alerts);
	for (int r = 0; r < ALERT_NRULES; r++) {
		if (alert_rule_on(&a->cfg->alerts, (enum alert_rule)r))
			prom_sample(p, "", (double)alerts_firing(a->alerts, (enum alert_rule)r), "alertname",
				    alert_rules[r].name, NULL);
	}
}

/* With [team.NAME] sections: each team's quota, what it uses and may use
 * now, and its spend this month (team_state.h). */
static int write_team_shares(struct prom *p, struct api *a)
{
	struct team_state ts;
	int rc = team_state_read(&ts, a->store, a->cfg, clock_now(a->clock));

	if (rc == 0 && ts.n > 0) {
		prom_family(p, "ebb_team_quota_gpus", "gauge", "GPUs the team is guaranteed when it has work ([team.NAME] quota_gpus).");
		for (int t = 0; t < ts.n; t++)
			prom_sample(p, "", (double)ts.teams[t].quota_gpus, "team", ts.teams[t].name, NULL);
		prom_family(p, "ebb_team_gpus_in_use", "gauge", "GPUs the team's leased jobs ask for.");
		for (int t = 0; t < ts.n; t++)
			prom_sample(p, "", (double)ts.shares[t].used_gpus, "team", ts.teams[t].name, NULL);
		prom_family(p, "ebb_team_gpus_allowed", "gauge", "GPUs the team may use now: its quota as far as it has work, and what it may borrow.");
		for (int t = 0; t < ts.n; t++)
			prom_sample(p, "", (double)ts.shares[t].allowed_gpus, "team", ts.teams[t].name, NULL);
		prom_family(p, "ebb_team_month_spend_dollars", "gauge", "The team's chargeback this calendar month (UTC): its jobs' runs and the time no job used of the instances launched for its work.");
		for (int t = 0; t < ts.n; t++)
			prom_sample(p, "", ts.spend[t], "team", ts.teams[t].name, NULL);
		prom_family(p, "ebb_team_monthly_budget_dollars", "gauge", "The team's monthly budget in force ([team.NAME] monthly_budget, or as an admin set it since), for the teams that have one.");
		for (int t = 0; t < ts.n; t++) {
			if (ts.teams[t].monthly_budget >= 0)
				prom_sample(p, "", ts.teams[t].monthly_budget, "team", ts.teams[t].name, NULL);
		}
		prom_family(p, "ebb_team_preemptions_total", "counter", "The team's jobs preempted for another team owed their GPUs, since serve started.");
		for (int t = 0; t < ts.n; t++) {
			const struct preempts *pr = &a->queue->preempts;
			int64_t n = 0;
			for (int k = 0; k < pr->nteams; k++)
				n += strcmp(pr->count[k].team, ts.teams[t].name) == 0 ? pr->count[k].n : 0;
			prom_sample(p, "", (double)n, "team", ts.teams[t].name, NULL);
		}
	}
	team_state_free(&ts);
	return rc;
}

/* The resident handlers the workers keep, by type of serve's config
 * with a handler: how many, starting and ready, and the longest setup
 * measured among them (0 while none is ready). */
static void write_handlers(struct prom *p, const struct api *a)
{
	const struct config *cfg = a->cfg;

	prom_family(p, "ebb_handlers", "gauge", "Resident handlers the workers keep, by type and state.");
	for (size_t t = 0; t < cfg->ntypes; t++) {
		int n[2] = {0, 0};
		if (!cfg->types[t].handler[0])
			continue;
		for (int i = 0; i < a->workers->n; i++)
			for (int k = 0; k < a->workers->at[i].nhandlers; k++)
				if (strcmp(a->workers->at[i].handlers[k].type, cfg->types[t].name) == 0)
					n[a->workers->at[i].handlers[k].ready]++;
		prom_sample(p, "", n[0], "type", cfg->types[t].name, "state", "starting", NULL);
		prom_sample(p, "", n[1], "type", cfg->types[t].name, "state", "ready", NULL);
	}
	prom_family(p, "ebb_handler_setup_seconds", "gauge",
		    "The longest setup (start to ready) of the resident handlers of the type the workers keep.");
	for (size_t t = 0; t < cfg->ntypes; t++) {
		int64_t longest = 0;
		if (!cfg->types[t].handler[0])
			continue;
		for (int i = 0; i < a->workers->n; i++)
			for (int k = 0; k < a->workers->at[i].nhandlers; k++) {
				const struct handler_seen *h = &a->workers->at[i].handlers[k];
				if (strcmp(h->type, cfg->types[t].name) == 0 && h->setup_ms > longest)
					longest = h->setup_ms;
			}
		prom_sample(p, "", (double)longest / 1000.0, "type", cfg->types[t].name, NULL);
	}
}

int api_metrics(struct api_call *c)
{
	struct snapshot *x = mem_alloc(sizeof *x);
	struct prom p = {0};
	struct ebb_error err;
	char *text;

	if (!x) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	if (snapshot_take(x, &c->api->snap) != 0) {
		free(x);
		return api_store_failed(c);
	}
	write_queue(&p, x);
	write_fleet(&p, x);
	write_handlers(&p, c->api);
	write_cost(&p, x);
	write_teams(&p, x);
	if (write_team_shares(&p, c->api) != 0) {
		free(x);
		free(prom_finish(&p));
		return api_store_failed(c);
	}
	write_serve(&p, c->api);
	write_alerts(&p, c->api);
	free(x);
	if (!(text = prom_finish(&p))) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	request_reply_text(c->req, 200, PROM_CONTENT_TYPE, text);
	return 0;
}
