/* See snapshot.h. */
#include "serve/snapshot.h"

#include <string.h>
#include <time.h>

#include "common/log.h"

#define DAY_MS (86400LL * 1000)

struct take {
	struct snapshot *x;
	const struct snapshot_env *env;
	enum snap_period period; /* of the sums being read */
};

/* The row named name of rows[0..*n), each `size` bytes with its name
 * first, made (zeroed) when new; NULL, and counted as dropped, when full. */
static void *named(struct snapshot *x, void *rows, int *n, int max, size_t size, const char *name)
{
	char *row = rows;

	for (int i = 0; i < *n; i++, row += size) {
		if (strcmp(row, name) == 0)
			return row;
	}
	if (*n == max) {
		x->dropped++;
		return NULL;
	}
	(*n)++;
	snprintf(row, CONF_NAME_MAX + 1, "%s", name);
	return row;
}

static struct snap_lane *lane(struct snapshot *x, const char *name)
{
	return named(x, x->lanes, &x->nlanes, SNAP_MAX_LANES, sizeof *x->lanes, name);
}

static struct snap_offer *offer_row(struct snapshot *x, const char *offer, enum market m)
{
	for (int i = 0; i < x->noffers; i++) {
		if (x->offers[i].market == m && strcmp(x->offers[i].offer, offer) == 0)
			return &x->offers[i];
	}
	if (x->noffers == SNAP_MAX_OFFERS) {
		x->dropped++;
		return NULL;
	}
	snprintf(x->offers[x->noffers].offer, sizeof x->offers[0].offer, "%s", offer);
	x->offers[x->noffers].market = m;
	return &x->offers[x->noffers++];
}

static struct snap_team *team(struct snapshot *x, const char *name)
{
	return named(x, x->teams, &x->nteams, SNAP_MAX_TEAMS, sizeof *x->teams, name);
}

static int add_count(void *arg, const struct job_count *c)
{
	struct take *t = arg;
	struct snap_lane *l = lane(t->x, c->lane);
	struct snap_team *tm = team(t->x, c->team);

	t->x->states[c->state] += c->n;
	if (l)
		l->n[c->state] += c->n;
	if (tm)
		tm->jobs[c->state] += c->n;
	return 0;
}

static int add_demand(void *arg, const struct demand_row *d)
{
	struct take *t = arg;
	struct snap_lane *l = lane(t->x, d->lane);

	if (l && d->jobs > 0 && (l->oldest_ms == 0 || d->oldest_ms < l->oldest_ms))
		l->oldest_ms = d->oldest_ms;
	return 0;
}

static int add_instance(void *arg, const struct instance *inst)
{
	struct take *t = arg;
	struct snap_offer *r;

	if (inst->state == INST_TERMINATED)
		return 0;
	t->x->spend_per_hour += ledger_usd_per_hour(t->env->ledger, inst->offer, inst->market);
	if ((r = offer_row(t->x, inst->offer, inst->market))) {
		r->inst[inst->state]++;
		r->live++;
		if (inst->state == INST_IDLE && inst->idle_since_ms &&
		    (!r->idle_since_ms || inst->idle_since_ms < r->idle_since_ms))
			r->idle_since_ms = inst->idle_since_ms;
	}
	return 0;
}

static int add_stat(void *arg, const struct offer_stat *st)
{
	struct take *t = arg;
	struct snap_offer *r = offer_row(t->x, st->offer, st->market);

	if (r) {
		r->has_stats = 1;
		r->launches += st->launches;
		r->reclaims += st->reclaims;
		r->launch_failures += st->launch_failures;
		r->lost += st->lost;
		r->failing_since_ms = st->failing_since_ms;
	}
	return 0;
}

/* Time, GPU time and cost of one kind of segment into m. */
static void add_money(struct snap_money *m, const char *kind, double gpu_ms, double cost, int64_t items)
{
	m->cost += cost;
	m->items += items;
	if (strcmp(kind, "job") == 0)
		m->busy_gpu_ms += gpu_ms;
	else
		m->idle_gpu_ms += gpu_ms;
}

