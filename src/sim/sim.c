/* The discrete-event simulator (see sim.h).
 *
 * Events in one heap: job arrivals are read from the sorted trace, and
 * instance boots, job ends and spot reclaims are pushed as they are
 * scheduled. After each batch of events at one instant, idle instances
 * take queued jobs in serve's order (lane, priority, arrival), and the
 * policy looks when it is due. The ebb policy builds plan()'s view from
 * the simulated fleet and queue and carries out its actions. */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/idle.h"
#include "policy/plan.h"
#include "common/rng.h"

/* The KEDA baseline's history of recommendations is cut to its last
 * KEDA_HIST_KEEP when it passes KEDA_HIST_MAX. */
#define KEDA_HIST_MAX 4096
#define KEDA_HIST_KEEP 2048

enum ev_kind { EV_READY, EV_FINISH, EV_RECLAIM };

struct event {
	int64_t at;
	enum ev_kind kind;
	int inst;
	int64_t gen; /* the instance's generation when scheduled: stale if it moved on */
};

enum sstate { S_BOOTING, S_IDLE, S_BUSY, S_GONE };

struct sinst {
	int offer;
	enum market market;
	enum sstate state;
	int draining;
	int64_t launched, idle_since, run_start, run_end; /* run_end: when its job ends */
	int job;
	int64_t gen;
};

struct sjob {
	int64_t submit, left_ms; /* reference work still to do */
	int64_t first_start;     /* -1 until it first runs */
	int cls;
};

/* Queued jobs of one class (GPUs, lane), oldest first. */
struct squeue {
	int gpus, lane;
	int lane_rank;          /* the lane's, looked up once: plan() is */
	int64_t wait_target_ms; /* called millions of times */
	int *items;
	size_t head, len, cap;
	double work_ms; /* reference work of the queued jobs */
	/* Jobs and reference work submitted, each weighted by
	 * exp(-age / arrival_window) as of arrivals_at: ebb's arrival rate. */
	double arrived_jobs, arrived_work_ms;
	int64_t arrivals_at;
};

struct sim {
	/* ebb's view and plan, reused from call to call */
	struct plan_class *view_classes;
	/* ebb's view of the fleet, kept in step with alive[] (same order,
	 * same length) as instances change, rather than built for each of
	 * the million calls of a long trace. NULL for the other policies. */
	struct plan_instance *view_fleet;
	size_t view_cap_classes;
	struct plan_result *plan_result;
	const struct trace *t;
	const struct policy *p;
	const struct sim_options *o;
	struct sim_result *r;
	int64_t now;
	uint64_t rng;
	struct event *heap;
	size_t nheap, capheap;
	struct sinst *inst;
	int ninst, capinst, live, busy;
	int *idle, nidle; /* the instances in S_IDLE, in index order: dispatch's to look at */
	int *alive; /* the instances not gone, in launch order: live of them */
	struct sjob *jobs;
	struct squeue *q;
	int nq;
	int64_t queued;
	double spend_per_ms, cost; /* running cost, for samples */
	int64_t *waits;
	size_t nwaits;
	int64_t next_arrival;
	size_t done;
	/* policy state */
	int64_t next_policy, last_policy;
	int dirty;
	int starting; /* ebb's first plan, before any job: its launches are up already */
	int64_t gaps[1000];
	size_t ngaps;
	int64_t last_submit, idle_timeout_ms;
	int64_t keda_last_active;
	int64_t *keda_hist_at, *keda_hist_n;
	size_t keda_nhist;
	double util_busy_ms, util_alive_ms; /* integrated over the window */
	int64_t util_since;
	int64_t next_sample;
	size_t cap_samples; /* room in r->samples */
	int nomem; /* an allocation failed: the replay stops, sim_run fails */
	/* The last job end, or the last moment with no work outstanding; the
	 * replay stops when work has waited stall_ms past it (sim.h). */
	int64_t progress_ms, stall_ms;
};

/* realloc that marks the replay out of memory when it fails; the caller
 * gives up its step and keeps what it had, and the replay stops at the
 * top of its loop. */
static void *grown(struct sim *s, void *p, size_t n, size_t size)
{
	void *q = n <= SIZE_MAX / size ? realloc(p, n * size) : NULL;

	if (!q)
		s->nomem = 1;
	return q;
}

/* ---- heap ---- */

static int before(const struct event *a, const struct event *b)
{
	if (a->at != b->at)
		return a->at < b->at;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->inst < b->inst;
}

