/* See alert_rules.h. */
#include "serve/alert_rules.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mem.h"
#include "common/units.h"
#include "policy/placeable.h"
#include "serve/team_state.h"

#define ON(f) offsetof(struct alerts_conf, f)

const struct alert_rule_info alert_rules[ALERT_NRULES] = {
	[RULE_INSTANCE_IDLE] = {"EbbInstanceIdle", "warning", ON(idle), ON(idle_for_ms)},
	[RULE_QUEUE_WAITING] = {"EbbQueueWaiting", "warning", ON(queue_wait), ON(queue_wait_for_ms)},
	[RULE_SPOT_SHARE_LOW] = {"EbbSpotShareLow", "warning", ON(spot_share), ON(spot_share_for_ms)},
	[RULE_LAUNCHES_FAILING] = {"EbbLaunchesFailing", "critical", ON(launch_failures), ON(launch_failures_for_ms)},
	[RULE_JOBS_DEAD_LETTERED] = {"EbbJobsDeadLettered", "warning", ON(dead_letter), ON(dead_letter_for_ms)},
	[RULE_WORKER_LOST] = {"EbbWorkerLost", "warning", ON(worker_lost), ON(worker_lost_for_ms)},
	[RULE_STORE_ERRORS] = {"EbbStoreErrors", "critical", ON(store_errors), ON(store_errors_for_ms)},
	[RULE_TEAM_BUDGET] = {"EbbTeamBudget", "warning", ON(team_budget), ON(team_budget_for_ms)},
	[RULE_JOBS_UNPLACEABLE] = {"EbbJobsUnplaceable", "warning", ON(unplaceable), ON(unplaceable_for_ms)},
};

int alert_rule_on(const struct alerts_conf *c, enum alert_rule r)
{
	return *(const int64_t *)((const char *)c + alert_rules[r].on) != 0;
}

int64_t alert_rule_for_ms(const struct alerts_conf *c, enum alert_rule r)
{
	return *(const int64_t *)((const char *)c + alert_rules[r].for_ms);
}

struct ctx {
	const struct alert_env *env;
	const struct alerts_conf *conf;
	int64_t now_ms;
	struct alert_eval *out;
	struct instance *live;
	int nlive;
	int oom;
};

