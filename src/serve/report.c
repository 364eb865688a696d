/* See report.h; the definitions are in docs/COST.md. */
#include "serve/report.h"

#include "common/mem.h"
#include "serve/chargeback.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a small hash table of (k1, k2) -> three integers ---- */

struct slot {
	int64_t k1, k2;
	int64_t v[3];
	int used;
};

struct table {
	struct slot *s;
	size_t cap, n;
};

struct report_map {
	struct table jobs;      /* job -> last group, items done, items lost */
	struct table instances; /* instance -> 1 + group of its last segment before billing */
	struct table pairs;     /* (instance, group) seen */
	struct table seen;      /* instance seen (the total's count) */
};

static size_t hash(int64_t k1, int64_t k2)
{
	uint64_t h = (uint64_t)k1 * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)k2 + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
	return (size_t)(h ^ (h >> 31));
}

static int grow(struct table *t)
{
	struct table bigger = {.cap = t->cap ? t->cap * 2 : 64};

	if (!(bigger.s = mem_calloc(bigger.cap, sizeof *bigger.s)))
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->s[i].used) {
			size_t j = hash(t->s[i].k1, t->s[i].k2) & (bigger.cap - 1);
			while (bigger.s[j].used)
				j = (j + 1) & (bigger.cap - 1);
			bigger.s[j] = t->s[i];
		}
	}
	bigger.n = t->n;
	free(t->s);
	*t = bigger;
	return 0;
}

/* The slot of (k1, k2), made (zeroed) if new; *fresh says which. NULL when
 * out of memory. */
static struct slot *lookup(struct table *t, int64_t k1, int64_t k2, int *fresh)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap && grow(t) != 0)
		return NULL;
	for (j = hash(k1, k2) & (t->cap - 1); t->s[j].used; j = (j + 1) & (t->cap - 1)) {
		if (t->s[j].k1 == k1 && t->s[j].k2 == k2) {
			*fresh = 0;
			return &t->s[j];
		}
	}
	t->s[j] = (struct slot){.k1 = k1, .k2 = k2, .used = 1};
	t->n++;
	*fresh = 1;
	return &t->s[j];
}

/* ---- the report ---- */

static const char *const by_names[REPORT_BY_COUNT] = {"offer", "team", "type", "market"};

int report_by_parse(const char *name)
{
	for (int k = 0; k < REPORT_BY_COUNT; k++) {
		if (strcmp(name, by_names[k]) == 0)
			return k;
	}
	return -1;
}

static const char *report_by_name(enum report_by by) { return by_names[by]; }

void report_init(struct report *r, enum report_by by, int64_t since_ms, int64_t now_ms)
{
	memset(r, 0, sizeof *r);
	r->by = by;
	r->since_ms = since_ms;
	r->now_ms = now_ms;
	r->map = mem_calloc(1, sizeof *r->map);
}

int report_month(const char *month, int64_t *since_ms, int64_t *until_ms)
{
	struct tm tm = {0};
	int y, m, n = 0;

	if (strlen(month) != 7 || sscanf(month, "%4d-%2d%n", &y, &m, &n) != 2 || n != 7 || m < 1 || m > 12 ||
	    y < 1970 || y > 9999)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = 1;
	*since_ms = (int64_t)timegm(&tm) * 1000;
	tm.tm_mon = m == 12 ? 0 : m;
	tm.tm_year = m == 12 ? y + 1 - 1900 : y - 1900;
	*until_ms = (int64_t)timegm(&tm) * 1000;
	return 0;
}

static int kind_of(const char *kind)
{
	if (strcmp(kind, "job") == 0)
		return RK_BUSY;
	if (strcmp(kind, "boot") == 0)
		return RK_BOOT;
	if (strcmp(kind, "billing") == 0)
		return RK_BILLING;
	return RK_IDLE;
}

/* The index of the group named name (and of market m, by market), made
 * if new; -1 when out of memory. */
