/* The scaling policy (see plan.h and docs/SCALING.md).
 *
 * In order: instances that never came up are terminated; if the limits
 * shrank below the fleet, idle and booting instances go first and busy
 * ones are drained, never stopped; each class's demand (its queued work
 * and the work its arrival rate expects) is matched against the capacity
 * that is up or booting, and more is launched when the demand cannot
 * drain within a boot plus its lane's wait target; the warm floor is kept;
 * idle instances no demand holds are released past their idle timeout.
 * Every launch is clamped by the hard limits, whatever the demand. */
#include "policy/plan_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
/* Expected arrivals count as whole jobs from three quarters of a job up:
 * a stray job now and then holds no instance, a steady stream does. */
#define EXPECTED_JOB_ROUNDING 0.25



/* Insertion sort: the arrays plan() orders (classes, candidates, idle
 * instances) hold a handful of entries, and the simulator calls plan()
 * millions of times; qsort's setup costs more than the sorting there. */
static void sort_small(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *a = base, tmp[64];

	if (size > sizeof tmp) {
		qsort(base, n, size, cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		memcpy(tmp, a + i * size, size);
		while (j > 0 && cmp(a + (j - 1) * size, tmp) > 0) {
			memcpy(a + j * size, a + (j - 1) * size, size);
			j--;
		}
		memcpy(a + j * size, tmp, size);
	}
}


/* USD per hour of an instance, on its market. */
static double price_of(const struct offer *o, enum market m) { return o->price[m] > 0 ? o->price[m] : 0; }

struct action *plan_add(struct planner *p, enum action_kind kind, int offer, int count, int64_t instance,
		       const char *fmt, ...)
{
	struct action *a;
	va_list ap;

	/* Full: the rest waits for a plan a moment later, which sees the
	 * fleet these actions leave. */
	if (p->out->n == PLAN_MAX_ACTIONS) {
		plan_wake_at(p, p->v->now_ms + 1);
		return NULL;
	}
	a = &p->out->actions[p->out->n++];
	/* Whole, padding and reason included, so that two plans of one view
	 * are the same byte for byte. */
	memset(a, 0, sizeof *a);
	a->kind = kind;
	a->offer = offer;
	a->market = MARKET_ONDEMAND;
	a->count = count;
	a->lane = NULL;
	a->team = kind == ACTION_LAUNCH ? p->team : -1;
	a->instance = instance;
	if (p->v->no_reasons)
		return a;
	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof a->reason, fmt, ap);
	va_end(ap);
	return a;
}

static const struct offer *offer_of(const struct planner *p, const struct plan_instance *i)
{
	return &p->v->offers[i->offer];
}

/* The instance leaves the fleet: it no longer counts against the limits. */
static void release(struct planner *p, int idx, const char *why)
{
	const struct plan_instance *i = &p->v->fleet[idx];
	const struct offer *o = offer_of(p, i);

	p->taken[idx] = 1;
	p->count--;
	if (i->state != INST_DRAINING) {
		p->serving--;
		p->serving_gpus -= o->gpus;
		p->serving_spend -= price_of(o, i->market);
	}
	p->gpus -= o->gpus;
	p->spend -= price_of(o, i->market);
	p->per_offer[i->offer]--;
	if (i->market == MARKET_SPOT) {
		p->spot_per_offer[i->offer]--;
		p->spot--;
	}
	plan_add(p, ACTION_TERMINATE, i->offer, 1, i->id, "terminate %lld (%s, %s): %s", (long long)i->id,
	    o->name, instance_state_name(i->state), why);
}

/* Counts the fleet by offer, market and whether it serves, one counter
 * per instance (the loop runs over every instance of every plan), then
 * sums instances, GPUs and spend per offer. */
enum { KIND_SPOT = 1, KIND_DRAINING = 2, KINDS = 4 };

