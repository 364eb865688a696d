/* The scaler loop of serve (see scaler.h, plan.h, docs/SCALING.md). */
#include "serve/scaler.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"
#include "policy/placeable.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "common/secret.h"
#include "serve/decide.h"
#include "serve/estimates.h"
#include "serve/outbox.h"
#include "serve/reconcile.h"

struct scaler {
	struct scaler_env env;
	struct plan_settings settings; /* the config's, read once */
	struct event *timer;
	struct outbox *outbox; /* the provider calls of a run, sent once it commits */
	int64_t last_run_ms;
	int64_t next_ms;  /* the run that is scheduled, 0 if none */
	int listing;      /* a run waits for the provider's list */
	int64_t listed_ms; /* when the last list was asked for; 0: never */
	int launched;     /* a launch came back while the list was under way */
	int64_t started_ms; /* when this serve started (reconcile.h) */
	uint64_t changes; /* store_changes() when the last run ended */
	/* What the last run found, for the workers' lease replies. */
	int64_t idle_timeout_ms;
	int warm_floor;
	struct offer offers[64]; /* in force: the config's, with what was measured */
	/* The classes of queued jobs that nothing could run at the last run,
	 * flagged by a decision once each: a restart with a config that lost
	 * their offer flags them at its first run. */
	struct stuck {
		char lane[CONF_NAME_MAX + 1];
		int gpus, min_vram_gb;
	} stuck[32];
	int nstuck;
};

static void schedule(struct scaler *sc, int64_t at)
{
	/* A run already set for earlier stands, unless its time has come
	 * while its timer waits: the clock jumped forward (the test clock, or
	 * the wall clock set), and it runs now. */
	if (sc->next_ms && sc->next_ms <= at) {
		if (sc->next_ms > clock_now(sc->env.clock))
			return;
		at = sc->next_ms;
	}
	sc->next_ms = at;
	timer_add_ms(sc->timer, at - clock_now(sc->env.clock));
}

void scaler_wake(struct scaler *sc)
{
	if (sc && !sc->listing)
		schedule(sc, sc->last_run_ms + sc->settings.interval_ms);
}

/* The batch's commit subscriber: a change the scaler did not make itself
 * wakes it. */
static void on_commit(void *arg, int changed)
{
	struct scaler *sc = arg;

	if (changed && store_changes(sc->env.store) != sc->changes)
		scaler_wake(sc);
}

int scaler_idle_timeouts(struct scaler *sc, const struct offer **offers, int *n, int64_t *out_ms,
			 int64_t *surplus_ms, char (*why)[PLAN_IDLE_WHY], char *error, size_t error_size)
{
	if (scaler_offers(sc, offers, n) != 0) {
		snprintf(error, error_size, "%s", store_error(sc->env.store));
		return -1;
	}
	int64_t setups[CONF_MAX_TYPES];

	decide_setups(sc->env.workers, &sc->settings, setups);
	return decide_idle_timeouts(sc->env.store, &sc->settings, setups, *offers, *n, out_ms, surplus_ms, why, error,
				    error_size);
}

int64_t scaler_worker_idle_timeout(const struct scaler *sc)
{
	/* While a warm floor holds, the scaler alone decides which idle
	 * instance goes: a worker must not power itself off under it. */
	return sc->warm_floor > 0 ? 0 : sc->idle_timeout_ms;
}

int scaler_offers(struct scaler *sc, const struct offer **out, int *n)
{
	int rc = estimates_in_force(sc->env.store, &sc->settings, sc->env.offers, sc->env.noffers,
				    clock_now(sc->env.clock), sc->offers);

	*out = sc->offers;
	*n = sc->env.noffers;
	return rc;
}

/* ---- the provider's answers, each in a batch of its own ---- */

/* A launch came back: the instance boots, or it is terminated with the
 * reason and its offer's failure counted. */