static void push(struct sim *s, struct event e)
{
	size_t i;

	if (s->nheap == s->capheap) {
		size_t cap = s->capheap ? s->capheap * 2 : 256;
		struct event *heap = grown(s, s->heap, cap, sizeof *heap);
		if (!heap)
			return;
		s->heap = heap;
		s->capheap = cap;
	}
	i = s->nheap++;
	while (i > 0 && before(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct event pop(struct sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

/* ---- the queue ---- */

/* The class of (gpus, lane), made if new; -1 when out of memory. */
static int class_of(struct sim *s, int gpus, int lane)
{
	struct squeue *q;

	for (int k = 0; k < s->nq; k++) {
		if (s->q[k].gpus == gpus && s->q[k].lane == lane)
			return k;
	}
	if (!(q = grown(s, s->q, (size_t)s->nq + 1, sizeof *q)))
		return -1;
	s->q = q;
	memset(&s->q[s->nq], 0, sizeof *s->q);
	s->q[s->nq].gpus = gpus;
	s->q[s->nq].lane = lane;
	s->q[s->nq].lane_rank = config_lane_rank(&s->p->cfg, s->t->lanes[lane]);
	if (s->q[s->nq].lane_rank < 0)
		s->q[s->nq].lane_rank = s->p->cfg.nlanes;
	s->q[s->nq].wait_target_ms = config_wait_target_ms(&s->p->cfg, s->t->lanes[lane]);
	return s->nq++;
}

static void enqueue(struct sim *s, int job, int front)
{
	struct squeue *q = &s->q[s->jobs[job].cls];

	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		int *items = grown(s, NULL, cap, sizeof *items);
		if (!items)
			return;
		for (size_t i = 0; i < q->len; i++)
			items[i] = q->items[(q->head + i) % q->cap];
		free(q->items);
		q->items = items;
		q->cap = cap;
		q->head = 0;
	}
	if (front) {
		q->head = (q->head + q->cap - 1) % q->cap;
		q->items[q->head] = job;
	} else {
		q->items[(q->head + q->len) % q->cap] = job;
	}
	q->len++;
	q->work_ms += (double)s->jobs[job].left_ms;
	s->queued++;
}

static int dequeue(struct sim *s, int k)
{
	struct squeue *q = &s->q[k];
	int job = q->items[q->head];

	q->head = (q->head + 1) % q->cap;
	q->len--;
	q->work_ms -= (double)s->jobs[job].left_ms;
	s->queued--;
	return job;
}

/* ---- money ---- */

static const struct offer *offer_of(const struct sim *s, const struct sinst *i)
{
	return &s->o->offers[i->offer];
}

static double price_per_ms(const struct sim *s, const struct sinst *i)
{
	double p = offer_of(s, i)->price[i->market];
	return p > 0 ? p / 3600000.0 : 0;
}

/* Advances the running cost and the utilisation integrals to `to`. */
static void advance(struct sim *s, int64_t to)
{
	double dt = (double)(to - s->now);

	if (dt <= 0)
		return;
	s->cost += s->spend_per_ms * dt;
	s->util_alive_ms += dt * s->live;
	s->util_busy_ms += dt * s->busy;
	s->now = to;
}

/* Samples up to `to`: the state holds still between events, so a sample
 * between two of them is the state now, with the cost run on. */
static void sample(struct sim *s, int64_t to)
{
	while (s->o->sample_ms && s->next_sample <= to) {
		struct sim_sample *x;
		/* Room doubles: a realloc per sample copied them all each
		 * time, which the sanitizers' allocators do not avoid. */
		if (s->r->nsamples == s->cap_samples) {
			size_t cap = s->cap_samples ? s->cap_samples * 2 : 64;
			if (!(x = grown(s, s->r->samples, cap, sizeof *x)))
				return;
			s->r->samples = x;
			s->cap_samples = cap;
		}
		x = &s->r->samples[s->r->nsamples++];
		memset(x, 0, sizeof *x);
		x->t_ms = s->next_sample;
		x->queued = (int)s->queued;
		x->cost = s->cost + s->spend_per_ms * (double)(s->next_sample - s->now);
		for (int a = 0; a < s->live; a++)
			x->instances[s->inst[s->alive[a]].offer]++;
		s->next_sample += s->o->sample_ms;
	}
}

/* ---- instances ---- */

/* Where k is, or would go, in the sorted array a of n. */
static int position(const int *a, int n, int k)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (a[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Instance k becomes idle now, and joins the idle list. */
static void make_idle(struct sim *s, int k)
{
	int at = position(s->idle, s->nidle, k);

	memmove(&s->idle[at + 1], &s->idle[at], (size_t)(s->nidle - at) * sizeof *s->idle);
	s->idle[at] = k;
	s->nidle++;
	s->inst[k].state = S_IDLE;
	s->inst[k].idle_since = s->now;
}

/* Instance k leaves the idle list (its caller sets its new state). */
static void drop_idle(struct sim *s, int k)
{
	int at = position(s->idle, s->nidle, k);

	memmove(&s->idle[at], &s->idle[at + 1], (size_t)(s->nidle - 1 - at) * sizeof *s->idle);
	s->nidle--;
}

/* Instance k as plan() sees it, in ebb's view. */
static void sync_view(struct sim *s, int k)
{
	static const enum instance_state map[] = {INST_BOOTING, INST_IDLE, INST_BUSY, INST_TERMINATED};
	const struct sinst *i = &s->inst[k];

	if (!s->view_fleet)
		return;
	/* Launch order is index order, and removals keep the order: alive[]
	 * is sorted. */
	s->view_fleet[position(s->alive, s->live, k)] = (struct plan_instance){
		.id = k + 1, .offer = i->offer, .market = i->market,
		.state = i->draining ? INST_DRAINING : map[i->state], .running = i->state == S_BUSY,
		.launched_ms = i->launched, .idle_since_ms = i->idle_since,
		.busy_until_ms = i->state == S_BUSY ? i->run_end : 0,
	};
}

/* Room for twice the instances in each array kept per instance; -1 when
 * out of memory (those grown keep their room for the next try). */
static int grow_fleet(struct sim *s)
{
	size_t cap = s->capinst ? (size_t)s->capinst * 2 : 64;
	struct sinst *inst = grown(s, s->inst, cap, sizeof *inst);
	int *alive, *idle;
	struct plan_instance *view;

	if (!inst)
		return -1;
	s->inst = inst;
	if (!(alive = grown(s, s->alive, cap, sizeof *alive)))
		return -1;
	s->alive = alive;
	if (!(idle = grown(s, s->idle, cap, sizeof *idle)))
		return -1;
	s->idle = idle;
	if (s->view_fleet) {
		if (!(view = grown(s, s->view_fleet, cap, sizeof *view)))
			return -1;
		s->view_fleet = view;
	}
	s->capinst = (int)cap;
	return 0;
}

/* The new instance's index; -1 when out of memory. */
static int launch(struct sim *s, int offer, enum market m, int warm)
{
	const struct offer *o = &s->o->offers[offer];
	struct sinst *i;
	int k;

	if (s->ninst == s->capinst && grow_fleet(s) != 0)
		return -1;
	k = s->ninst++;
	i = &s->inst[k];
	memset(i, 0, sizeof *i);
	i->offer = offer;
	i->market = m;
	i->launched = s->now;
	i->job = -1;
	i->state = S_BOOTING;
	s->alive[s->live++] = k;
	s->spend_per_ms += price_per_ms(s, i);
	if (s->live > s->r->max_instances)
		s->r->max_instances = s->live;
	if (warm) {
		make_idle(s, k);
	} else {
		s->r->cold_starts++;
		push(s, (struct event){s->now + o->boot_ms, EV_READY, k, i->gen});
	}
	sync_view(s, k);
	if (m == MARKET_SPOT && o->reclaims_per_hour > 0) {
		double hours = -log(1.0 - rng_uniform(&s->rng)) / o->reclaims_per_hour;
		push(s, (struct event){s->now + (int64_t)(hours * 3600000.0), EV_RECLAIM, k, i->gen});
	}
	return k;
}

/* What instance k, stopping now, has cost: its lifetime billed at its
 * price. */
static void bill(struct sim *s, int k)
{
	const struct sinst *i = &s->inst[k];
	const struct offer *o = offer_of(s, i);
	int64_t lifetime = s->now - i->launched, billed = offer_billed_ms(o, lifetime);

	s->spend_per_ms -= price_per_ms(s, i);
	s->cost += (double)(billed - lifetime) * price_per_ms(s, i);
	s->r->cost_usd += offer_cost(o, i->market, billed);
	s->r->gpu_hours_billed += (double)billed * o->gpus / 3600000.0;
}

/* Stops an instance; a job on it loses the work since its last
 * checkpoint and goes back to the head of its queue. */
static void stop(struct sim *s, int k)
{
	struct sinst *i = &s->inst[k];
	const struct offer *o = offer_of(s, i);

	if (i->state == S_GONE)
		return;
	if (i->state == S_IDLE)
		drop_idle(s, k);
	if (i->state == S_BUSY) {
		struct sjob *j = &s->jobs[i->job];
		int64_t ran = s->now - i->run_start, ckpt = s->o->checkpoint_every_ms;
		int64_t saved = ckpt > 0 ? (int64_t)((double)(ran / ckpt * ckpt) * o->speed) : 0;
		j->left_ms -= saved < j->left_ms ? saved : j->left_ms;
		s->r->gpu_hours_busy += (double)ran * o->gpus / 3600000.0;
		s->busy--;
		enqueue(s, i->job, 1);
	}
	bill(s, k);
	i->state = S_GONE;
	i->gen++;
	{
		int a = position(s->alive, s->live, k), after = s->live - 1 - a;
		memmove(&s->alive[a], &s->alive[a + 1], (size_t)after * sizeof *s->alive);
		if (s->view_fleet)
			memmove(&s->view_fleet[a], &s->view_fleet[a + 1], (size_t)after * sizeof *s->view_fleet);
	}
	s->live--;
	s->dirty = 1;
}

static void finish(struct sim *s, int k)
{
	struct sinst *i = &s->inst[k];
	struct sjob *j = &s->jobs[i->job];

	s->r->gpu_hours_busy += (double)(s->now - i->run_start) * offer_of(s, i)->gpus / 3600000.0;
	j->left_ms = 0;
	s->done++;
	s->busy--;
	s->progress_ms = s->now;
	i->job = -1;
	make_idle(s, k);
	i->gen++;
	s->dirty = 1;
	sync_view(s, k);
}

/* Idle instances take queued jobs: lanes in order, then priority and
 * arrival, as serve's lease query orders them. */
static void dispatch(struct sim *s)
{
	int a, kept = 0;

	/* Over the idle instances only, in index order: a long replay
	 * launches hundreds of thousands, and this runs after every event.
	 * Those that take a job leave the list in one pass at the end (one
	 * at a time from its head was quadratic when a burst of a million
	 * jobs met as many instances). */
	for (a = 0; a < s->nidle && s->queued > 0; a++) {
		int k = s->idle[a];
		struct sinst *i = &s->inst[k];
		const struct offer *o = offer_of(s, i);
		int best = -1;

		s->idle[kept++] = k;
		if (i->draining)
			continue;
		for (int c = 0; c < s->nq; c++) {
			struct squeue *q = &s->q[c], *b = best >= 0 ? &s->q[best] : NULL;
			if (!q->len || q->gpus > o->gpus)
				continue;
			if (!b || q->lane < b->lane ||
			    (q->lane == b->lane && s->jobs[q->items[q->head]].submit < s->jobs[b->items[b->head]].submit))
				best = c;
		}
		if (best < 0)
			continue;
		kept--;
		i->job = dequeue(s, best);
		struct sjob *j = &s->jobs[i->job];
		if (j->first_start < 0) {
			j->first_start = s->now;
			s->waits[s->nwaits++] = s->now - j->submit;
		}
		i->state = S_BUSY;
		i->run_start = s->now;
		i->run_end = s->now + (int64_t)ceil((double)j->left_ms / o->speed);
		i->gen++;
		s->busy++;
		push(s, (struct event){i->run_end, EV_FINISH, k, i->gen});
		sync_view(s, k);
	}
	if (kept < a) {
		memmove(&s->idle[kept], &s->idle[a], (size_t)(s->nidle - a) * sizeof *s->idle);
		s->nidle -= a - kept;
	}
}

/* ---- policies ---- */

/* Can any offer the policy launches run a job of this many GPUs? */
static int placeable(const struct sim *s, int gpus)
{
	for (int k = 0; k < s->o->noffers; k++) {
		if ((s->p->kind == POL_EBB || k == s->p->offer) && s->o->offers[k].gpus >= gpus)
			return 1;
	}
	return 0;
}

static int64_t min_positive(int64_t a, int64_t b) { return a == 0 ? b : b == 0 ? a : a < b ? a : b; }

/* Ages the class's weighted arrivals to now. */
static void decay_arrivals(const struct sim *s, struct squeue *q)
{
	double f;

	if (s->now <= q->arrivals_at)
		return;
	f = exp(-(double)(s->now - q->arrivals_at) / (double)s->p->cfg.arrival_window_ms);
	q->arrived_jobs *= f;
	q->arrived_work_ms *= f;
	q->arrivals_at = s->now;
}

static void ebb_policy(struct sim *s)
{
	const struct config *cfg = &s->p->cfg;
	struct plan_settings st = {
		.max_instances = cfg->max_instances, .max_gpus = cfg->max_gpus,
		.max_spend_per_hour = cfg->max_spend_per_hour, .idle_timeout_ms = s->idle_timeout_ms,
		.idle_surplus_ms = cfg->idle_surplus_ms, .idle_decay = (int)cfg->idle_decay, .decay_t1_ms = cfg->decay_t1_ms,
		.decay_t2_ms = cfg->decay_t2_ms, .boot_timeout_ms = cfg->boot_timeout_ms,
		.warm = &cfg->warm_schedule, .max_price = cfg->max_price,
		.min_reliability = cfg->min_reliability, .max_share_per_offer = cfg->max_share_per_offer,
		.use_spot = (int)cfg->use_spot, .checkpoint_every_ms = cfg->checkpoint_every_ms,
		.no_reasons = 1,
	};
	struct plan_class *classes;
	struct plan_result *res = s->plan_result;
	struct plan_view v = {.now_ms = s->now, .arrival_window_ms = cfg->arrival_window_ms, .settings = &st, .offers = s->o->offers,
			      .noffers = s->o->noffers};
	int nc = 0;

	/* The view's arrays live as long as the replay: grown, never freed
	 * between the million calls of a long trace. */
	if ((size_t)s->nq + 1 > s->view_cap_classes) {
		if (!(classes = grown(s, s->view_classes, (size_t)s->nq + 1, sizeof *classes)))
			return;
		s->view_classes = classes;
		s->view_cap_classes = (size_t)s->nq + 1;
	}
	classes = s->view_classes;

	for (int c = 0; c < s->nq; c++) {
		struct squeue *q = &s->q[c];
		double window_s = (double)cfg->arrival_window_ms / 1000.0;
		if (window_s > 0)
			decay_arrivals(s, q);
		/* A class with nothing queued and hardly any arrivals lately
		 * needs nothing: left out, as serve leaves it out. */
		if (!q->len && (window_s <= 0 || q->arrived_jobs < 1e-3))
			continue;
		classes[nc++] = (struct plan_class){
			.lane = s->t->lanes[q->lane], .gpus = q->gpus, .lane_rank = q->lane_rank,
			.jobs = (int64_t)q->len, .items = (int64_t)q->len, .work_s = q->work_ms / 1000.0,
			.oldest_ms = q->len ? s->jobs[q->items[q->head]].submit : s->now,
			.arrival_jobs_per_s = window_s > 0 ? q->arrived_jobs / window_s : 0,
			.arrival_work_per_s = window_s > 0 ? q->arrived_work_ms / 1000.0 / window_s : 0,
			.wait_target_ms = q->wait_target_ms,
		};
	}
	v.classes = classes;
	v.nclasses = nc;
	v.fleet = s->view_fleet;
	v.nfleet = s->live;
	plan(&v, res);
	for (int a = 0; a < res->n; a++) {
		const struct action *x = &res->actions[a];
		if (x->kind == ACTION_LAUNCH) {
			for (int n = 0; n < x->count; n++)
				launch(s, x->offer, x->market, s->starting);
		} else if (x->instance >= 1 && x->instance <= s->ninst) {
			int k = (int)x->instance - 1;
			if (x->kind == ACTION_DRAIN) {
				s->inst[k].draining = 1;
				sync_view(s, k);
			} else if (s->inst[k].state != S_BUSY)
				stop(s, k);
		}
	}
	s->next_policy = min_positive(res->next_ms, s->next_policy);
}

/* Idle instances first (the longest idle), then booting, then busy. */
static int pick_to_stop(struct sim *s, int allow_busy)
{
	int best = -1;
	static const int order[] = {[S_IDLE] = 0, [S_BOOTING] = 1, [S_BUSY] = 2, [S_GONE] = 9};

	for (int a = 0; a < s->live; a++) {
		int k = s->alive[a];
		struct sinst *i = &s->inst[k], *b = best >= 0 ? &s->inst[best] : NULL;
		if (i->state == S_BUSY && !allow_busy)
			continue;
		if (!b || order[i->state] < order[b->state] ||
		    (order[i->state] == order[b->state] && i->idle_since < b->idle_since))
			best = k;
	}
	return best;
}

static void scale_to(struct sim *s, int64_t want, int allow_busy)
{
	while (s->live < want) {
		if (launch(s, s->p->offer, s->p->market, 0) < 0)
			return; /* out of memory: the replay stops */
	}
	while (s->live > want) {
		int k = pick_to_stop(s, allow_busy);
		if (k < 0)
			break;
		stop(s, k);
	}
}

static void min1_policy(struct sim *s)
{
	int64_t free_slots = 0;

	for (int a = 0; a < s->live; a++) {
		struct sinst *i = &s->inst[s->alive[a]];
		if (i->state == S_IDLE || i->state == S_BOOTING)
			free_slots++;
	}
	for (int64_t n = s->queued - free_slots; n > 0; n--)
		launch(s, s->p->offer, s->p->market, 0);
	for (int a = 0; a < s->live; a++) {
		int k = s->alive[a];
		struct sinst *i = &s->inst[k];
		if (i->state != S_IDLE || s->live <= 1)
			continue;
		if (s->now - i->idle_since >= s->p->idle_ms) {
			stop(s, k);
			a--; /* the next one has moved into place a */
		} else {
			s->next_policy = min_positive(s->next_policy, i->idle_since + s->p->idle_ms);
		}
	}
}

static void util_policy(struct sim *s)
{
	double busy = s->util_alive_ms > 0 ? s->util_busy_ms / s->util_alive_ms : 0;

	if (s->now - s->util_since >= s->p->window_ms || s->live == 0) {
		if ((busy > s->p->up && s->queued > 0) || (s->live == 0 && s->queued > 0))
			launch(s, s->p->offer, s->p->market, 0);
		else if (busy < s->p->down && s->live > 1)
			scale_to(s, s->live - 1, 0);
		s->util_busy_ms = s->util_alive_ms = 0;
		s->util_since = s->now;
	}
	s->next_policy = s->now + s->p->poll_ms;
}

static void keda_policy(struct sim *s)
{
	int64_t metric = s->queued + s->busy, desired = (int64_t)ceil((double)metric / s->p->target), keep = desired;

	if (metric > 0)
		s->keda_last_active = s->now;
	/* The HPA keeps the largest recommendation of its stabilisation
	 * window. The history never holds more than KEDA_HIST_MAX + 1
	 * entries (cut to its last KEDA_HIST_KEEP past that), so it gets that
	 * room once: a realloc at every poll copied it at every poll. */
	if (!s->keda_hist_at)
		s->keda_hist_at = grown(s, NULL, KEDA_HIST_MAX + 1, sizeof *s->keda_hist_at);
	if (!s->keda_hist_n)
		s->keda_hist_n = grown(s, NULL, KEDA_HIST_MAX + 1, sizeof *s->keda_hist_n);
	if (!s->keda_hist_at || !s->keda_hist_n)
		return;
	s->keda_hist_at[s->keda_nhist] = s->now;
	s->keda_hist_n[s->keda_nhist++] = desired;
	for (size_t h = s->keda_nhist; h-- > 0 && s->now - s->keda_hist_at[h] <= s->p->stabilize_ms;)
		keep = s->keda_hist_n[h] > keep ? s->keda_hist_n[h] : keep;
	if (s->keda_nhist > KEDA_HIST_MAX) {
		size_t drop = s->keda_nhist - KEDA_HIST_KEEP;
		memmove(s->keda_hist_at, s->keda_hist_at + drop, KEDA_HIST_KEEP * sizeof *s->keda_hist_at);
		memmove(s->keda_hist_n, s->keda_hist_n + drop, KEDA_HIST_KEEP * sizeof *s->keda_hist_n);
		s->keda_nhist = KEDA_HIST_KEEP;
	}
	if (desired > s->live) {
		scale_to(s, desired, 1);
	} else if (keep < s->live) {
		/* KEDA owns 1 -> 0 after its cooldown; the HPA never goes below 1. */
		int64_t floor_n = s->now - s->keda_last_active >= s->p->cooldown_ms ? 0 : 1;
		scale_to(s, keep > floor_n ? keep : floor_n, 1);
	}
	s->next_policy = s->now + s->p->poll_ms;
}

static void run_policy(struct sim *s)
{
	/* Cleared first: what the policy itself stops is a change to look at
	 * again, as serve is woken when an instance it released is gone (an
	 * idle one released makes room under the limits for queued work). */
	s->dirty = 0;
	switch (s->p->kind) {
	case POL_EBB:
		ebb_policy(s);
		break;
	case POL_MIN1:
		min1_policy(s);
		break;
	case POL_UTIL:
		util_policy(s);
		break;
	case POL_KEDA:
		keda_policy(s);
		break;
	case POL_ALWAYS_ON:
	case POL_BOUND:
		break;
	}
	s->last_policy = s->now;
}

/* When the policy looks next (INT64_MAX: not until something happens):
 * ebb after any change, at most once per [scaler] interval, and when
 * plan() asked; min1 after any change and at idle expiries; the pollers
 * on their period. */
static int64_t policy_due(const struct sim *s)
{
	int64_t due = s->next_policy ? s->next_policy : INT64_MAX, soon = INT64_MAX;

	if (s->p->kind == POL_EBB && s->dirty)
		soon = s->last_policy < 0 ? s->now : s->last_policy + s->p->cfg.scaler_interval_ms;
	if (s->p->kind == POL_MIN1 && s->dirty)
		soon = s->now;
	return soon < due ? soon : due;
}

static void note_arrival(struct sim *s, int job)
{
	const struct config *cfg = &s->p->cfg;
	int64_t at = s->jobs[job].submit;
	struct squeue *q = &s->q[s->jobs[job].cls];

	if (s->p->kind == POL_EBB && cfg->arrival_window_ms > 0) {
		decay_arrivals(s, q);
		q->arrived_jobs += 1;
		q->arrived_work_ms += (double)s->t->jobs[job].duration_ms;
	}

	if (s->last_submit >= 0) {
		s->gaps[s->ngaps % 1000] = at - s->last_submit;
		s->ngaps++;
	}
	s->last_submit = at;
	/* The auto idle timeout follows the gaps, as in serve; recomputed
	 * every 100 arrivals to keep a million-job replay fast. */
	if (s->p->kind == POL_EBB && cfg->idle_timeout_ms == CONF_AUTO && s->ngaps % 100 == 1) {
		int64_t gaps[1000];
		size_t n = s->ngaps < 1000 ? s->ngaps : 1000;
		char why[200];
		memcpy(gaps, s->gaps, n * sizeof *gaps);
		s->idle_timeout_ms = idle_timeout_auto(gaps, n, cfg->idle_gap_quantile, cfg->idle_timeout_min_ms,
						       cfg->idle_timeout_max_ms, why, sizeof why);
	}
}

/* Waits (non-negative milliseconds) in ascending order: a radix sort on
 * 11-bit digits, as many as the longest wait needs. On a million waits it
 * is several times quicker than qsort with its comparison callback. */
static void sort_waits(struct sim *s, int64_t *w, size_t n)
{
	int64_t *tmp = grown(s, NULL, n + 1, sizeof *tmp), *from = w, *to = tmp, longest = 0;

	if (!tmp)
		return;
	for (size_t k = 0; k < n; k++)
		longest = w[k] > longest ? w[k] : longest;
	for (int shift = 0; shift < 63 && (longest >> shift) > 0; shift += 11) {
		size_t at[2049] = {0};
		int64_t *swap;
		for (size_t k = 0; k < n; k++)
			at[((from[k] >> shift) & 2047) + 1]++;
		for (int d = 1; d <= 2048; d++)
			at[d] += at[d - 1];
		for (size_t k = 0; k < n; k++)
			to[at[(from[k] >> shift) & 2047]++] = from[k];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != w)
		memcpy(w, from, n * sizeof *w);
	free(tmp);
}

static double quantile_s(const int64_t *sorted, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)ceil(q * (double)n);
	rank = rank < 1 ? 1 : rank > n ? n : rank;
	return (double)sorted[rank - 1] / 1000.0;
}

static void summarise(struct sim *s)
{
	double sum = 0;

	sort_waits(s, s->waits, s->nwaits);
	for (size_t k = 0; k < s->nwaits; k++)
		sum += (double)s->waits[k];
	s->r->wait_p50_s = quantile_s(s->waits, s->nwaits, 0.50);
	s->r->wait_p95_s = quantile_s(s->waits, s->nwaits, 0.95);
	s->r->wait_p99_s = quantile_s(s->waits, s->nwaits, 0.99);
	s->r->wait_mean_s = s->nwaits ? sum / (double)s->nwaits / 1000.0 : 0;
	/* done counts the left-out jobs too, so that the replay can end. */
	s->r->jobs_done = (int64_t)s->done - s->r->unplaceable;
	s->r->idle_gpu_hours = s->r->gpu_hours_billed - s->r->gpu_hours_busy;
	s->r->end_ms = s->now;
}

int64_t sim_peak_concurrency(const struct trace *t)
{
	int64_t *ends = malloc((t->n + 1) * sizeof *ends), peak = 0;
	size_t nends = 0, head = 0;

	if (!ends)
		return -1;
	/* Arrivals are sorted; ends are kept in a sorted array by insertion
	 * from the back, which is cheap because most jobs are short. */
	for (size_t k = 0; k < t->n; k++) {
		int64_t end = t->jobs[k].submit_ms + t->jobs[k].duration_ms;
		size_t pos;
		while (head < nends && ends[head] <= t->jobs[k].submit_ms)
			head++;
		pos = nends++;
		while (pos > head && ends[pos - 1] > end) {
			ends[pos] = ends[pos - 1];
			pos--;
		}
		ends[pos] = end;
		if ((int64_t)(nends - head) > peak)
			peak = (int64_t)(nends - head);
	}
	free(ends);
	return peak;
}

/* The offline lower bound: every job at the lowest price per unit of work
 * among the offers it fits, with no idle time and no boot. */
static void bound(const struct trace *t, const struct sim_options *o, struct sim_result *r)
{
	for (size_t k = 0; k < t->n; k++) {
		const struct trace_job *j = &t->jobs[k];
		double best = -1, best_gpu_h = 0;
		for (int f = 0; f < o->noffers; f++) {
			const struct offer *of = &o->offers[f];
			for (int m = 0; m < MARKET_COUNT; m++) {
				double hours = (double)j->duration_ms / of->speed / 3600000.0, c;
				if (of->gpus < j->gpus || of->price[m] < 0)
					continue;
				c = of->price[m] * hours;
				if (best < 0 || c < best) {
					best = c;
					best_gpu_h = hours * of->gpus;
				}
			}
		}
		if (best < 0) {
			r->unplaceable++; /* as sim_run counts them */
			continue;
		}
		r->cost_usd += best;
		r->gpu_hours_billed += best_gpu_h;
		r->gpu_hours_busy += best_gpu_h;
		r->jobs_done++;
	}
}

int sim_load(const char *trace_path, const char *offers_path, const struct trace_filter *filters,
	     int nfilters, int skip_bad, struct trace *t, struct sim_options *o, char *err, size_t errsize)
{
	struct config cfg;

	if (offers_path) {
		if (config_load(&cfg, NULL, offers_path, err, errsize) != 0) {
			config_free(&cfg);
			return -1;
		}
	} else {
		config_defaults(&cfg, NULL);
	}
	/* Not the first 16 of them: a baseline's offer=NAME indexes the
	 * config's list, and ebb would be replayed on part of its catalogue. */
	if (cfg.noffers > SIM_MAX_OFFERS) {
		snprintf(err, errsize, "%s: %zu [offer.*] sections, the simulator takes %d at most", offers_path,
			 cfg.noffers, SIM_MAX_OFFERS);
		config_free(&cfg);
		return -1;
	}
	o->noffers = offers_from_config(&cfg, o->offers, SIM_MAX_OFFERS);
	config_free(&cfg);
	return trace_load(trace_path, filters, nfilters, skip_bad, t, err, errsize);
}

/* The replay's arrays, and each job with its class; -1 when out of
 * memory. */
static int start(struct sim *s)
{
	const struct trace *t = s->t;
	double slowest = 1, longest_ms = 0;

	if (s->p->kind == POL_EBB) {
		s->plan_result = grown(s, NULL, 1, sizeof *s->plan_result);
		s->view_fleet = grown(s, NULL, 1, sizeof *s->view_fleet); /* grown with the instances */
	}
	s->jobs = grown(s, NULL, t->n + 1, sizeof *s->jobs);
	s->waits = grown(s, NULL, t->n + 1, sizeof *s->waits);
	if (s->nomem)
		return -1;
	for (int k = 0; k < s->o->noffers; k++)
		slowest = fmin(slowest, s->o->offers[k].speed);
	for (size_t k = 0; k < t->n; k++) {
		int cls = class_of(s, t->jobs[k].gpus, t->jobs[k].lane);
		if (cls < 0)
			return -1;
		s->jobs[k] = (struct sjob){.submit = t->jobs[k].submit_ms, .left_ms = t->jobs[k].duration_ms,
					   .first_start = -1, .cls = cls};
		longest_ms = fmax(longest_ms, (double)t->jobs[k].duration_ms / slowest);
		/* A job no usable offer fits could never run: it is left out and
		 * counted, not waited for forever. */
		if (!placeable(s, t->jobs[k].gpus)) {
			s->jobs[k].first_start = 0;
			s->done++;
			s->r->unplaceable++;
		}
	}
	s->stall_ms = (int64_t)fmax(SIM_STALL_MS, longest_ms * SIM_STALL_JOBS);
	return 0;
}

static void release(struct sim *s)
{
	for (int c = 0; c < s->nq; c++)
		free(s->q[c].items);
	free(s->q);
	free(s->heap);
	free(s->view_classes);
	free(s->view_fleet);
	free(s->plan_result);
	free(s->inst);
	free(s->alive);
	free(s->idle);
	free(s->jobs);
	free(s->waits);
	free(s->keda_hist_at);
	free(s->keda_hist_n);
}

int sim_run(const struct trace *t, const struct policy *p, const struct sim_options *o,
	    struct sim_result *r)
{
	struct sim s = {.t = t, .p = p, .o = o, .r = r, .rng = o->seed ? o->seed : 1, .last_submit = -1,
			.last_policy = -1};
	size_t next = 0;

	memset(r, 0, sizeof *r);
	snprintf(r->policy, sizeof r->policy, "%s", p->spec);
	r->jobs = (int64_t)t->n;
	if (p->kind == POL_BOUND) {
		bound(t, o, r);
		return 0;
	}
	if (start(&s) != 0) {
		release(&s);
		return -1;
	}
	s.idle_timeout_ms = p->cfg.idle_timeout_ms == CONF_AUTO ? p->cfg.idle_timeout_min_ms : p->cfg.idle_timeout_ms;
	if (p->kind == POL_ALWAYS_ON || p->kind == POL_MIN1 || p->kind == POL_UTIL) {
		int64_t n = p->kind == POL_ALWAYS_ON ? (p->n ? p->n : sim_peak_concurrency(t)) : 1;
		s.nomem = n < 0;
		for (int64_t k = 0; k < n && !s.nomem; k++)
			launch(&s, p->offer, p->market, 1);
	}
	/* The floor a policy keeps at all times is up when the replay starts,
	 * as always-on's fleet is: ebb's warm floor too. */
	if (p->kind == POL_EBB) {
		s.starting = 1;
		run_policy(&s);
		s.starting = 0;
		s.last_policy = -1; /* made before the replay: the first arrival is looked at at once */
	}
	s.next_policy = p->kind == POL_UTIL || p->kind == POL_KEDA ? 1 : 0;
	for (;;) {
		int64_t t_arrival, t_event = s.nheap ? s.heap[0].at : INT64_MAX, t_policy = policy_due(&s), at;

		t_arrival = next < t->n ? t->jobs[next].submit_ms : INT64_MAX;
		if ((s.done == t->n && s.queued == 0) || s.nomem)
			break;
		at = t_arrival < t_event ? t_arrival : t_event;
		at = t_policy < at ? t_policy : at;
		if (at == INT64_MAX)
			break; /* nothing left can happen: jobs that no instance fits stay queued */
		if (at < s.now)
			at = s.now;
		if (s.queued == 0 && s.busy == 0) {
			s.progress_ms = at;
		} else if (at - s.progress_ms > s.stall_ms) {
			r->stalled = 1;
			r->stalled_ms = s.progress_ms;
			break;
		}
		sample(&s, at);
		advance(&s, at);
		while (next < t->n && t->jobs[next].submit_ms <= s.now) {
			if (placeable(&s, t->jobs[next].gpus)) {
				note_arrival(&s, (int)next);
				enqueue(&s, (int)next, 0);
				s.dirty = 1;
			}
			next++;
		}
		while (s.nheap && s.heap[0].at <= s.now) {
			struct event e = pop(&s);
			struct sinst *i = &s.inst[e.inst];
			if (e.kind == EV_RECLAIM && i->state != S_GONE) {
				s.r->reclaims++;
				stop(&s, e.inst);
				/* A fixed fleet and min1's one warm instance are replaced, as a
				 * node group does; the others launch on demand. */
				if (p->kind == POL_ALWAYS_ON || (p->kind == POL_MIN1 && s.live == 0))
					launch(&s, p->offer, p->market, 0);
			} else if (e.gen != i->gen || i->state == S_GONE) {
				continue;
			} else if (e.kind == EV_READY) {
				make_idle(&s, e.inst);
				sync_view(&s, e.inst);
				i->gen++;
				s.dirty = 1;
			} else if (e.kind == EV_FINISH) {
				finish(&s, e.inst);
			}
		}
		dispatch(&s);
		if (policy_due(&s) <= s.now) {
			s.next_policy = 0;
			run_policy(&s);
			dispatch(&s);
		}
	}
	/* The replay ends when the last job ends: what still runs is billed
	 * up to then. No job runs (each would have an end to come), and the
	 * lists are done with: billing alone keeps this linear, where a stop
	 * of each, from the lists' heads, was quadratic in the fleet. */
	for (int k = 0; k < s.ninst && !s.nomem; k++) {
		if (s.inst[k].state != S_GONE)
			bill(&s, k);
	}
	if (!s.nomem)
		summarise(&s);
	release(&s);
	return s.nomem ? -1 : 0;
}

void sim_result_free(struct sim_result *r)
{
	free(r->samples);
	r->samples = NULL;
	r->nsamples = 0;
}