static int group_of(struct report *r, const char *name, enum market m)
{
	struct report_group *g;

	for (int k = 0; k < r->ngroups; k++) {
		if (strcmp(r->groups[k].name, name) == 0 && (r->by != REPORT_BY_MARKET || r->groups[k].market == m))
			return k;
	}
	if (!(g = mem_realloc(r->groups, (size_t)(r->ngroups + 1) * sizeof *g)))
		return -1;
	r->groups = g;
	g = &r->groups[r->ngroups];
	memset(g, 0, sizeof *g);
	if (!(g->name = mem_strdup(name)))
		return -1;
	g->market = m;
	return r->ngroups++;
}

static const char *group_name(const struct report *r, const struct ledger_row *row, int kind)
{
	const char *name;

	if (r->by == REPORT_BY_OFFER || r->by == REPORT_BY_MARKET)
		return row->offer;
	/* By team, the time no job used is the team's whose work the
	 * instance was launched for. */
	if (kind != RK_BUSY && r->by == REPORT_BY_TEAM)
		return row->launch_team && row->launch_team[0] ? row->launch_team : REPORT_SHARED;
	if (kind != RK_BUSY)
		return REPORT_NOT_A_JOB;
	name = r->by == REPORT_BY_TEAM ? row->team : row->type;
	return name ? name : "(unknown job)";
}

/* Whose a row is: a job's run, its job's team; the time no job used, the
 * team's whose work its instance was launched for ("": none). */
static const char *row_team(const struct ledger_row *row, int kind)
{
	const char *team = kind == RK_BUSY ? row->team : row->launch_team;

	return team ? team : "";
}

/* A segment of jobs side by side counts its share of the instance's time. */
static void add_time(struct report_group *g, const struct ledger_row *row, int kind, int64_t ms, double cost)
{
	double share = segment_share(row->seg, row->gpus), gpu_ms = (double)ms * share * row->gpus;

	g->cost[kind] += cost;
	g->ms[kind] += (double)ms * share;
	g->gpu_ms[kind] += gpu_ms;
	if (row->market == MARKET_SPOT)
		g->spot_gpu_ms += gpu_ms;
}

int report_add(struct report *r, const struct ledger_row *row, double usd_per_ms)
{
	const struct segment *seg = row->seg;
	int kind = kind_of(seg->kind), fresh, gi;
	int64_t start = seg->start_ms, end = seg->end_ms, ms;
	double cost;
	struct slot *sl;
	struct report_group *g;

	if (!r->map)
		return -1;
	if (r->team && strcmp(r->team, row_team(row, kind)) != 0)
		return 0;
	if (end == 0) { /* open: up to now, at its price */
		end = r->now_ms > start ? r->now_ms : start;
		cost = (double)(end - start) * usd_per_ms * segment_share(seg, row->gpus);
	} else {
		cost = seg->cost;
	}
	if (start < r->since_ms) {
		if (end <= r->since_ms)
			return 0;
		cost = end > start ? cost * (double)(end - r->since_ms) / (double)(end - start) : 0;
		start = r->since_ms;
	}
	if (r->until_ms && end > r->until_ms) {
		if (start >= r->until_ms)
			return 0;
		cost = cost * (double)(r->until_ms - start) / (double)(end - start);
		end = r->until_ms;
	}
	ms = end - start;
	if ((gi = group_of(r, group_name(r, row, kind), row->market)) < 0)
		return -1;
	g = &r->groups[gi];
	add_time(g, row, kind, ms, cost);
	add_time(&r->total, row, kind, ms, cost);

	/* Instances, counted once per group and once in the total. */
	if (!(sl = lookup(&r->map->pairs, seg->instance, gi, &fresh)))
		return -1;
	g->instances += fresh;
	if (!(sl = lookup(&r->map->seen, seg->instance, 0, &fresh)))
		return -1;
	r->total.instances += fresh;

	if (kind == RK_BUSY && seg->job) {
		/* A job's items count once, where its last run in the window was. */
		if (!(sl = lookup(&r->map->jobs, seg->job, 0, &fresh)))
			return -1;
		sl->v[0] = gi;
		sl->v[1] = row->items_done;
		sl->v[2] = row->items_lost;
	}
	if (kind != RK_BILLING) {
		if (!(sl = lookup(&r->map->instances, seg->instance, 0, &fresh)))
			return -1;
		sl->v[0] = 1 + gi;
	} else if (row->reclaimed) {
		/* The reclaim hit what the instance was doing when it ended. */
		int where = gi;
		if (r->by != REPORT_BY_OFFER && r->by != REPORT_BY_MARKET) {
			if (!(sl = lookup(&r->map->instances, seg->instance, 0, &fresh)))
				return -1;
			where = sl->v[0] > 0 ? (int)sl->v[0] - 1 : gi;
		}
		r->groups[where].reclaims++;
		r->total.reclaims++;
	}
	return 0;
}