static int apply_launch(struct scaler *sc, int64_t instance, const struct launch_result *r)
{
	struct instance inst;
	struct offer_stat stat = {0};
	struct ebb_error err;
	char why[400];

	if (fleet_get(sc->env.fleet, instance, &inst, &err) != 0)
		return -1;
	stat.offer = inst.offer;
	stat.market = inst.market;
	if (r->ok) {
		stat.launched_ok = 1;
		if (store_offer_stat_add(sc->env.store, &stat) != 0)
			return -1;
		snprintf(inst.provider_ref, sizeof inst.provider_ref, "%s", r->ref);
		snprintf(inst.gpu_ids, sizeof inst.gpu_ids, "%s", r->gpu_ids);
		if (r->data[0] && store_instance_data_set(sc->env.store, instance, r->data) != 0)
			return -1;
		/* Its worker may have registered already, or a boot timeout
		 * ended it while the answer was under way. */
		if (inst.state != INST_REQUESTED)
			return store_instance_update(sc->env.store, &inst);
		return fleet_set_state(sc->env.fleet, &inst, INST_BOOTING, "launched");
	}
	stat.launch_failures = 1;
	stat.last_failure_ms = stat.failing_since_ms = inst.launched_ms;
	if (r->no_capacity) {
		stat.capacity_failures = 1;
		stat.last_capacity_ms = inst.launched_ms;
	} else if (!r->passing) {
		stat.broken_streak = 1;
		stat.last_broken_ms = clock_now(sc->env.clock);
	}
	snprintf(why, sizeof why, "launch failed: %s%s", r->no_capacity ? "capacity: " : "", r->error);
	log_warn("launch failed", "instance=%lld offer=%s market=%s", (long long)inst.id, inst.offer,
		 market_name(inst.market));
	/* The decisions tell the whole story: what was asked, and why it
	 * did not happen. */
	if (store_offer_stat_add(sc->env.store, &stat) != 0 ||
	    store_decision_insert(sc->env.store, &(struct decision){.at_ms = clock_now(sc->env.clock),
								     .kind = "launch_failed", .offer = inst.offer,
								     .count = 1, .instance = inst.id, .reason = why}) != 0)
		return -1;
	return inst.state == INST_TERMINATED ? 0 : fleet_set_state(sc->env.fleet, &inst, INST_TERMINATED, why);
}

static void on_launched(void *arg, int64_t instance, const struct launch_result *r)
{
	struct scaler *sc = arg;

	int ok = 0;

	sc->launched |= sc->listing;
	if (batch_begin(sc->env.batch) == 0) {
		ok = apply_launch(sc, instance, r) == 0;
		batch_end(sc->env.batch, ok);
	}
	if (!ok)
		log_error("launch answer lost: the store failed; the boot timeout ends the instance",
			  "instance=%lld error=\"%s\"", (long long)instance, store_error(sc->env.store));
	batch_flush(sc->env.batch);
}

static void on_terminated(void *arg, int64_t instance, int ok, const char *error)
{
	char quoted[400];

	(void)arg;
	if (!ok)
		log_error("terminate failed: the instance may still run and bill", "instance=%lld error=%s",
			  (long long)instance, log_quote(quoted, sizeof quoted, error));
}

/* ---- a run ---- */

static int record(struct scaler *sc, const struct decision_now *dn, const struct action *a, const char *kind)
{
	struct decision d = {
		.at_ms = clock_now(sc->env.clock),
		.kind = kind,
		.offer = dn->offers[a->offer].name,
		.count = a->count,
		.instance = a->instance,
		.reason = a->reason,
	};
	char quoted[400];

	log_info("decision", "kind=%s reason=%s", kind, log_quote(quoted, sizeof quoted, a->reason));
	return store_decision_insert(sc->env.store, &d);
}

/* The instance records are written, and committed, before the provider
 * is asked (outbox.h). */
static int launch(struct scaler *sc, const struct decision_now *dn, const struct action *a)
{
	const struct offer *o = &dn->offers[a->offer];

	if (record(sc, dn, a, "launch") != 0)
		return -1;
	for (int n = 0; n < a->count; n++) {
		struct instance inst = {0};
		snprintf(inst.offer, sizeof inst.offer, "%s", o->name);
		inst.market = a->market;
		inst.state = INST_REQUESTED;
		inst.gpus = o->gpus;
		inst.vram_gb = o->vram_gb;
		if (a->team >= 0)
			snprintf(inst.team, sizeof inst.team, "%s", dn->view.settings->teams[a->team].name);
		inst.launched_ms = inst.updated_ms = clock_now(sc->env.clock);
		/* Cut to the record's room, as the decision keeps it whole. */
		snprintf(inst.reason, sizeof inst.reason, "%.*s", (int)sizeof inst.reason - 1, a->reason);
		/* Its own worker token, when the API asks for tokens: valid for
		 * this instance's calls while it lives. */
		if (sc->env.cfg->ntokens > 0 && secret_token(inst.token, sizeof inst.token) != 0) {
			log_error("launch: no randomness for the worker's token", "offer=%s", o->name);
			return -1;
		}
		if (store_instance_insert(sc->env.store, &inst) != 0 ||
		    ledger_transition(sc->env.fleet->ledger, &inst, INST_REQUESTED) != 0 ||
		    store_offer_stat_add(sc->env.store, &(struct offer_stat){
			    .offer = o->name, .market = a->market, .launches = 1,
			    .last_launch_ms = inst.launched_ms}) != 0)
			return -1;
		if (outbox_launch(sc->outbox, &inst) != 0) {
			log_error("launch: out of memory", "offer=%s", o->name);
			return -1;
		}
	}
	return 0;
}