static void tally(struct planner *p)
{
	/* In locals: the stores through kinds and taken could be to the
	 * planner's or the view's fields, for all the compiler knows, which
	 * it would then read again for each instance. */
	const struct plan_instance *fleet = p->v->fleet;
	int *kinds = p->kinds, nfleet = p->v->nfleet, nidle = 0, nboots = 0;

	for (int k = 0; k < nfleet; k++) {
		const struct plan_instance *i = &fleet[k];

		switch (i->state) {
		case INST_TERMINATED:
			p->taken[k] = 1;
			continue;
		case INST_IDLE:
			p->idle[nidle++] = (struct idle_entry){i->idle_since_ms, k};
			break;
		case INST_REQUESTED:
		case INST_BOOTING:
			p->boots[nboots++] = k;
			break;
		default:
			break;
		}
		kinds[i->offer * KINDS + (i->market == MARKET_SPOT) + 2 * (i->state == INST_DRAINING)]++;
	}
	p->nidle = nidle;
	p->nboots = nboots;
	for (int o = 0; o < p->v->noffers; o++) {
		const struct offer *of = &p->v->offers[o];
		const int *n = &kinds[o * KINDS];
		int od = n[0] + n[KIND_DRAINING], spot = n[KIND_SPOT] + n[KIND_SPOT | KIND_DRAINING];
		double od_price = price_of(of, MARKET_ONDEMAND), spot_price = price_of(of, MARKET_SPOT);

		p->ndraining += n[KIND_DRAINING] + n[KIND_SPOT | KIND_DRAINING];
		p->per_offer[o] = od + spot;
		p->spot_per_offer[o] = spot;
		p->count += od + spot;
		p->spot += spot;
		p->serving += n[0] + n[KIND_SPOT];
		p->gpus += (int64_t)(od + spot) * of->gpus;
		p->serving_gpus += (int64_t)(n[0] + n[KIND_SPOT]) * of->gpus;
		p->spend += od * od_price + spot * spot_price;
		p->serving_spend += n[0] * od_price + n[KIND_SPOT] * spot_price;
	}
}

static void expire_boots(struct planner *p)
{
	for (int b = 0; b < p->nboots; b++) {
		int k = p->boots[b];
		const struct plan_instance *i = &p->v->fleet[k];
		int64_t deadline = i->launched_ms + p->s->boot_timeout_ms;

		if (p->v->now_ms >= deadline)
			release(p, k, "never registered within boot_timeout");
		else
			plan_wake_at(p, deadline);
	}
}

static int over_limits(const struct planner *p)
{
	return p->serving > p->s->max_instances || p->serving_gpus > p->s->max_gpus ||
	       (p->s->max_spend_per_hour > 0 && p->serving_spend > p->s->max_spend_per_hour + 1e-9);
}

/* The next instance to give up when over the limits: idle first (the
 * longest idle), then booting (the newest), never a busy one. */
static int pick_victim(const struct planner *p, enum instance_state want)
{
	int best = -1;

	for (int k = 0; k < p->v->nfleet; k++) {
		const struct plan_instance *i = &p->v->fleet[k], *b;
		int match = want == INST_BOOTING ? (i->state == INST_BOOTING || i->state == INST_REQUESTED)
						 : i->state == want;
		if (p->taken[k] || !match)
			continue;
		b = best < 0 ? NULL : &p->v->fleet[best];
		if (!b || (want == INST_IDLE ? i->idle_since_ms < b->idle_since_ms : i->launched_ms > b->launched_ms))
			best = k;
	}
	return best;
}

static const char *limit_passed(const struct planner *p)
{
	if (p->serving > p->s->max_instances)
		return "over max_instances";
	if (p->serving_gpus > p->s->max_gpus)
		return "over max_gpus";
	return "over max_spend_per_hour";
}

static void enforce_limits(struct planner *p)
{
	while (over_limits(p)) {
		const char *why = limit_passed(p);
		int k = pick_victim(p, INST_IDLE);
		if (k < 0)
			k = pick_victim(p, INST_BOOTING);
		if (k >= 0) {
			release(p, k, why);
			continue;
		}
		k = pick_victim(p, INST_BUSY);
		if (k < 0)
			break;
		/* Busy: it finishes its job first and is terminated once idle. */
		p->taken[k] = 1;
		p->serving--;
		p->serving_gpus -= offer_of(p, &p->v->fleet[k])->gpus;
		p->serving_spend -= price_of(offer_of(p, &p->v->fleet[k]), p->v->fleet[k].market);
		plan_add(p, ACTION_DRAIN, p->v->fleet[k].offer, 1, p->v->fleet[k].id, "drain %lld (%s, busy): %s",
		    (long long)p->v->fleet[k].id, offer_of(p, &p->v->fleet[k])->name, why);
	}
}

/* One way to launch: an offer on a market, and its expected cost. */
struct candidate {
	int offer;
	enum market market;
	double per_work_s; /* USD per second of reference work */
	int64_t count;     /* chosen in this launch */
};

#define MAX_CANDIDATES 128