static double total_cost(const struct report_group *g)
{
	double c = 0;

	for (int k = 0; k < RK_COUNT; k++)
		c += g->cost[k];
	return c;
}

static int dearest_first(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;
	double cx = total_cost(x), cy = total_cost(y);

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->name, y->name) ? strcmp(x->name, y->name) : (int)x->market - (int)y->market;
}

void report_finish(struct report *r)
{
	const struct table *jobs;

	if (!r->map)
		return;
	jobs = &r->map->jobs;
	for (size_t i = 0; i < jobs->cap; i++) {
		const struct slot *sl = &jobs->s[i];
		struct report_group *g;
		if (!sl->used)
			continue;
		g = &r->groups[sl->v[0]];
		g->jobs++;
		g->items += sl->v[1];
		g->items_lost += sl->v[2];
		r->total.jobs++;
		r->total.items += sl->v[1];
		r->total.items_lost += sl->v[2];
	}
	/* An empty ledger has no groups array, and qsort's pointer must not be
	 * null even for no elements. */
	if (r->ngroups)
		qsort(r->groups, (size_t)r->ngroups, sizeof *r->groups, dearest_first);
}

static json_t *ratio(double num, double den) { return den > 0 ? json_real(num / den) : json_null(); }

static json_t *group_to_json(const struct report_group *g, const char *name)
{
	static const double H = 3600000.0;
	double cost = total_cost(g), billed_gpu_ms = 0, not_busy_cost = 0, not_busy_gpu_ms = 0;
	double billed_ms = 0;

	for (int k = 0; k < RK_COUNT; k++) {
		billed_gpu_ms += g->gpu_ms[k];
		billed_ms += g->ms[k];
		if (k != RK_BUSY) {
			not_busy_cost += g->cost[k];
			not_busy_gpu_ms += g->gpu_ms[k];
		}
	}
	return json_pack(
		"{s:s, s:f, s:I, s:o, s:I, s:I,"
		" s:{s:f, s:f, s:f, s:f, s:f, s:f},"
		" s:{s:f, s:f, s:f, s:f, s:f},"
		" s:{s:f, s:f, s:f, s:f, s:f},"
		" s:o, s:o, s:I, s:I}",
		"name", name, "cost_usd", cost, "items", (json_int_t)g->items, "cost_per_item",
		ratio(cost, (double)g->items), "jobs", (json_int_t)g->jobs, "instances", (json_int_t)g->instances,
		"gpu_hours", "billed", billed_gpu_ms / H, "busy", g->gpu_ms[RK_BUSY] / H, "boot",
		g->gpu_ms[RK_BOOT] / H, "idle", g->gpu_ms[RK_IDLE] / H, "billing", g->gpu_ms[RK_BILLING] / H,
		"not_busy", not_busy_gpu_ms / H,
		"cost_usd_by_kind", "busy", g->cost[RK_BUSY], "boot", g->cost[RK_BOOT], "idle", g->cost[RK_IDLE],
		"billing", g->cost[RK_BILLING], "not_busy", not_busy_cost,
		"seconds", "billed", billed_ms / 1000.0, "busy", g->ms[RK_BUSY] / 1000.0, "boot",
		g->ms[RK_BOOT] / 1000.0, "idle", g->ms[RK_IDLE] / 1000.0, "billing",
		g->ms[RK_BILLING] / 1000.0,
		"spot_share", ratio(g->spot_gpu_ms, billed_gpu_ms), "efficiency",
		ratio(g->gpu_ms[RK_BUSY], billed_gpu_ms), "reclaims", (json_int_t)g->reclaims, "items_lost",
		(json_int_t)g->items_lost);
}