/* What the provider wanted back is read before the record moves on. */
static int terminate(struct scaler *sc, const struct decision_now *dn, struct instance *inst, const struct action *a)
{
	char data[PROVIDER_DATA_MAX + 1];
	int rc = store_instance_data(sc->env.store, inst->id, data, sizeof data);

	if (rc < 0 || record(sc, dn, a, "terminate") != 0 ||
	    fleet_set_state(sc->env.fleet, inst, INST_TERMINATED, a->reason) != 0)
		return -1;
	if (outbox_terminate(sc->outbox, inst, rc == 0 && data[0] ? data : NULL) != 0) {
		log_error("terminate: out of memory", "instance=%lld", (long long)inst->id);
		return -1;
	}
	return 0;
}

/* Is the job still leased with that token? A store error keeps it. */
static int still_leased(void *arg, int64_t id, int64_t token)
{
	struct job job;
	int rc = store_job_get(arg, id, &job), still;

	if (rc < 0)
		return 1;
	if (rc == STORE_NOT_FOUND)
		return 0;
	still = job.state == JOB_LEASED && job.lease_token == token;
	job_free(&job);
	return still;
}

/* The instance's job is asked to stop at its checkpoint (preempt.h); the
 * decision is recorded once per lease. */
static int preempt(struct scaler *sc, const struct decision_now *dn, const struct instance *inst,
		   const struct action *a)
{
	struct preempts *p = &sc->env.queue->preempts;
	struct job job;
	int rc;

	if (!inst->job_id || (rc = store_job_get(sc->env.store, inst->job_id, &job)) == STORE_NOT_FOUND)
		return 0;
	if (rc < 0)
		return -1;
	preempt_prune(p, still_leased, sc->env.store);
	/* Counted under the team of its section (the default team's for one with none). */
	rc = job.state == JOB_LEASED
		     ? preempt_add(p, job.id, job.lease_token,
				   dn->view.settings->teams[teams_index(dn->view.settings->teams,
									 dn->view.settings->nteams, job.team)].name,
				   a->reason)
		     : 0;
	if (rc > 0)
		log_info("job preempted", "job=%lld team=%s instance=%lld", (long long)job.id, job.team,
			 (long long)inst->id);
	job_free(&job);
	return rc > 0 ? record(sc, dn, a, "preempt") : 0;
}

/* The instance as it is now, its row held until the batch ends: 1 as
 * the plan saw it, 0 changed since (left to the next run), -1 a store
 * error. With several serves on one store (docs/HA.md) another one's
 * worker may have taken a job on it since the fleet was read. */
static int as_seen(struct scaler *sc, struct instance *inst)
{
	struct instance now;
	int rc = store_instance_get(sc->env.store, inst->id, &now);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (now.state != inst->state || now.job_id != inst->job_id)
		return 0;
	*inst = now;
	return 1;
}

static int carry_out(struct scaler *sc, struct decision_now *dn, const struct action *a)
{
	int rc;

	if (a->kind == ACTION_LAUNCH)
		return launch(sc, dn, a);
	for (int k = 0; k < dn->view.nfleet; k++) {
		struct instance *inst = &dn->view.records[k];
		if (inst->id != a->instance)
			continue;
		if (a->kind == ACTION_PREEMPT)
			return preempt(sc, dn, inst, a);
		if ((rc = as_seen(sc, inst)) <= 0)
			return rc;
		if (a->kind == ACTION_DRAIN)
			return record(sc, dn, a, "drain") == 0 &&
			       fleet_set_state(sc->env.fleet, inst, INST_DRAINING, a->reason) == 0 ? 0 : -1;
		/* The last line of defence: never stop an instance with a job. */
		if (inst->job_id)
			return 0;
		return terminate(sc, dn, inst, a);
	}
	return 0;
}

