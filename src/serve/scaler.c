/* The scaler loop of serve (see scaler.h, plan.h, docs/SCALING.md). */
#include "serve/scaler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/fleet.h"
#include "serve/ledger.h"
#include "common/log.h"
#include "policy/plan.h"
#include "policy/settings.h"

#define HISTORY 1000 /* submissions and finished jobs the estimates look at */

struct scaler {
	struct server *srv;
	struct provider *provider;
	struct event *timer;
	int64_t last_run_ms;
	int64_t next_ms; /* the run that is scheduled, 0 if none */
	int running;
	int spot_failed; /* a spot launch failed in this run */
	struct plan_settings settings; /* the config's, read once */
	/* What the last run found, for the workers' lease replies. */
	int64_t idle_timeout_ms;
	int warm_floor;
	struct offer offers[64]; /* in force: the config's, with what was measured */
	int noffers;
	/* Speed and boot samples per offer, both markets pooled: they are
	 * the machine's, whatever it is billed at. */
	struct {
		double speed_sum;
		int64_t speed_n, boots, boot_ms;
	} pooled[64];
};

static void on_timer(evutil_socket_t fd, short what, void *arg);

static int adopt(void *arg, const struct instance *inst)
{
	struct scaler *sc = arg;

	/* One that cannot be adopted is marked gone by the next reconcile. */
	if (inst->provider_ref[0])
		sc->provider->ops->adopt(sc->provider, inst);
	return 0;
}

struct scaler *scaler_new(struct server *s, struct provider *p)
{
	struct scaler *sc = calloc(1, sizeof *sc);

	sc->srv = s;
	sc->provider = p;
	plan_settings_from_config(s->cfg, &sc->settings);
	sc->timer = evtimer_new(s->base, on_timer, sc);
	memcpy(sc->offers, s->offers, sizeof s->offers);
	sc->noffers = s->noffers;
	s->store->ops->instance_list(s->store, 0, adopt, sc);
	return sc;
}

void scaler_free(struct scaler *sc)
{
	if (!sc)
		return;
	event_free(sc->timer);
	free(sc);
}

const struct offer *scaler_offers(const struct scaler *sc, int *n)
{
	*n = sc->noffers;
	return sc->offers;
}

static void schedule(struct scaler *sc, int64_t at)
{
	int64_t now = clock_now(&sc->srv->clock), wait;
	struct timeval tv;

	if (sc->next_ms && sc->next_ms <= at)
		return;
	sc->next_ms = at;
	wait = at > now ? at - now : 0;
	tv.tv_sec = wait / 1000;
	tv.tv_usec = (wait % 1000) * 1000;
	evtimer_add(sc->timer, &tv);
}

void scaler_poke(struct scaler *sc)
{
	if (!sc || sc->running)
		return;
	schedule(sc, sc->last_run_ms + sc->settings.interval_ms);
}

struct gaps {
	int64_t prev, v[HISTORY];
	size_t n;
};

static int add_gap(void *arg, int64_t ms)
{
	struct gaps *g = arg;

	/* Newest first: each gap is the previous (later) time minus this one. */
	if (g->prev && g->n < HISTORY)
		g->v[g->n++] = g->prev - ms;
	g->prev = ms;
	return 0;
}

int64_t scaler_idle_timeout(struct scaler *sc, char *why, size_t why_size)
{
	struct gaps g = {0};

	if (sc->settings.idle_timeout.ms == CONF_AUTO)
		sc->srv->store->ops->recent_submits(sc->srv->store, HISTORY + 1, add_gap, &g);
	return plan_idle_timeout_ms(&sc->settings, g.v, g.n, why, why_size);
}

/* Median run time per type of recently finished jobs. */
struct medians {
	char types[32][CONF_NAME_MAX + 1];
	int64_t runs[32][64];
	int counts[32];
	char sorted[32]; /* sorted once, at the first estimate asked of the type */
	int ntypes;
};