/* The teams' lines, in the groups' order, and the shared line. */
static json_t *chargeback_json(const struct report *r)
{
	struct charge *c = mem_calloc((size_t)r->ngroups + 1, sizeof *c);
	json_t *teams = json_array(), *out;
	int64_t total;
	int shared = -1;

	if (!c) {
		json_decref(teams);
		return json_null();
	}
	for (int k = 0; k < r->ngroups; k++) {
		c[k].busy_usd = r->groups[k].cost[RK_BUSY];
		c[k].not_busy_usd = total_cost(&r->groups[k]) - c[k].busy_usd;
		if (strcmp(r->groups[k].name, REPORT_SHARED) == 0)
			shared = k;
	}
	total = chargeback(c, r->ngroups, total_cost(&r->total));
	for (int k = 0; k < r->ngroups; k++) {
		if (k == shared)
			continue;
		json_array_append_new(teams, json_pack("{s:s, s:I, s:I, s:I}", "team", r->groups[k].name,
						       "busy_cents", (json_int_t)c[k].busy_cents, "idle_cents",
						       (json_int_t)c[k].not_busy_cents, "total_cents",
						       (json_int_t)c[k].total_cents));
	}
	out = json_pack("{s:o, s:I, s:I}", "teams", teams, "shared_cents",
				(json_int_t)(shared >= 0 ? c[shared].total_cents : 0), "total_cents", (json_int_t)total);
	free(c);
	return out;
}

json_t *report_to_json(const struct report *r)
{
	json_t *groups = json_array(), *out;

	for (int k = 0; k < r->ngroups; k++) {
		json_t *g = group_to_json(&r->groups[k], r->groups[k].name);
		if (r->by == REPORT_BY_MARKET)
			json_object_set_new(g, "market", json_string(market_name(r->groups[k].market)));
		json_array_append_new(groups, g);
	}
	out = json_pack("{s:s, s:f, s:f, s:o, s:o}", "by", report_by_name(r->by), "since",
			(double)r->since_ms / 1000.0, "now", (double)r->now_ms / 1000.0, "groups", groups,
			"total", group_to_json(&r->total, "total"));
	if (r->until_ms)
		json_object_set_new(out, "until", json_real((double)r->until_ms / 1000.0));
	if (r->team)
		json_object_set_new(out, "team", json_string(r->team));
	if (r->by == REPORT_BY_TEAM)
		json_object_set_new(out, "chargeback", chargeback_json(r));
	return out;
}

void report_free(struct report *r)
{
	for (int k = 0; k < r->ngroups; k++)
		free(r->groups[k].name);
	free(r->groups);
	if (r->map) {
		free(r->map->jobs.s);
		free(r->map->instances.s);
		free(r->map->pairs.s);
		free(r->map->seen.s);
		free(r->map);
	}
	memset(r, 0, sizeof *r);
}

void offer_samples_add(struct offer_samples *s, const struct offer_stat *st)
{
	s->speed_sum += st->speed_sum;
	s->speed_n += st->speed_n;
	s->runs += st->runs;
	s->items += st->items;
	s->run_ms += st->run_ms;
	s->boots += st->boots;
	s->boot_ms += st->boot_ms;
	s->alive_ms[st->market] += st->alive_ms;
	s->reclaims[st->market] += st->reclaims;
	s->launches[st->market] += st->launches;
	s->launch_failures[st->market] += st->launch_failures;
}
