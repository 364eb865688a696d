/* See alerts.h. */
#include "serve/alerts.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"
#include "serve/alert_payload.h"

struct alert {
	char key[512]; /* its labels' JSON text, alertname first: its identity */
	enum alert_rule rule;
	struct alert_labels labels;
	int firing;
	int64_t since_ms, fired_ms;
	double value;
	char summary[300];
	int changed; /* this evaluation made, fired or updated it: to write */
};

struct alerts {
	struct alerts_env env;
	struct event *timer;
	int64_t next_ms; /* the evaluation scheduled; 0: none */
	int64_t last_ms; /* the last one */
	int evaluating;  /* its own batch's hooks are not events */
	struct alert *v;
	int n, cap;
	uint64_t errors; /* store_errors() as last seen */
	struct store_errors_seen seen;
	int dirty; /* a write failed: the store may not hold what is here */
	int following; /* another serve evaluates: these are its, as kept */
};

static void key_of(enum alert_rule rule, const struct alert_labels *l, char *key, size_t size)
{
	json_t *labels = alert_labels_json(rule, l);
	char *text = json_dumps(labels, JSON_COMPACT | JSON_PRESERVE_ORDER);

	snprintf(key, size, "%s", text ? text : "");
	free(text);
	json_decref(labels);
}

static struct alert *find(struct alerts *a, const char *key)
{
	for (int i = 0; i < a->n; i++) {
		if (strcmp(a->v[i].key, key) == 0)
			return &a->v[i];
	}
	return NULL;
}