double plan_cost_per_work_s(const struct offer *o, enum market m, int64_t checkpoint_every_ms,
			    double run_ref_s, double job_ref_s, double setup_s)
{
	double speed = o->speed > 0 ? o->speed : 1, run_s, boot_s = (double)o->boot_ms / 1000.0 + setup_s, lost_s = 0;

	/* Jobs estimated at 0 s still take a launch: priced as a second of
	 * work, not divided by zero. */
	run_ref_s = run_ref_s > 1 ? run_ref_s : 1;
	run_s = run_ref_s / speed;

	if (m == MARKET_SPOT) {
		double job_s = job_ref_s / speed, ckpt_s = (double)checkpoint_every_ms / 1000.0;
		lost_s = run_s * o->reclaims_per_hour / 3600.0 * ((job_s < ckpt_s ? job_s : ckpt_s) / 2 + boot_s);
	}
	return price_of(o, m) / 3600.0 * (boot_s + run_s + lost_s) / run_ref_s;
}

/* How many jobs of class c an instance runs at once on `gpus` of its GPUs:
 * one where the view does not pack; a shared type's ⌊gpus / share⌋ (the
 * slack: three shares of 1/3 fill a GPU). */
static int64_t jobs_on(const struct planner *p, const struct plan_class *c, int gpus)
{
	if (!p->v->packs)
		return 1;
	if (c->gpu_share > 0 && c->gpu_share < 1)
		return (int64_t)((double)gpus / c->gpu_share + 1e-9);
	return gpus / (c->gpus > 1 ? c->gpus : 1);
}

/* Offer k's price per reference second of work: plan_cost_per_work_s,
 * and the idle hold that follows the work, billed too (docs/COST.md). An
 * instance that runs n jobs side by side does n times the work in the
 * same time, its boot, hold and reclaims' losses shared: 1/n the price per
 * work. */
static double cost_per_work_s(const struct planner *p, const struct plan_class *c, int k, enum market m,
			      double run_ref_s, double job_ref_s)
{
	const struct offer *o = &p->v->offers[k];
	double hold_s = p->v->idle_timeout_ms ? (double)p->v->idle_timeout_ms[k] / 1000.0 : 0;
	double tail = price_of(o, m) / 3600.0 * hold_s / (run_ref_s > 1 ? run_ref_s : 1);

	return (plan_cost_per_work_s(o, m, p->s->checkpoint_every_ms, run_ref_s, job_ref_s, c->setup_s) + tail) /
	       (double)jobs_on(p, c, o->gpus);
}

static int by_cost(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->per_work_s != y->per_work_s)
		return x->per_work_s < y->per_work_s ? -1 : 1;
	if (x->offer != y->offer)
		return x->offer - y->offer;
	return (int)x->market - (int)y->market;
}

/* The ways to launch for class c, cheapest first. spot_ok = 0 leaves spot
 * out; *spot_failed tells whether every fitting spot offer was left out
 * because its launches fail. */
static int candidates(const struct planner *p, const struct plan_class *c, int spot_ok,
		      double run_ref_s, double job_ref_s, struct candidate *out, int *spot_failed)
{
	int n = 0, spot_fits = 0, spot_failing = 0;

	for (int k = 0; k < p->v->noffers && n < MAX_CANDIDATES - 1; k++) {
		const struct offer *o = &p->v->offers[k];
		if (!plan_fits(o, c))
			continue;
		for (int m = 0; m < MARKET_COUNT; m++) {
			if (o->price[m] < 0 || (p->s->max_price > 0 && o->price[m] > p->s->max_price))
				continue;
			if (m == MARKET_SPOT) {
				if (!p->s->use_spot || exp(-o->reclaims_per_hour) < p->s->min_reliability)
					continue;
				spot_fits++;
				if (o->resting[m]) {
					spot_failing++;
					continue;
				}
				if (!spot_ok)
					continue;
			} else if (o->resting[m]) {
				continue;
			}
			out[n++] = (struct candidate){k, (enum market)m,
						      cost_per_work_s(p, c, k, (enum market)m, run_ref_s, job_ref_s), 0};
		}
	}
	*spot_failed = spot_fits > 0 && spot_failing == spot_fits;
	sort_small(out, (size_t)n, sizeof *out, by_cost);
	return n;
}