/* A condition of rule r, its summary a printf; NULL when out of memory. */
static struct alert_cond *add(struct ctx *c, enum alert_rule r, int64_t since_ms, double value, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static struct alert_cond *add(struct ctx *c, enum alert_rule r, int64_t since_ms, double value, const char *fmt, ...)
{
	struct alert_eval *e = c->out;
	struct alert_cond *cond;
	va_list ap;

	if (e->n == e->cap) {
		int cap = e->cap ? e->cap * 2 : 16;
		struct alert_cond *v = mem_realloc(e->v, (size_t)cap * sizeof *v);
		if (!v) {
			c->oom = 1;
			return NULL;
		}
		e->v = v;
		e->cap = cap;
	}
	cond = &e->v[e->n++];
	memset(cond, 0, sizeof *cond);
	cond->rule = r;
	cond->since_ms = since_ms;
	cond->value = value;
	va_start(ap, fmt);
	vsnprintf(cond->summary, sizeof cond->summary, fmt, ap);
	va_end(ap);
	return cond;
}

/* A condition may begin or end at `at` with nothing else happening. */
static void wake_at(struct ctx *c, int64_t at)
{
	if (at > c->now_ms && (!c->out->next_ms || at < c->out->next_ms))
		c->out->next_ms = at;
}

static void label_offer(struct alert_cond *cond, const char *offer, enum market m)
{
	snprintf(cond->labels.offer, sizeof cond->labels.offer, "%s", offer);
	snprintf(cond->labels.market, sizeof cond->labels.market, "%s", market_name(m));
}

/* ---- the live instances: idle ones, and the spot share ---- */

static int add_live(void *arg, const struct instance *inst)
{
	struct ctx *c = arg;
	struct instance *v = mem_realloc(c->live, (size_t)(c->nlive + 1) * sizeof *v);

	if (!v) {
		c->oom = 1;
		return -1;
	}
	c->live = v;
	c->live[c->nlive++] = *inst;
	return 0;
}

static int instance_idle(struct ctx *c)
{
	for (int k = 0; k < c->nlive; k++) {
		const struct instance *i = &c->live[k];
		int64_t threshold = i->market == MARKET_SPOT ? c->conf->idle_spot_ms : c->conf->idle_ondemand_ms;
		int64_t idle_ms = c->now_ms - i->idle_since_ms;
		struct alert_cond *cond;
		char spent[32];

		if (i->state != INST_IDLE || !i->idle_since_ms)
			continue;
		if (idle_ms < threshold) {
			wake_at(c, i->idle_since_ms + threshold);
			continue;
		}
		format_elapsed(spent, sizeof spent, idle_ms);
		if (!(cond = add(c, RULE_INSTANCE_IDLE, i->idle_since_ms + threshold, (double)idle_ms / 1000.0,
				 "%s %s instance %lld idle %s: $%.2f/h", market_name(i->market), i->offer,
				 (long long)i->id, spent, ledger_usd_per_hour(c->env->ledger, i->offer, i->market))))
			return -1;
		label_offer(cond, i->offer, i->market);
		snprintf(cond->labels.instance, sizeof cond->labels.instance, "%lld", (long long)i->id);
	}
	return 0;
}

/* Spot share of the live instances, while some offer sells spot and the
 * scaler may launch there; the money at stake is what the on-demand ones
 * cost above their offers' spot prices. */
static int spot_share_low(struct ctx *c)
{
	const struct config *cfg = c->env->cfg;
	const struct ledger *l = c->env->ledger;
	double premium = 0;
	int spot = 0, sold = 0, live = 0;

	for (int k = 0; k < l->noffers; k++)
		sold |= l->offers[k].price[MARKET_SPOT] >= 0;
	for (int k = 0; k < c->nlive; k++) {
		const struct instance *i = &c->live[k];
		double p = ledger_usd_per_hour(l, i->offer, MARKET_SPOT);
		live++;
		if (i->market == MARKET_SPOT)
			spot++;
		else if (p > 0)
			premium += ledger_usd_per_hour(l, i->offer, MARKET_ONDEMAND) - p;
	}
	if (!sold || !cfg->use_spot || !live || (double)spot / live >= c->conf->spot_share_min)
		return 0;
	return add(c, RULE_SPOT_SHARE_LOW, 0, (double)spot / live,
		   "spot %d of %d instances (%.0f%%), under %.0f%%: on demand costs $%.2f/h more than spot would",
		   spot, live, 100.0 * spot / live, 100.0 * c->conf->spot_share_min, premium) ? 0 : -1;
}

/* ---- the queue ---- */

struct lane_oldest {
	char lane[CONF_NAME_MAX + 1];
	int64_t oldest_ms, jobs;
};

struct lanes {
	struct lane_oldest v[CONF_MAX_LANES * 4];
	int n;
};

static int add_demand(void *arg, const struct demand_row *d)
{
	struct lanes *l = arg;
	int k;

	for (k = 0; k < l->n && strcmp(l->v[k].lane, d->lane) != 0; k++)
		;
	if (k == l->n) {
		if (l->n == (int)(sizeof l->v / sizeof *l->v))
			return 0;
		snprintf(l->v[l->n++].lane, sizeof l->v[0].lane, "%s", d->lane);
	}
	if (!l->v[k].oldest_ms || d->oldest_ms < l->v[k].oldest_ms)
		l->v[k].oldest_ms = d->oldest_ms;
	l->v[k].jobs += d->jobs;
	return 0;
}

static int queue_waiting(struct ctx *c)
{
	struct lanes *l = mem_calloc(1, sizeof *l);
	int rc = 0;

	if (!l)
		return c->oom = 1, -1;
	if (store_demand(c->env->store, add_demand, l) != 0) {
		free(l);
		return -1;
	}
	for (int k = 0; k < l->n && rc == 0; k++) {
		const struct lane_oldest *o = &l->v[k];
		int64_t target = config_wait_target_ms(c->env->cfg, o->lane);
		int64_t over = (int64_t)((double)target * c->conf->queue_wait_factor), waited = c->now_ms - o->oldest_ms;
		struct alert_cond *cond;
		char w[32], t[32];

		if (!o->jobs)
			continue;
		if (waited < over) {
			wake_at(c, o->oldest_ms + over);
			continue;
		}
		format_elapsed(w, sizeof w, waited);
		format_elapsed(t, sizeof t, target);
		if (!(cond = add(c, RULE_QUEUE_WAITING, o->oldest_ms + over, (double)waited / 1000.0,
				 "lane %s: oldest job waiting %s, %.1f times its wait target of %s; %lld queued", o->lane, w,
				 (double)waited / (double)target, t, (long long)o->jobs)))
			rc = -1;
		else
			snprintf(cond->labels.lane, sizeof cond->labels.lane, "%s", o->lane);
	}
	free(l);
	return rc;
}

/* The queued jobs no offer and no live instance holds, by lane: their
 * count, the oldest's submit time and the first class's reason. */
struct unplaceable {
	struct ctx *c;
	struct {
		char lane[CONF_NAME_MAX + 1];
		int64_t jobs, oldest_ms;
		char why[200];
	} v[CONF_MAX_LANES * 4];
	int n;
};

static int add_unplaceable(void *arg, const struct demand_row *d)
{
	struct unplaceable *u = arg;
	const struct ledger *l = u->c->env->ledger;
	char why[200];
	int k;

	if (placeable(l->offers, l->noffers, u->c->live, u->c->nlive, d->gpus, d->min_vram_gb, why, sizeof why))
		return 0;
	for (k = 0; k < u->n && strcmp(u->v[k].lane, d->lane) != 0; k++)
		;
	if (k == u->n) {
		if (u->n == (int)(sizeof u->v / sizeof *u->v))
			return 0;
		snprintf(u->v[k].lane, sizeof u->v[k].lane, "%s", d->lane);
		snprintf(u->v[k].why, sizeof u->v[k].why, "%s", why);
		u->n++;
	}
	if (!u->v[k].oldest_ms || d->oldest_ms < u->v[k].oldest_ms)
		u->v[k].oldest_ms = d->oldest_ms;
	u->v[k].jobs += d->jobs;
	return 0;
}

/* Only where the config has offers, as the submit's refusal. */
static int jobs_unplaceable(struct ctx *c)
{
	struct unplaceable *u;
	int rc = 0;

	if (c->env->cfg->noffers == 0)
		return 0;
	if (!(u = mem_calloc(1, sizeof *u)))
		return c->oom = 1, -1;
	u->c = c;
	if (store_demand(c->env->store, add_unplaceable, u) != 0) {
		free(u);
		return -1;
	}
	for (int k = 0; k < u->n && rc == 0; k++) {
		struct alert_cond *cond = add(c, RULE_JOBS_UNPLACEABLE, u->v[k].oldest_ms, (double)u->v[k].jobs,
					      "lane %s: %lld queued jobs nothing can run: %s", u->v[k].lane,
					      (long long)u->v[k].jobs, u->v[k].why);
		if (!cond)
			rc = -1;
		else
			snprintf(cond->labels.lane, sizeof cond->labels.lane, "%s", u->v[k].lane);
	}
	free(u);
	return rc;
}

static int add_dead(void *arg, const struct dead_letters *d)
{
	struct ctx *c = arg;
	struct alert_cond *cond;
	char window[32];

	if (d->jobs < c->conf->dead_letter_min)
		return 0;
	/* The first of them leaves the window then, and the count drops. */
	wake_at(c, d->first_ms + c->conf->dead_letter_window_ms);
	format_elapsed(window, sizeof window, c->conf->dead_letter_window_ms);
	if (!(cond = add(c, RULE_JOBS_DEAD_LETTERED, d->first_ms, (double)d->jobs,
			 "lane %s: %lld jobs dead-lettered in the last %s, $%.2f spent on them; the last, job %lld: %.120s",
			 d->lane, (long long)d->jobs, window, d->cost, (long long)d->last_job,
			 d->last_error ? d->last_error : "no error given")))
		return -1;
	snprintf(cond->labels.lane, sizeof cond->labels.lane, "%s", d->lane);
	return 0;
}

/* ---- the offers' statistics: launches failing, workers lost ---- */

static int add_stat(void *arg, const struct offer_stat *st)
{
	struct ctx *c = arg;
	struct alert_cond *cond;
	char ago[32];

	if (alert_rule_on(c->conf, RULE_LAUNCHES_FAILING) && st->failing_since_ms) {
		format_elapsed(ago, sizeof ago, c->now_ms - st->failing_since_ms);
		if (!(cond = add(c, RULE_LAUNCHES_FAILING, st->failing_since_ms,
				 (double)(c->now_ms - st->failing_since_ms) / 1000.0,
				 "%s on %s: every launch has failed for %s%s", st->offer, market_name(st->market), ago,
				 st->last_capacity_ms >= st->failing_since_ms ? ", for want of capacity" : "")))
			return -1;
		label_offer(cond, st->offer, st->market);
	}
	if (alert_rule_on(c->conf, RULE_WORKER_LOST) && st->last_lost_ms &&
	    c->now_ms - st->last_lost_ms < c->conf->worker_lost_window_ms) {
		wake_at(c, st->last_lost_ms + c->conf->worker_lost_window_ms);
		format_elapsed(ago, sizeof ago, c->now_ms - st->last_lost_ms);
		if (!(cond = add(c, RULE_WORKER_LOST, st->last_lost_ms, (double)st->lost,
				 "%s on %s: a worker lost %s ago (gone while it booted or ran a job, or orphaned), %lld in all",
				 st->offer, market_name(st->market), ago, (long long)st->lost)))
			return -1;
		label_offer(cond, st->offer, st->market);
	}
	return 0;
}

static int store_errors_rule(struct ctx *c)
{
	const struct store_errors_seen *e = c->env->errors;
	char ago[32];

	if (!e->n || c->now_ms - e->last_ms >= c->conf->store_errors_window_ms)
		return 0;
	wake_at(c, e->last_ms + c->conf->store_errors_window_ms);
	format_elapsed(ago, sizeof ago, c->now_ms - e->last_ms);
	return add(c, RULE_STORE_ERRORS, e->first_ms, (double)e->n, "%lld store errors, the last %s ago: %.150s",
		   (long long)e->n, ago, e->last) ? 0 : -1;
}

/* One condition per mark a team's spend this month has passed. */
static int team_budget_marks(struct ctx *c, const struct plan_team *t, double spend)
{
	double marks[2] = {c->conf->team_budget_warn * t->monthly_budget, t->monthly_budget};
	const char *names[2] = {"", "100%"};
	char warn[8];
	struct alert_cond *cond;

	snprintf(warn, sizeof warn, "%.0f%%", c->conf->team_budget_warn * 100);
	names[0] = warn;
	for (int m = 0; m < 2; m++) {
		if (spend < marks[m])
			continue;
		if (!(cond = add(c, RULE_TEAM_BUDGET, 0, spend,
				 "team %s: $%.2f spent this month, %.0f%% of its $%.2f budget%s", t->name, spend,
				 t->monthly_budget > 0 ? 100 * spend / t->monthly_budget : 100, t->monthly_budget,
				 m == 1 ? ": nothing is launched for its work" : "")))
			return -1;
		snprintf(cond->labels.team, sizeof cond->labels.team, "%.*s", CONF_NAME_MAX, t->name);
		snprintf(cond->labels.threshold, sizeof cond->labels.threshold, "%s", names[m]);
	}
	return 0;
}

static int team_budget(struct ctx *c)
{
	struct plan_team teams[CONF_MAX_TEAMS + 1];
	double spend[CONF_MAX_TEAMS + 1];
	int n = teams_from_config(c->env->cfg, teams);
	time_t now = (time_t)(c->now_ms / 1000);
	struct tm tm;

	if (n == 0)
		return 0;
	if (team_budgets_apply(c->env->store, teams, n) != 0 ||
	    team_month_spend(c->env->store, teams, n, c->now_ms, spend) != 0)
		return -1;
	for (int t = 0; t < n; t++) {
		if (teams[t].monthly_budget >= 0 && team_budget_marks(c, &teams[t], spend[t]) != 0)
			return -1;
	}
	/* A new month starts every team's spend again. */
	gmtime_r(&now, &tm);
	tm.tm_mday = 1;
	tm.tm_mon++;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	wake_at(c, (int64_t)timegm(&tm) * 1000);
	return 0;
}

/* The rules in an order that reads each thing once; a rule that fails
 * stops the ones after it. */
static int run(struct ctx *c)
{
	struct alert_eval *e = c->out;
	const struct alerts_conf *k = c->conf;
	int on[ALERT_NRULES];

	for (int r = 0; r < ALERT_NRULES; r++)
		e->done[r] = !(on[r] = alert_rule_on(k, (enum alert_rule)r));
	if (on[RULE_STORE_ERRORS] && store_errors_rule(c) != 0)
		return -1;
	e->done[RULE_STORE_ERRORS] = 1;
	if (on[RULE_INSTANCE_IDLE] || on[RULE_SPOT_SHARE_LOW] || on[RULE_JOBS_UNPLACEABLE]) {
		if (store_instance_list(c->env->store, add_live, c) != 0 ||
		    (on[RULE_INSTANCE_IDLE] && instance_idle(c) != 0) ||
		    (on[RULE_SPOT_SHARE_LOW] && spot_share_low(c) != 0) ||
		    (on[RULE_JOBS_UNPLACEABLE] && jobs_unplaceable(c) != 0))
			return -1;
		e->done[RULE_INSTANCE_IDLE] = e->done[RULE_SPOT_SHARE_LOW] = e->done[RULE_JOBS_UNPLACEABLE] = 1;
	}
	if (on[RULE_QUEUE_WAITING]) {
		if (queue_waiting(c) != 0)
			return -1;
		e->done[RULE_QUEUE_WAITING] = 1;
	}
	if (on[RULE_JOBS_DEAD_LETTERED]) {
		if (store_dead_letters(c->env->store, c->now_ms - k->dead_letter_window_ms, add_dead, c) != 0)
			return -1;
		e->done[RULE_JOBS_DEAD_LETTERED] = 1;
	}
	if (on[RULE_LAUNCHES_FAILING] || on[RULE_WORKER_LOST]) {
		if (store_offer_stats(c->env->store, add_stat, c) != 0)
			return -1;
		e->done[RULE_LAUNCHES_FAILING] = e->done[RULE_WORKER_LOST] = 1;
	}
	if (on[RULE_TEAM_BUDGET]) {
		if (team_budget(c) != 0)
			return -1;
		e->done[RULE_TEAM_BUDGET] = 1;
	}
	return 0;
}

int alert_rules_eval(const struct alert_env *env, int64_t now_ms, struct alert_eval *out)
{
	struct ctx c = {.env = env, .conf = &env->cfg->alerts, .now_ms = now_ms, .out = out};
	int rc;

	memset(out, 0, sizeof *out);
	rc = run(&c);
	free(c.live);
	return rc == 0 && !c.oom ? 0 : -1;
}

void alert_eval_free(struct alert_eval *e)
{
	free(e->v);
	memset(e, 0, sizeof *e);
}