static struct alert *append(struct alerts *a)
{
	if (a->n == a->cap) {
		int cap = a->cap ? a->cap * 2 : 16;
		struct alert *v = mem_realloc(a->v, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	memset(&a->v[a->n], 0, sizeof a->v[0]);
	return &a->v[a->n++];
}

/* The timer runs on the system's time: one armed for a time the test
 * clock has jumped past is armed again, for now. */
static void schedule(struct alerts *a, int64_t at)
{
	int64_t now = clock_now(a->env.clock);

	if (a->next_ms && a->next_ms <= at && a->next_ms > now)
		return;
	a->next_ms = at;
	timer_add_ms(a->timer, at - now);
}

void alerts_wake(struct alerts *a)
{
	int64_t now = clock_now(a->env.clock);

	if (a->following)
		return;
	schedule(a, a->last_ms + ALERTS_GAP_MS > now ? a->last_ms + ALERTS_GAP_MS : now);
}

/* Store errors since the last look make or extend the run the rule of
 * store errors reads. */
static void note_errors(struct alerts *a, int64_t now)
{
	uint64_t n = store_errors(a->env.store);

	if (n == a->errors)
		return;
	if (!a->seen.n || now - a->seen.last_ms >= a->env.cfg->alerts.store_errors_window_ms)
		a->seen = (struct store_errors_seen){.first_ms = now};
	a->seen.n += (int64_t)(n - a->errors);
	a->seen.last_ms = now;
	snprintf(a->seen.last, sizeof a->seen.last, "%s", store_last_error(a->env.store));
	a->errors = n;
}

/* ---- telling ---- */

static void log_change(const struct alert *al, const char *what)
{
	char labels[600], summary[400];

	log_warn(what, "alert=%s labels=%s summary=%s", alert_rules[al->rule].name,
		 log_quote(labels, sizeof labels, al->key), log_quote(summary, sizeof summary, al->summary));
}

/* One notification per rule that fired or resolved an alert: its alerts
 * firing now and those resolved in this evaluation (gone[] with firing
 * set; a pending one goes without a word). */
static void notify(struct alerts *a, const struct alert *gone, int ngone, const int *fired, int64_t now)
{
	for (int r = 0; r < ALERT_NRULES; r++) {
		struct payload_alert *v;
		int n = 0, told = fired[r];
		json_t *payload;

		for (int i = 0; i < ngone; i++)
			told |= gone[i].rule == (enum alert_rule)r && gone[i].firing;
		if (!told || !(v = mem_calloc((size_t)(a->n + ngone), sizeof *v)))
			continue;
		for (int i = 0; i < a->n; i++) {
			const struct alert *al = &a->v[i];
			if (al->rule == (enum alert_rule)r && al->firing)
				v[n++] = (struct payload_alert){al->rule, &al->labels, al->summary, 1, al->since_ms, 0};
		}
		for (int i = 0; i < ngone; i++) {
			const struct alert *al = &gone[i];
			if (al->rule == (enum alert_rule)r && al->firing)
				v[n++] = (struct payload_alert){al->rule, &al->labels, al->summary, 0, al->since_ms, now};
		}
		if ((payload = alert_payload(a->env.external_url, (enum alert_rule)r, v, n))) {
			webhooks_post(a->env.webhooks, payload);
			json_decref(payload);
		}
		free(v);
	}
}

/* ---- keeping ---- */

static int put(struct alerts *a, const struct alert *al)
{
	json_t *j = alert_labels_json(al->rule, &al->labels);
	char *labels = json_dumps(j, JSON_COMPACT);
	struct alert_row row = {.key = al->key, .name = alert_rules[al->rule].name, .labels = labels ? labels : "{}",
				.firing = al->firing, .since_ms = al->since_ms, .fired_ms = al->fired_ms,
				.value = al->value, .summary = al->summary};
	int rc = labels ? store_alert_put(a->env.store, &row) : -1;

	json_decref(j);
	free(labels);
	return rc;
}

/* The store's alerts that are not here (their delete failed). */
static int stale(void *arg, const struct alert_row *row)
{
	struct alerts *a = arg;

	return find(a, row->key) ? 0 : store_alert_delete(a->env.store, row->key);
}

/* Writes what changed, deletes what is gone; after a failure, all of it. */
static void keep(struct alerts *a, const struct alert *gone, int ngone)
{
	int ok = batch_begin(a->env.batch) == 0;

	for (int i = 0; ok && i < a->n; i++)
		ok = !(a->v[i].changed || a->dirty) || put(a, &a->v[i]) == 0;
	for (int i = 0; ok && i < ngone; i++)
		ok = store_alert_delete(a->env.store, gone[i].key) == 0;
	if (ok && a->dirty)
		ok = store_alerts(a->env.store, stale, a) == 0;
	batch_end(a->env.batch, ok);
	batch_flush(a->env.batch);
	/* The flush's commit may fail too: the store errors say so. */
	a->dirty = !ok || store_errors(a->env.store) != a->errors;
	if (a->dirty)
		log_error("alerts: the store did not take them; they are written again next time", "error=\"%s\"",
			  store_last_error(a->env.store));
}

/* ---- evaluating ---- */

/* The conditions against the alerts: made, fired, updated, or gone (into
 * gone[], as they were); fired[r] when rule r fired one. */
static int apply(struct alerts *a, const struct alert_eval *ev, int64_t now, struct alert *gone, int *ngone,
		 int *fired)
{
	const struct alerts_conf *conf = &a->env.cfg->alerts;

	for (int i = 0; i < a->n; i++)
		a->v[i].changed = -1; /* no condition for it yet */
	for (int k = 0; k < ev->n; k++) {
		const struct alert_cond *c = &ev->v[k];
		char key[sizeof a->v[0].key];
		struct alert *al;
		int64_t fires;

		key_of(c->rule, &c->labels, key, sizeof key);
		if ((al = find(a, key))) {
			al->changed = 0;
		} else {
			if (!(al = append(a)))
				return -1;
			snprintf(al->key, sizeof al->key, "%s", key);
			al->rule = c->rule;
			al->labels = c->labels;
			al->since_ms = c->since_ms ? c->since_ms : now;
			al->changed = 1;
		}
		al->value = c->value;
		snprintf(al->summary, sizeof al->summary, "%s", c->summary);
		fires = al->since_ms + alert_rule_for_ms(conf, al->rule);
		if (al->firing)
			continue;
		if (now < fires) {
			schedule(a, fires);
			continue;
		}
		al->firing = al->changed = 1;
		al->fired_ms = now;
		fired[al->rule] = 1;
		log_change(al, "alert firing");
	}
	/* Those of the rules that looked and found no condition for them. */
	for (int i = 0; i < a->n;) {
		struct alert *al = &a->v[i];
		if (al->changed != -1 || !ev->done[al->rule]) {
			al->changed = al->changed == 1;
			i++;
			continue;
		}
		if (al->firing)
			log_change(al, "alert resolved");
		gone[(*ngone)++] = *al;
		*al = a->v[--a->n];
	}
	return 0;
}

static void evaluate(struct alerts *a)
{
	int64_t now = clock_now(a->env.clock);
	struct alert_env env = {a->env.cfg, a->env.store, a->env.ledger, &a->seen};
	struct alert_eval ev;
	struct alert *gone;
	int ngone = 0, fired[ALERT_NRULES] = {0};

	a->evaluating = 1;
	a->last_ms = now;
	note_errors(a, now);
	if (alert_rules_eval(&env, now, &ev) != 0)
		log_error("alerts: a rule could not look; its alerts stay as they were", "error=\"%s\"",
			  store_last_error(a->env.store));
	/* Only those there before may go. */
	if (!(gone = mem_calloc((size_t)a->n + 1, sizeof *gone)) || apply(a, &ev, now, gone, &ngone, fired) != 0) {
		log_error("alerts: out of memory, this evaluation is lost", "alerts=%d", a->n);
	} else {
		keep(a, gone, ngone);
		notify(a, gone, ngone, fired, now);
	}
	if (ev.next_ms)
		schedule(a, ev.next_ms);
	free(gone);
	alert_eval_free(&ev);
	/* Its own errors are dated now, not when the next one looks. */
	note_errors(a, clock_now(a->env.clock));
	a->evaluating = 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct alerts *a = arg;

	(void)fd, (void)what;
	a->next_ms = 0;
	evaluate(a);
}

/* A batch committed: a change of a job or an instance, or a store error
 * on the way, may change what holds. */
static void on_commit(void *arg, int changed)
{
	struct alerts *a = arg;

	if (!a->evaluating && (changed || store_errors(a->env.store) != a->errors))
		alerts_wake(a);
}

static void on_failure(void *arg)
{
	struct alerts *a = arg;

	if (!a->evaluating)
		alerts_wake(a);
}

/* ---- at start ---- */

static int load(void *arg, const struct alert_row *row)
{
	struct alerts *a = arg;
	json_t *labels = json_loads(row->labels, 0, NULL);
	const char *name = json_string_value(json_object_get(labels, "alertname"));
	struct alert *al;
	int r;

	for (r = 0; r < ALERT_NRULES && !(name && strcmp(alert_rules[r].name, name) == 0); r++)
		;
	/* One of a rule this serve does not have is resolved at the next
	 * store write: it is not loaded. */
	if (r == ALERT_NRULES || !(al = append(a)) || alert_labels_parse(labels, &al->labels) != 0) {
		a->dirty = 1;
		json_decref(labels);
		return 0;
	}
	json_decref(labels);
	al->rule = (enum alert_rule)r;
	key_of(al->rule, &al->labels, al->key, sizeof al->key);
	al->firing = row->firing;
	al->since_ms = row->since_ms;
	al->fired_ms = row->fired_ms;
	al->value = row->value;
	snprintf(al->summary, sizeof al->summary, "%s", row->summary);
	return 0;
}

static void read_kept(struct alerts *a)
{
	a->n = 0;
	if (store_alerts(a->env.store, load, a) != 0)
		log_error("alerts: those kept could not be read", "error=\"%s\"", store_error(a->env.store));
}

struct alerts *alerts_new(const struct alerts_env *env, int following)
{
	struct alerts *a = mem_calloc(1, sizeof *a);

	if (!a)
		return NULL;
	a->env = *env;
	a->errors = store_errors(env->store);
	if (!(a->timer = evtimer_new(env->base, on_timer, a))) {
		free(a);
		return NULL;
	}
	a->following = 1;
	read_kept(a);
	if (a->n)
		log_info("alerts kept", "count=%d", a->n);
	if (!following)
		alerts_lead(a);
	return a;
}

void alerts_lead(struct alerts *a)
{
	if (!a->following)
		return;
	a->following = 0;
	read_kept(a);
	a->errors = store_errors(a->env.store);
	batch_on_commit(a->env.batch, on_commit, a);
	batch_on_failure(a->env.batch, on_failure, a);
	alerts_wake(a);
}

void alerts_refresh(struct alerts *a)
{
	if (a->following)
		read_kept(a);
}

void alerts_free(struct alerts *a)
{
	if (!a)
		return;
	event_free(a->timer);
	free(a->v);
	free(a);
}

/* ---- reading ---- */

int alerts_firing(const struct alerts *a, enum alert_rule r)
{
	int n = 0;

	for (int i = 0; i < a->n; i++)
		n += a->v[i].rule == r && a->v[i].firing;
	return n;
}

json_t *alerts_json(const struct alerts *a)
{
	const struct alerts_conf *conf = &a->env.cfg->alerts;
	json_t *alerts = json_array(), *rules = json_array();

	for (int i = 0; i < a->n; i++) {
		const struct alert *al = &a->v[i];
		int64_t fires = al->firing ? al->fired_ms : al->since_ms + alert_rule_for_ms(conf, al->rule);
		json_array_append_new(alerts, json_pack("{s:s, s:s, s:o, s:s, s:f, s:f, s:f}", "name",
							 alert_rules[al->rule].name, "state",
							 al->firing ? "firing" : "pending", "labels",
							 alert_labels_json(al->rule, &al->labels), "summary", al->summary,
							 "value", al->value, "since", (double)al->since_ms / 1000.0,
							 al->firing ? "fired_at" : "fires_at", (double)fires / 1000.0));
	}
	for (int r = 0; r < ALERT_NRULES; r++)
		json_array_append_new(rules, json_pack("{s:s, s:s, s:b, s:f, s:i}", "name", alert_rules[r].name,
							"severity", alert_rules[r].severity, "on",
							alert_rule_on(conf, (enum alert_rule)r), "for_s",
							(double)alert_rule_for_ms(conf, (enum alert_rule)r) / 1000.0,
							"firing", alerts_firing(a, (enum alert_rule)r)));
	return json_pack("{s:o, s:o}", "alerts", alerts, "rules", rules);
}