/* May one more instance of candidate c start within the hard limits? */
static const char *limit_hit(const struct planner *p, const struct candidate *c)
{
	const struct offer *o = &p->v->offers[c->offer];

	if (p->count + 1 > p->s->max_instances)
		return "max_instances";
	if (p->gpus + o->gpus > p->s->max_gpus)
		return "max_gpus";
	if (p->s->max_spend_per_hour > 0 && p->spend + price_of(o, c->market) > p->s->max_spend_per_hour + 1e-9)
		return "max_spend_per_hour";
	if (o->max_instances && p->per_offer[c->offer] + 1 > o->max_instances)
		return "the offer's max_instances";
	if (p->team >= 0 && (p->v->over_budget >> p->team & 1))
		return "the team's monthly budget, spent";
	if (p->team >= 0 && p->t->room[p->team] < p->team_gpus)
		return "the team's quota and borrowing";
	return NULL;
}

/* How far one more spot instance of the offer would be over its share
 * of the spot fleet, in instances (<= 0: within it). */
static double over_share(const struct planner *p, int offer)
{
	return p->spot_per_offer[offer] + 1 - p->s->max_share_per_offer * (double)(p->spot + 1);
}

/* Spot launches spread over offers: no offer above max_share_per_offer of
 * the spot fleet, unless no other spot offer can take the instance with
 * less excess. A share that cannot be met (fewer spot offers than
 * 1 / share) still spreads the instances evenly, not onto one offer. */
static int share_ok(const struct planner *p, const struct candidate *all, int n, int k)
{
	const struct candidate *c = &all[k];
	double over;

	if (c->market != MARKET_SPOT || (over = over_share(p, c->offer)) <= 1e-9)
		return 1;
	for (int j = 0; j < n; j++) {
		if (j != k && all[j].market == MARKET_SPOT && all[j].offer != c->offer && !limit_hit(p, &all[j]) &&
		    over_share(p, all[j].offer) < over - 1e-9)
			return 0;
	}
	return 1;
}

static void count_launch(struct planner *p, struct candidate *c)
{
	const struct offer *o = &p->v->offers[c->offer];

	c->count++;
	p->count++;
	p->serving++;
	p->gpus += o->gpus;
	p->spend += price_of(o, c->market);
	p->serving_gpus += o->gpus;
	p->serving_spend += price_of(o, c->market);
	p->per_offer[c->offer]++;
	if (c->market == MARKET_SPOT) {
		p->spot_per_offer[c->offer]++;
		p->spot++;
	}
	if (p->team >= 0)
		p->t->room[p->team] -= p->team_gpus;
}

/* Decimals that show at least two significant digits of a small price:
 * $0.0404, but $0.0000283 rather than $0.0000. */
static int decimals(double usd)
{
	int d = 4;

	for (; usd > 0 && usd < 0.001 && d < 12; usd *= 10)
		d++;
	return d;
}

/* "t4 spot $0.0021/item, a10g spot $0.0030/item, ...": what was compared. */
static void compared(const struct planner *p, const struct candidate *all, int n, double work_per_item,
		     char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && k < 4 && len < size; k++) {
		const struct offer *o = &p->v->offers[all[k].offer];
		double usd = all[k].per_work_s * work_per_item;
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s $%.*f/%s", k ? ", " : "", o->name,
					market_name(all[k].market), decimals(usd), usd,
					work_per_item == 1 ? "work-s" : "item");
	}
}

/* What the warm pool launches for: any instance, counted by instances. */
static const struct plan_class warm_class = {.lane = "", .gpus = 0, .min_vram_gb = 0};

/* Launches instances for `want` jobs of class c (the warm pool: `want`
 * instances), each on the cheapest way per item that the limits and the
 * spot spread allow; an instance that runs jobs side by side takes as many
 * of them as its GPUs hold. */