/* The provider's answer to list, for this run. */
struct listed {
	const struct provider_item *items;
	int n;
	const char *error;
	int none; /* no list was asked for this run */
};

static int reconcile(struct scaler *sc, const struct listed *l)
{
	struct reconcile r = {
		.store = sc->env.store, .fleet = sc->env.fleet, .queue = sc->env.queue,
		.provider = sc->env.provider, .clock = sc->env.clock, .started_ms = sc->started_ms,
		.keep_all = sc->launched,
	};

	if (l->none)
		return 0;
	/* A list that failed marks nothing gone and ends no leak. */
	if (l->error) {
		log_warn("provider list failed: no instance marked gone this run", "error=\"%s\"", l->error);
		return 0;
	}
	return reconcile_run(&r, l->items, l->n, on_terminated, sc);
}

/* Whether c's lane and needs are among v[0..n). */
static int stuck_among(const struct stuck *v, int n, const struct plan_class *c)
{
	for (int k = 0; k < n; k++) {
		if (strcmp(v[k].lane, c->lane) == 0 && v[k].gpus == c->gpus && v[k].min_vram_gb == c->min_vram_gb)
			return 1;
	}
	return 0;
}

/* A decision for each class of queued jobs that no offer and no live
 * worker can hold, when it becomes so (as the submit refuses such a job,
 * only where the config has offers): the alert EbbJobsUnplaceable fires
 * for them too. Classes of several teams share a lane's flag. */
static int flag_unplaceable(struct scaler *sc, const struct decision_now *d)
{
	struct stuck now[sizeof sc->stuck / sizeof *sc->stuck];
	int n = 0, rc = 0;

	if (sc->env.noffers == 0)
		return 0;
	for (int k = 0; k < d->view.nclasses && rc == 0; k++) {
		const struct plan_class *c = &d->view.classes[k];
		char why[200], reason[400];

		if (placeable(d->offers, d->noffers, d->view.records, d->view.nfleet, c->gpus, c->min_vram_gb, why,
			      sizeof why) ||
		    stuck_among(now, n, c) || n == (int)(sizeof now / sizeof *now))
			continue;
		snprintf(now[n].lane, sizeof now[n].lane, "%s", c->lane);
		now[n].gpus = c->gpus;
		now[n].min_vram_gb = c->min_vram_gb;
		n++;
		if (stuck_among(sc->stuck, sc->nstuck, c))
			continue;
		snprintf(reason, sizeof reason, "lane %s: queued jobs of %d GPU(s) with %d GB each that nothing can run: %s",
			 c->lane, c->gpus, c->min_vram_gb, why);
		log_warn("unplaceable jobs", "reason=\"%s\"", reason);
		rc = store_decision_insert(sc->env.store, &(struct decision){.at_ms = clock_now(sc->env.clock),
									     .kind = "unplaceable", .offer = "",
									     .reason = reason});
	}
	if (rc == 0) {
		memcpy(sc->stuck, now, (size_t)n * sizeof *now);
		sc->nstuck = n;
	}
	return rc;
}