static int add_duration(void *arg, const char *type, int64_t run_ms)
{
	struct medians *m = arg;
	int t = 0;

	while (t < m->ntypes && strcmp(m->types[t], type) != 0)
		t++;
	if (t == m->ntypes) {
		if (m->ntypes == 32)
			return 0;
		snprintf(m->types[m->ntypes++], CONF_NAME_MAX + 1, "%s", type);
	}
	if (m->counts[t] < 64)
		m->runs[t][m->counts[t]++] = run_ms;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double estimate_s(struct medians *m, const char *type, const struct plan_settings *st)
{
	for (int t = 0; t < m->ntypes; t++) {
		if (strcmp(m->types[t], type) == 0) {
			if (!m->sorted[t]) {
				qsort(m->runs[t], (size_t)m->counts[t], sizeof(int64_t), by_value);
				m->sorted[t] = 1;
			}
			return (double)m->runs[t][m->counts[t] / 2] / 1000.0;
		}
	}
	return (double)st->default_est_ms / 1000.0;
}

struct view_builder {
	struct scaler *sc;
	struct medians med;
	struct plan_class *classes;
	int nclasses;
	struct plan_instance *fleet;
	struct instance *records;
	int nfleet;
};

/* The view's class of (GPUs, VRAM, lane), added when new. */
static struct plan_class *class_for(struct view_builder *b, int gpus, int min_vram_gb, const char *lane,
				    int64_t oldest_ms)
{
	const struct config *cfg = b->sc->srv->cfg;
	int rank = config_lane_rank(cfg, lane);
	struct plan_class *c;

	for (int k = 0; k < b->nclasses; k++) {
		c = &b->classes[k];
		if (c->gpus == gpus && c->min_vram_gb == min_vram_gb && c->lane_rank == rank)
			return c;
	}
	b->classes = realloc(b->classes, (size_t)(b->nclasses + 1) * sizeof *b->classes);
	c = &b->classes[b->nclasses++];
	memset(c, 0, sizeof *c);
	c->lane = rank >= 0 ? cfg->lane_names[rank] : "?";
	c->gpus = gpus;
	c->min_vram_gb = min_vram_gb;
	c->lane_rank = rank;
	c->oldest_ms = oldest_ms;
	c->wait_target_ms = plan_wait_target_ms(&b->sc->settings, c->lane);
	return c;
}

static int add_demand(void *arg, const struct demand_row *r)
{
	struct view_builder *b = arg;
	struct plan_class *c = class_for(b, r->gpus, r->min_vram_gb, r->lane, r->oldest_ms);

	c->jobs += r->jobs;
	c->items += r->items;
	c->work_s += (double)r->est_s + (double)r->jobs_without_est * estimate_s(&b->med, r->type, &b->sc->settings);
	if (r->oldest_ms < c->oldest_ms)
		c->oldest_ms = r->oldest_ms;
	return 0;
}

/* Arrivals count with weight exp(-age / arrival_window), as the
 * simulator's running sums do; the rows are read back from the newest to
 * ARRIVALS_HORIZON windows ago (weights under 1%), at most ARRIVALS_MAX
 * of them. */
#define ARRIVALS_HORIZON 5
#define ARRIVALS_MAX 10000

struct arrivals {
	struct view_builder *b;
	int64_t now_ms, oldest_ms;
	double window_s;
	int n;
};

static int add_arrival(void *arg, const struct arrival_row *r)
{
	struct arrivals *a = arg;
	struct plan_class *c = class_for(a->b, r->gpus, r->min_vram_gb, r->lane, a->now_ms);
	double w = exp(-(double)(a->now_ms - r->created_ms) / 1000.0 / a->window_s) / a->window_s;
	double est = r->est_s ? (double)r->est_s : estimate_s(&a->b->med, r->type, &a->b->sc->settings);

	c->arrival_jobs_per_s += w;
	c->arrival_work_per_s += w * est;
	a->oldest_ms = r->created_ms;
	a->n++;
	return 0;
}

static void add_arrivals(struct view_builder *b, int64_t now_ms, int64_t window_ms)
{
	struct arrivals a = {.b = b, .now_ms = now_ms, .window_s = (double)window_ms / 1000.0};
	struct server *s = b->sc->srv;

	if (window_ms <= 0)
		return;
	s->store->ops->arrivals(s->store, now_ms - ARRIVALS_HORIZON * window_ms, ARRIVALS_MAX, add_arrival, &a);
	/* A stream too fast for the rows read: they cover only the last span
	 * seconds, whose weights add up to 1 - exp(-span / window) of a steady
	 * rate's; scaled up to the whole. */
	if (a.n == ARRIVALS_MAX) {
		double covered = 1 - exp(-(double)(now_ms - a.oldest_ms) / (double)window_ms);
		for (int k = 0; covered > 0 && k < b->nclasses; k++) {
			b->classes[k].arrival_jobs_per_s /= covered;
			b->classes[k].arrival_work_per_s /= covered;
		}
	}
}

static int add_instance(void *arg, const struct instance *inst)
{
	struct view_builder *b = arg;
	struct server *s = b->sc->srv;
	struct plan_instance *p;
	int offer = offer_index(b->sc->offers, b->sc->noffers, inst->offer);
	struct job job;

	if (offer < 0)
		offer = 0; /* its offer left the config: still counted against the limits */
	b->fleet = realloc(b->fleet, (size_t)(b->nfleet + 1) * sizeof *b->fleet);
	b->records = realloc(b->records, (size_t)(b->nfleet + 1) * sizeof *b->records);
	b->records[b->nfleet] = *inst;
	p = &b->fleet[b->nfleet++];
	memset(p, 0, sizeof *p);
	p->id = inst->id;
	p->offer = offer;
	p->market = inst->market;
	p->state = inst->state;
	p->running = inst->job_id != 0;
	p->launched_ms = inst->launched_ms;
	p->idle_since_ms = inst->idle_since_ms;
	if (inst->job_id && s->store->ops->job_get(s->store, inst->job_id, &job) == 0) {
		double est = job.est_s ? (double)job.est_s : estimate_s(&b->med, job.type, &b->sc->settings);
		p->busy_until_ms = job.started_ms + (int64_t)(est * 1000.0);
		job_free(&job);
	}
	return 0;
}

/* Instances the provider no longer has are gone; a job they ran gets its
 * lease expired now rather than at its timeout. */
struct alive {
	char refs[1024][64];
	int n;
};

static void add_alive(void *arg, const char *ref)
{
	struct alive *a = arg;

	if (a->n < 1024)
		snprintf(a->refs[a->n++], 64, "%s", ref);
}

static int is_alive(const struct alive *a, const char *ref)
{
	for (int k = 0; k < a->n; k++) {
		if (strcmp(a->refs[k], ref) == 0)
			return 1;
	}
	return 0;
}

static void reconcile(struct scaler *sc, struct view_builder *b)
{
	struct server *s = sc->srv;
	struct alive *a = calloc(1, sizeof *a);
	struct ebb_error err;

	sc->provider->ops->list(sc->provider, add_alive, a);
	for (int k = 0; k < b->nfleet; k++) {
		struct instance *inst = &b->records[k];
		if (inst->state == INST_TERMINATED || !inst->provider_ref[0] || is_alive(a, inst->provider_ref))
			continue;
		if (inst->job_id) {
			char worker[32];
			instance_worker_name(inst->id, worker, sizeof worker);
			queue_expire_lease(&s->queue, inst->job_id, worker);
		}
		fleet_set_state(s, inst, INST_TERMINATED,
				inst->reclaim_at_ms ? "gone: reclaimed (spot)"
				: inst->state == INST_IDLE ? "gone: the worker exited (idle)" : "gone: the provider lost it");
		b->fleet[k].state = INST_TERMINATED;
	}
	queue_process_due(&s->queue, &err);
	free(a);
}

/* Estimates replace the declared figures once there is evidence: speed
 * after 3 timed runs, boot after 3 boots; the reclaim rate blends the
 * declared one (as one hour of evidence) with the hours observed; a spot
 * market whose last launch failed for capacity rests for 10 minutes. */
#define MIN_SAMPLES SCALER_MIN_SAMPLES
#define SPOT_REST_MS (10 * 60 * 1000)

static int apply_stat(void *arg, const struct offer_stat *st)
{
	struct scaler *sc = arg;
	int64_t now = clock_now(&sc->srv->clock);

	int k = offer_index(sc->offers, sc->noffers, st->offer);
	struct offer *o;

	if (k < 0)
		return 0;
	o = &sc->offers[k];
	sc->pooled[k].speed_sum += st->speed_sum;
	sc->pooled[k].speed_n += st->speed_n;
	sc->pooled[k].boots += st->boots;
	sc->pooled[k].boot_ms += st->boot_ms;
	if (st->market == MARKET_SPOT) {
		double hours = (double)st->alive_ms / 3600000.0;
		o->reclaims_per_hour = ((double)st->reclaims + o->reclaims_per_hour) / (hours + 1.0);
		o->spot_failing = st->launch_failures > 0 && st->last_failure_ms >= st->last_launch_ms &&
				  now - st->last_failure_ms < SPOT_REST_MS;
	}
	return 0;
}

void scaler_estimates(struct scaler *sc)
{
	memcpy(sc->offers, sc->srv->offers, sizeof sc->offers);
	memset(sc->pooled, 0, sizeof sc->pooled);
	sc->srv->store->ops->offer_stats(sc->srv->store, apply_stat, sc);
	for (int k = 0; k < sc->noffers; k++) {
		if (sc->pooled[k].speed_n >= MIN_SAMPLES)
			sc->offers[k].speed = sc->pooled[k].speed_sum / (double)sc->pooled[k].speed_n;
		if (sc->pooled[k].boots >= MIN_SAMPLES)
			sc->offers[k].boot_ms = sc->pooled[k].boot_ms / sc->pooled[k].boots;
	}
}

static void record(struct scaler *sc, const struct action *a, const char *kind)
{
	struct server *s = sc->srv;
	struct decision d = {
		.at_ms = clock_now(&s->clock),
		.kind = kind,
		.offer = sc->offers[a->offer].name,
		.count = a->count,
		.instance = a->instance,
		.reason = a->reason,
	};
	char quoted[400];

	s->store->ops->decision_insert(s->store, &d);
	log_info("decision", "kind=%s reason=%s", kind, log_quote(quoted, sizeof quoted, a->reason));
}

static void do_launch(struct scaler *sc, const struct action *a)
{
	struct server *s = sc->srv;
	const struct offer *o = &sc->offers[a->offer];
	char err[300];

	record(sc, a, "launch");
	for (int n = 0; n < a->count; n++) {
		struct offer_stat stat = {.offer = o->name, .market = a->market};
		struct instance inst = {0};
		snprintf(inst.offer, sizeof inst.offer, "%s", o->name);
		inst.market = a->market;
		inst.state = INST_REQUESTED;
		inst.gpus = o->gpus;
		inst.vram_gb = o->vram_gb;
		inst.launched_ms = inst.updated_ms = clock_now(&s->clock);
		snprintf(inst.reason, sizeof inst.reason, "%s", a->reason);
		if (s->store->ops->instance_insert(s->store, &inst) != 0 ||
		    ledger_transition(s, &inst, INST_REQUESTED) != 0)
			return;
		stat.launches = 1;
		stat.last_launch_ms = inst.launched_ms;
		if (sc->provider->ops->launch(sc->provider, &inst, err, sizeof err) != 0) {
			char why[340];
			snprintf(why, sizeof why, "launch failed: %s", err);
			stat.launch_failures = 1;
			sc->spot_failed |= a->market == MARKET_SPOT;
			stat.last_failure_ms = inst.launched_ms;
			s->store->ops->offer_stat_add(s->store, &stat);
			fleet_set_state(s, &inst, INST_TERMINATED, why);
			continue;
		}
		s->store->ops->offer_stat_add(s->store, &stat);
		fleet_set_state(s, &inst, INST_BOOTING, "launched");
	}
}

static void carry_out(struct scaler *sc, struct view_builder *b, const struct action *a)
{
	struct server *s = sc->srv;

	if (a->kind == ACTION_LAUNCH) {
		do_launch(sc, a);
		return;
	}
	for (int k = 0; k < b->nfleet; k++) {
		struct instance *inst = &b->records[k];
		if (inst->id != a->instance)
			continue;
		if (a->kind == ACTION_DRAIN) {
			record(sc, a, "drain");
			fleet_set_state(s, inst, INST_DRAINING, a->reason);
		} else if (!inst->job_id) {
			/* The last line of defence: never stop an instance with a job. */
			record(sc, a, "terminate");
			sc->provider->ops->terminate(sc->provider, inst);
			fleet_set_state(s, inst, INST_TERMINATED, a->reason);
		}
	}
}

static void run(struct scaler *sc)
{
	struct server *s = sc->srv;
	struct view_builder b = {.sc = sc};
	struct plan_view view;
	struct plan_result *result = malloc(sizeof *result);
	char why[300];

	sc->running = 1;
	scaler_estimates(sc);
	sc->idle_timeout_ms = scaler_idle_timeout(sc, why, sizeof why);
	sc->warm_floor = warm_floor(&sc->settings.warm, clock_now(&s->clock));
	s->store->ops->recent_durations(s->store, HISTORY, add_duration, &b.med);
	s->store->ops->instance_list(s->store, 0, add_instance, &b);
	reconcile(sc, &b);
	s->store->ops->demand(s->store, add_demand, &b);
	add_arrivals(&b, clock_now(&s->clock), sc->settings.arrival_window_ms);
	view = (struct plan_view){
		.now_ms = clock_now(&s->clock),
		.settings = &sc->settings,
		.idle_timeout_ms = sc->idle_timeout_ms,
		.classes = b.classes,
		.nclasses = b.nclasses,
		.fleet = b.fleet,
		.nfleet = b.nfleet,
		.offers = sc->offers,
		.noffers = sc->noffers,
	};
	plan(&view, result);
	for (int k = 0; k < result->n; k++)
		carry_out(sc, &b, &result->actions[k]);
	sc->last_run_ms = view.now_ms;
	/* The work that wanted a failed spot instance still waits and nothing
	 * else may wake the scaler: plan again, now that the offer's spot
	 * market counts as failing (another offer, or on demand). */
	if (sc->spot_failed)
		schedule(sc, view.now_ms + sc->settings.interval_ms);
	sc->spot_failed = 0;
	if (result->next_ms)
		schedule(sc, result->next_ms);
	free(result);
	free(b.classes);
	free(b.fleet);
	free(b.records);
	sc->running = 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct scaler *sc = arg;
	struct server *s = sc->srv;

	(void)fd;
	(void)what;
	sc->next_ms = 0;
	if (server_begin_request(s) != 0)
		return;
	run(sc);
	server_end_request(s, 1);
	httpd_flush(s->httpd);
}

int64_t scaler_worker_idle_timeout(const struct scaler *sc)
{
	/* While a warm floor holds, the scaler alone decides which idle
	 * instance goes: a worker must not power itself off under it. */
	return sc->warm_floor > 0 ? 0 : sc->idle_timeout_ms;
}