static void launch(struct planner *p, const struct plan_class *c, int64_t want, int spot_ok,
		   double run_ref_s, double job_ref_s, const char *why)
{
	struct candidate all[MAX_CANDIDATES];
	double work_per_item = c->items > 0 ? c->work_s / (double)c->items : 1;
	const char *capped = NULL, *market_note = NULL;
	char costs[300], over[80] = "";
	int spot_failed, n = candidates(p, c, spot_ok, run_ref_s, job_ref_s, all, &spot_failed);
	int64_t placed = 0;

	if (n == 0 && !spot_ok) {
		/* Nothing fitting is sold on demand: spot is better than nothing. */
		n = candidates(p, c, 1, run_ref_s, job_ref_s, all, &spot_failed);
		spot_ok = 1;
	}
	for (;;) {
		for (; placed < want; placed++) {
			int pick = -1;
			for (int k = 0; k < n && pick < 0; k++) {
				const char *hit = limit_hit(p, &all[k]);
				if (hit)
					capped = capped ? capped : hit;
				else if (share_ok(p, all, n, k))
					pick = k;
			}
			if (pick < 0)
				break;
			count_launch(p, &all[pick]);
			if (c != &warm_class)
				placed += jobs_on(p, c, p->v->offers[all[pick].offer].gpus) - 1;
		}
		/* On demand passes a hard limit that spot may not: better a
		 * spot instance than none. */
		if (placed > 0 || spot_ok)
			break;
		n = candidates(p, c, 1, run_ref_s, job_ref_s, all, &spot_failed);
		spot_ok = 1;
		market_note = "; spot: on demand would pass a limit";
	}
	if (spot_failed)
		market_note = "; spot launches of every fitting offer failed, so on demand";
	else if (!spot_ok)
		market_note = "; on demand: the oldest job is about to miss its wait target";
	else if (!market_note)
		market_note = "";
	costs[0] = '\0';
	if (!p->v->no_reasons) {
		compared(p, all, n, work_per_item, costs, sizeof costs);
		if (p->v->work_per_launch_s > 0 && run_ref_s <= p->v->work_per_launch_s)
			snprintf(over, sizeof over, " (a boot shared by the %.0f s of work a launch did so far)",
				 p->v->work_per_launch_s);
	}
	for (int k = 0; k < n; k++) {
		const struct offer *o = &p->v->offers[all[k].offer];
		struct action *a;
		if (!all[k].count)
			continue;
		a = plan_add(p, ACTION_LAUNCH, all[k].offer, (int)all[k].count, 0,
			"launch %lld x %s (%s, $%.2f/h): %s; cheapest per item%s: %s%s%s%s", (long long)all[k].count,
			o->name, market_name(all[k].market), price_of(o, all[k].market), why, over, costs, market_note,
			placed < want && capped ? "; capped by " : "", placed < want && capped ? capped : "");
		if (a) {
			a->market = all[k].market;
			a->lane = c->lane;
		}
	}
}

/* The estimated time left of a busy instance's job. One that has run
 * past its estimate is no longer about to end: it is taken to run as long
 * again as it has run, the median life left of the heavy-tailed run
 * times that job traces show (a job that has run an hour is likelier to
 * run another than one that has run a minute). Taking it to end at once
 * would leave its work waiting behind it, with no launch. */
static double busy_remaining_s(const struct planner *p, const struct plan_instance *i)
{
	if (i->busy_until_ms > p->v->now_ms)
		return (double)(i->busy_until_ms - p->v->now_ms) / 1000.0;
	return i->busy_since_ms && i->busy_since_ms < p->v->now_ms ? (double)(p->v->now_ms - i->busy_since_ms) / 1000.0
								     : 0;
}

/* Seconds of work an instance can take on within the next target_s; one
 * still booting starts its handler's setup_s after. */
static double capacity_within(const struct planner *p, const struct plan_instance *i, double target_s,
			      double setup_s)
{
	double boot_left, c = target_s;

	switch (i->state) {
	case INST_BUSY:
		c = target_s - busy_remaining_s(p, i);
		break;
	case INST_REQUESTED:
	case INST_BOOTING:
		boot_left = (double)(offer_of(p, i)->boot_ms - (p->v->now_ms - i->launched_ms)) / 1000.0;
		c = target_s - (boot_left > 0 ? boot_left : 0) - setup_s;
		break;
	default:
		break;
	}
	return c > 0 ? c * offer_of(p, i)->speed : 0;
}

static int class_order(const void *a, const void *b)
{
	const struct plan_class *x = *(const struct plan_class *const *)a, *y = *(const struct plan_class *const *)b;

	if (x->lane_rank != y->lane_rank)
		return x->lane_rank - y->lane_rank;
	return y->gpus - x->gpus; /* larger needs first: they fit fewer instances */
}

/* The boot of the quickest fitting offer: what a launch can do at best. */
static double fastest_boot_s(const struct planner *p, const struct plan_class *c, double *speed)
{
	double best = -1;

	*speed = 1;
	for (int k = 0; k < p->v->noffers; k++) {
		const struct offer *o = &p->v->offers[k];
		if (plan_fits(o, c) && (best < 0 || (double)o->boot_ms / 1000.0 < best)) {
			best = (double)o->boot_ms / 1000.0;
			*speed = o->speed > 0 ? o->speed : 1;
		}
	}
	return best;
}

static const char *expected_note(int64_t n, char *buf, size_t size)
{
	snprintf(buf, size, " and %lld expected", (long long)n);
	return buf;
}