static int run(struct scaler *sc, const struct listed *l)
{
	int64_t now = clock_now(sc->env.clock), started = clock_monotonic_ns();
	struct decide_env e = {sc->env.store, &sc->settings, sc->env.offers, sc->env.noffers, 1,
			       &sc->env.queue->preempts, sc->env.workers};
	struct decision_now *d = mem_calloc(1, sizeof *d); /* freed whole, whatever was filled */
	int rc = -1;

	if (!d) {
		log_error("scaler: out of memory, no decision this run", "need=%zu", sizeof *d);
		goto out;
	}
	if (reconcile(sc, l) != 0) {
		log_error("scaler: store failed, no decision this run", "error=\"%s\"", store_error(sc->env.store));
		goto out;
	}
	if (decide_now(&e, now, d) != 0) {
		log_error("scaler: no decision this run", "error=\"%s\"", d->error);
		goto out;
	}
	/* What the workers' lease replies hold to. */
	sc->idle_timeout_ms = plan_idle_timeout_longest(d->idle_timeout_ms, d->noffers);
	sc->warm_floor = warm_floor(&sc->settings.warm, now);
	rc = flag_unplaceable(sc, d);
	for (int k = 0; k < d->result->n && rc == 0; k++)
		rc = carry_out(sc, d, &d->result->actions[k]);
	if (rc == 0 && d->result->next_ms)
		schedule(sc, d->result->next_ms);
	/* An offer at rest may be what work waits for. */
	for (int k = 0; k < d->noffers; k++) {
		if (d->offers[k].rest_until_ms > now)
			schedule(sc, d->offers[k].rest_until_ms);
	}
	/* A list that is not asked for at every run is asked for on time
	 * all the same: it finds what went without a word, and leaks. */
	if (provider_list_interval_ms(sc->env.provider) > 0)
		schedule(sc, sc->listed_ms + provider_list_interval_ms(sc->env.provider));
out:
	/* A run that failed is rolled back: the next one comes an interval
	 * later rather than never. */
	if (rc != 0)
		schedule(sc, now + sc->settings.interval_ms);
	if (d)
		decision_now_free(d);
	free(d);
	sc->last_run_ms = now;
	if (sc->env.run_seconds)
		histogram_observe(sc->env.run_seconds, (double)(clock_monotonic_ns() - started) / 1e9);
	return rc;
}

/* A run in a batch of its own, with the list it was given. */
static void run_batch(struct scaler *sc, const struct listed *l)
{
	if (batch_begin(sc->env.batch) != 0) {
		log_error("scaler: store failed, no decision this run", "error=\"%s\"", store_error(sc->env.store));
		schedule(sc, clock_now(sc->env.clock) + sc->settings.interval_ms);
	} else {
		size_t mark = outbox_mark(sc->outbox);
		int rc = run(sc, l);
		/* What the run wrote is its own: only later changes wake it. */
		sc->changes = store_changes(sc->env.store);
		batch_end(sc->env.batch, rc == 0);
		if (rc != 0)
			outbox_drop(sc->outbox, mark);
	}
	batch_flush(sc->env.batch);
}

static void on_listed(void *arg, const struct provider_item *items, int n, const char *error)
{
	struct scaler *sc = arg;

	sc->listing = 0;
	run_batch(sc, &(struct listed){items, n, error, 0});
	sc->launched = 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct scaler *sc = arg;
	int64_t now = clock_now(sc->env.clock), every = provider_list_interval_ms(sc->env.provider);

	(void)fd;
	(void)what;
	sc->next_ms = 0;
	if (sc->listed_ms && every > 0 && now - sc->listed_ms < every) {
		run_batch(sc, &(struct listed){.none = 1});
		return;
	}
	sc->listing = 1;
	sc->listed_ms = now;
	provider_list(sc->env.provider, on_listed, sc);
}

static int adopt(void *arg, const struct instance *inst)
{
	struct scaler *sc = arg;

	/* One that cannot be adopted is marked gone by the next reconcile. */
	if (inst->provider_ref[0])
		provider_adopt(sc->env.provider, inst);
	return 0;
}

struct scaler *scaler_new(const struct scaler_env *env)
{
	struct scaler *sc = mem_calloc(1, sizeof *sc);

	if (!sc)
		return NULL;
	sc->env = *env;
	sc->started_ms = clock_now(env->clock);
	plan_settings_from_config(env->cfg, &sc->settings);
	memcpy(sc->offers, env->offers, (size_t)env->noffers * sizeof *env->offers);
	sc->timer = evtimer_new(env->base, on_timer, sc);
	if (!sc->timer ||
	    !(sc->outbox = outbox_new(env->base, env->batch, env->provider, on_launched, on_terminated, sc))) {
		scaler_free(sc);
		return NULL;
	}
	if (store_instance_list(env->store, adopt, sc) != 0)
		log_error("scaler: the fleet could not be read to adopt it", "error=\"%s\"", store_error(env->store));
	if (preempt_restore(&env->queue->preempts, env->store) != 0)
		log_error("scaler: the preemptions in progress could not be read back", "error=\"%s\"",
			  store_error(env->store));
	batch_on_commit(env->batch, on_commit, sc);
	sc->last_run_ms = clock_now(env->clock) - sc->settings.interval_ms;
	scaler_wake(sc);
	return sc;
}

void scaler_free(struct scaler *sc)
{
	if (!sc)
		return;
	if (sc->timer)
		event_free(sc->timer);
	outbox_free(sc->outbox);
	free(sc);
}