static int add_sum(void *arg, const struct ledger_sum *g)
{
	struct take *t = arg;
	struct snap_team *tm;

	add_money(&t->x->money[t->period], g->kind, g->gpu_ms, g->cost, g->items);
	if (strcmp(g->kind, "job") == 0 && g->team[0] && (tm = team(t->x, g->team)))
		add_money(&tm->money[t->period], g->kind, g->gpu_ms, g->cost, g->items);
	return 0;
}

/* An open segment, up to now at its offer's price, as closing it now
 * would cost it: each period gets the part of it since the period began. */
static int add_open(void *arg, const struct ledger_row *lr)
{
	struct take *t = arg;
	struct snapshot *x = t->x;
	double usd_per_ms = ledger_usd_per_ms(t->env->ledger, lr->offer, lr->market);
	struct snap_team *tm = lr->team && strcmp(lr->seg->kind, "job") == 0 ? team(x, lr->team) : NULL;

	for (int p = 0; p < SNAP_PERIODS; p++) {
		int64_t from = lr->seg->start_ms > x->since_ms[p] ? lr->seg->start_ms : x->since_ms[p];
		double ms = x->now_ms > from ? (double)(x->now_ms - from) * segment_share(lr->seg, lr->gpus) : 0;
		double gpu_ms = ms * (lr->gpus > 0 ? lr->gpus : 1);
		add_money(&x->money[p], lr->seg->kind, gpu_ms, ms * usd_per_ms, 0);
		if (tm)
			add_money(&tm->money[p], lr->seg->kind, gpu_ms, ms * usd_per_ms, 0);
	}
	return 0;
}

/* Today's and this month's starts, UTC. */
static void periods(struct snapshot *x)
{
	time_t now = (time_t)(x->now_ms / 1000);
	struct tm tm;

	gmtime_r(&now, &tm);
	x->since_ms[SNAP_ALL] = 0;
	x->since_ms[SNAP_TODAY] = x->now_ms / DAY_MS * DAY_MS;
	x->since_ms[SNAP_MONTH] = x->since_ms[SNAP_TODAY] - (int64_t)(tm.tm_mday - 1) * DAY_MS;
}

int snapshot_take(struct snapshot *x, const struct snapshot_env *env)
{
	struct take t = {.x = x, .env = env};
	struct store *st = env->store;

	memset(x, 0, sizeof *x);
	x->now_ms = clock_now(env->clock);
	periods(x);
	for (int i = 0; i < env->cfg->nlanes; i++)
		lane(x, env->cfg->lane_names[i]);
	/* With a provider, every offer it may launch has its rows from the
	 * start, so that a graph shows 0 rather than nothing. */
	for (int k = 0; env->with_provider && k < env->noffers; k++) {
		for (int m = 0; m < MARKET_COUNT; m++) {
			struct snap_offer *r;
			if (env->offers[k].price[m] >= 0 && (r = offer_row(x, env->offers[k].name, (enum market)m)))
				r->configured = 1;
		}
	}
	if (store_job_counts(st, add_count, &t) != 0 || store_demand(st, add_demand, &t) != 0 ||
	    store_instance_list(st, add_instance, &t) != 0 || store_offer_stats(st, add_stat, &t) != 0 ||
	    store_ledger_open(st, add_open, &t) != 0)
		return -1;
	for (t.period = 0; t.period < SNAP_PERIODS; t.period++) {
		int64_t day = t.period == SNAP_ALL ? STORE_ALL_TIME : x->since_ms[t.period] / DAY_MS;
		if (store_ledger_sums(st, day, add_sum, &t) != 0)
			return -1;
	}
	for (int i = 0; i < x->nlanes; i++)
		x->lanes[i].wait_target_ms = config_wait_target_ms(env->cfg, x->lanes[i].name);
	if (x->dropped)
		log_warn("snapshot: rows left out, too many lanes, offers or teams", "dropped=%d", x->dropped);
	return 0;
}