static void scale_up(struct planner *p, const struct plan_class *c)
{
	double target_s = (double)c->wait_target_ms / 1000.0, capacity = 0, shortfall, per_launch, boot_s, speed;
	double job_ref_s = c->jobs > 0 ? c->work_s / (double)c->jobs : 0, horizon_s, work_s = c->work_s;
	int64_t matched = 0, waiting_ms = p->v->now_ms - c->oldest_ms, need = 0, jobs = c->jobs;
	int ready = 0, k;
	char why[240], note[40];

	if ((boot_s = fastest_boot_s(p, c, &speed)) < 0)
		return;
	/* A launch takes jobs once its handler is ready too: the cold start. */
	boot_s += c->setup_s;
	p->team = p->s->nteams ? plan_team_of(p, c->team) : -1;
	p->team_gpus = c->gpus > 1 ? c->gpus : 1;
	for (int o = 0; o < p->v->noffers; o++)
		p->fits[o] = (char)plan_fits(&p->v->offers[o], c);
	/* A launch is up after its boot and then has the target to work: it
	 * helps only the work still waiting then. So the horizon is the boot
	 * plus the target, and launches are for what the fleet up or booting
	 * cannot do within it, at a target's worth of work each. */
	horizon_s = boot_s + target_s;
	/* Work keeps coming at the rate it came lately: what arrives within
	 * the horizon needs capacity too, and holds idle instances for it. */
	if (c->arrival_jobs_per_s > 0) {
		double expected = c->arrival_jobs_per_s * horizon_s, kept = floor(expected + EXPECTED_JOB_ROUNDING);
		work_s += c->arrival_work_per_s * horizon_s;
		jobs += (int64_t)kept;
		if (job_ref_s <= 0)
			job_ref_s = c->arrival_work_per_s / c->arrival_jobs_per_s;
		/* The rate decays while nothing arrives: look again when one
		 * instance fewer is expected to be needed. */
		if (kept >= 1)
			plan_wake_at(p, p->v->now_ms + 1 +
				(int64_t)((double)p->s->arrival_window_ms * log(expected / (kept - EXPECTED_JOB_ROUNDING))));
	}
	for (k = 0; k < p->v->nfleet && (capacity < work_s || matched == 0) && matched < jobs; k++) {
		const struct plan_instance *i = &p->v->fleet[k];
		int busy = i->state == INST_BUSY;
		int64_t beside, slots;
		double cap;
		if (p->taken[k] || i->state == INST_DRAINING || !p->fits[i->offer])
			continue;
		/* The jobs it takes at once: those its GPUs hold, or beside its
		 * jobs those its free GPUs hold. Only for an instance that may
		 * take them: two divisions, for each instance of each plan. */
		beside = busy && p->v->packs ? jobs_on(p, c, i->free_gpus) : 0;
		slots = busy ? beside : jobs_on(p, c, offer_of(p, i)->gpus);
		cap = capacity_within(p, i, horizon_s, c->setup_s);
		/* A busy one whose job outlasts the horizon takes none of these
		 * jobs within it, but on its free GPUs: it must not stand in
		 * for a launch. */
		if (cap <= 0 && busy && beside == 0)
			continue;
		p->taken[k] = 1;
		capacity += busy ? cap + (double)beside * horizon_s * offer_of(p, i)->speed : cap * (double)slots;
		/* A free one takes one of these jobs: its GPUs come out of the
		 * team's room as a launch's would. */
		if (p->team >= 0 && i->state != INST_BUSY)
			p->t->room[p->team] -= p->team_gpus;
		/* Free before a launch would be: the oldest job is better off waiting for it. */
		ready += !busy || beside > 0 || busy_remaining_s(p, i) < boot_s;
		matched += busy ? (cap > 0) + beside : slots;
	}
	shortfall = work_s - capacity;
	/* Queued jobs that no instance can take are a shortfall however
	 * little their work: jobs estimated at 0 s still need an instance. */
	if (shortfall > 0 || (matched == 0 && c->jobs > 0)) {
		per_launch = (horizon_s - boot_s) * speed;
		need = per_launch > 0 && shortfall > 0 ? (int64_t)ceil(shortfall / per_launch) : 1;
		if (need > jobs - matched)
			need = jobs - matched;
		if (!p->v->no_reasons)
			snprintf(why, sizeof why,
			 "lane %s: %lld jobs queued%s, %.0f s of work, cannot drain within a %.0f s %s and its"
			 " %.0f s wait target with %lld instances up or booting", c->lane, (long long)c->jobs,
			 jobs > c->jobs ? expected_note(jobs - c->jobs, note, sizeof note) : "", work_s, boot_s,
			 c->setup_s > 0 ? "boot and handler setup" : "boot", target_s, (long long)matched);
	}
	if (need <= 0 && c->jobs > 0 && waiting_ms >= c->wait_target_ms && ready == 0) {
		need = 1;
		if (!p->v->no_reasons)
			snprintf(why, sizeof why, "lane %s: oldest job waited %.0f s, past its %.0f s wait target,"
			 " and no fitting instance is free or booting", c->lane, (double)waiting_ms / 1000.0,
			 target_s);
	} else if (need <= 0 && c->jobs > 0 && ready == 0) {
		plan_wake_at(p, c->oldest_ms + c->wait_target_ms);
	}
	if (need > 0) {
		/* Spot unless the oldest job is about to miss its target: an
		 * on-demand instance is not reclaimed while it catches up. */
		int spot_ok = waiting_ms < c->wait_target_ms * 8 / 10;
		double run_ref_s = shortfall > 0 ? shortfall / (double)need : job_ref_s;
		run_ref_s = run_ref_s > job_ref_s ? run_ref_s : job_ref_s;
		launch(p, c, need, spot_ok, run_ref_s > p->v->work_per_launch_s ? run_ref_s : p->v->work_per_launch_s,
		       job_ref_s, why);
	}
}

static void keep_warm(struct planner *p)
{
	int floor_n = p->warm_floor;
	char why[100];

	p->team = -1; /* the warm pool is no team's */

	if (p->s->warm.n)
		plan_wake_at(p, warm_next_change(&p->s->warm, p->v->now_ms));
	if (p->serving >= floor_n)
		return;
	if (!p->v->no_reasons)
		snprintf(why, sizeof why, "warm pool floor of %d for this hour", floor_n);
	/* Priced as an hour of work: a warm instance waits for whatever comes. */
	launch(p, &warm_class, floor_n - p->serving, 1, 3600, 60, why);
}

/* idle_left: idle instances not yet decided on, this one included. */
static int64_t idle_timeout_of(const struct planner *p, const struct plan_instance *i, int idle_left)
{
	/* Decay: instances of even id go at t1, odd ones at t2, so that about
	 * half of an idle fleet is released at each. */
	if (p->s->idle_decay)
		return i->id % 2 == 0 ? p->s->decay_t1_ms : p->s->decay_t2_ms;
	/* Surplus: while more than one instance is idle, the longest idle go
	 * after the shorter timeout; the last one waits the full one, to take
	 * the next arrival warm. */
	int64_t full = p->v->idle_timeout_ms[i->offer],
		surplus = p->v->idle_surplus_ms ? p->v->idle_surplus_ms[i->offer] : p->s->idle_surplus_ms;

	if (surplus > 0 && surplus < full && idle_left > 1)
		return surplus;
	return full;
}

int64_t plan_idle_timeout_longest(const int64_t *ms, int noffers)
{
	int64_t longest = 0;

	for (int k = 0; k < noffers; k++) {
		if (ms[k] > longest)
			longest = ms[k];
	}
	return longest;
}

/* When the scaler releases an idle instance whose timeout is timeout:
 * then, or leave_grace_ms later when its worker leaves by itself at
 * that moment. A worker is told the longest of the offers' timeouts,
 * none under a warm floor (it would leave the floor), and it knows
 * nothing of the surplus timeout or the decay, which the scaler alone
 * carries out. */
static int64_t release_due(const struct planner *p, const struct plan_instance *i, int64_t timeout)
{
	int64_t due = i->idle_since_ms + timeout;

	if (p->v->leave_grace_ms > 0 && !p->s->idle_decay && p->warm_floor == 0 &&
	    timeout == plan_idle_timeout_longest(p->v->idle_timeout_ms, p->v->noffers))
		due += p->v->leave_grace_ms;
	return due;
}

static int longest_idle_first(const void *a, const void *b)
{
	const struct idle_entry *x = a, *y = b;

	if (x->since != y->since)
		return x->since < y->since ? -1 : 1;
	return x->k - y->k;
}

static void scale_down(struct planner *p)
{
	int floor_n = p->warm_floor, n = 0;
	int64_t first_due = INT64_MAX; /* the earliest an idle one's timeout ends */
	struct idle_entry *idle = p->idle;
	char why[120];

	for (int j = 0; j < p->nidle; j++) {
		if (!p->taken[p->idle[j].k])
			idle[n++] = p->idle[j];
	}
	/* Most plans release nothing: when no timeout has ended, there is no
	 * order to find (the simulator calls plan() millions of times). The
	 * longest idle one has the shortest timeout, but under decay, where it
	 * is fixed by id. */
	for (int j = 0; j < n; j++) {
		const struct plan_instance *i = &p->v->fleet[idle[j].k];
		int64_t due = release_due(p, i, idle_timeout_of(p, i, p->s->idle_decay ? 1 : n));
		if (due < first_due)
			first_due = due;
	}
	if (n > 0 && first_due > p->v->now_ms) {
		plan_wake_at(p, first_due);
		for (int j = 0; j < n; j++)
			p->taken[idle[j].k] = 1;
		n = 0;
	}
	/* The idle ones, longest idle first: sorted once, not searched for
	 * again at each release. */
	sort_small(idle, (size_t)n, sizeof *idle, longest_idle_first);
	for (int j = 0; j < n; j++) {
		int k = idle[j].k;
		const struct plan_instance *i = &p->v->fleet[k];
		int64_t timeout = idle_timeout_of(p, i, n - j), idle_ms = p->v->now_ms - i->idle_since_ms,
			due = release_due(p, i, timeout);

		if (p->v->now_ms < due) {
			/* Not yet: come back when it expires. */
			p->taken[k] = 1;
			plan_wake_at(p, due);
			continue;
		}
		if (p->serving <= floor_n) {
			p->taken[k] = 1;
			continue;
		}
		if (!p->v->no_reasons)
			snprintf(why, sizeof why, "idle %.0f s, past its %.0f s idle timeout%s",
				 (double)idle_ms / 1000.0, (double)timeout / 1000.0, p->s->idle_decay ? " (decay)" : "");
		release(p, k, why);
	}
	for (int k = 0; p->ndraining > 0 && k < p->v->nfleet; k++) {
		const struct plan_instance *i = &p->v->fleet[k];
		if (i->state == INST_DRAINING && !i->running && !p->taken[k])
			release(p, k, "drained");
	}
}

void plan(const struct plan_view *v, struct plan_result *out)
{
	struct planner p = {.v = v, .s = v->settings, .out = out, .team = -1};
	struct plan_teams teams;
	size_t nf = (size_t)v->nfleet + 1, no = (size_t)v->noffers + 1, nc = (size_t)v->nclasses + 1;
	/* One block for the scratch arrays, widest alignment first, on the
	 * stack for the usual fleet: the simulator calls plan() millions of
	 * times. Only the counters and the taken flags need zeros; the
	 * lists are written before they are read. */
	size_t zeroed = KINDS * no * sizeof(int) + nf; /* kinds and taken */
	size_t size = nf * sizeof *p.idle + nc * sizeof(struct plan_class *) + (2 * no + nf) * sizeof(int) + zeroed + no;
	_Alignas(max_align_t) char small[4096];
	char *block = size <= sizeof small ? small : mem_alloc(size);
	const struct plan_class **order;

	/* Not the whole result: each action is filled in full when added. */
	out->n = 0;
	out->next_ms = 0;
	if ((out->nomem = !block))
		return;
	order = (const struct plan_class **)(block + nf * sizeof *p.idle);
	p.idle = (struct idle_entry *)block;
	p.per_offer = (int *)(order + nc);
	p.spot_per_offer = p.per_offer + no;
	p.boots = p.spot_per_offer + no;
	p.kinds = p.boots + nf;
	p.taken = (char *)(p.kinds + KINDS * no);
	p.fits = p.taken + nf;
	memset(p.kinds, 0, zeroed);
	p.warm_floor = p.s->warm.n ? warm_floor(&p.s->warm, v->now_ms) : 0;
	tally(&p);
	if (p.s->nteams) {
		memset(&teams, 0, sizeof teams);
		p.t = &teams;
		plan_share_teams(&p);
	}
	expire_boots(&p);
	enforce_limits(&p);
	for (int k = 0; k < v->nclasses; k++)
		order[k] = &v->classes[k];
	sort_small(order, (size_t)v->nclasses, sizeof *order, class_order);
	for (int k = 0; k < v->nclasses; k++)
		scale_up(&p, order[k]);
	if (p.s->nteams)
		plan_preempt(&p);
	keep_warm(&p);
	scale_down(&p);
	if (block != small)
		free(block);
}
