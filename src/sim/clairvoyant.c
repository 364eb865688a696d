/* The clairvoyant: a reference that knows every future arrival and
 * duration, to show how far an online policy is from perfect foresight.
 * No job waits for it: each runs as it arrives, on an instance launched a
 * boot ahead. An instance is kept idle only until the next job it will
 * run, and only when that job comes before holding it has cost as much
 * as a boot, the price of a new one; else it stops, and another is
 * launched a boot before that job.
 *
 * The plan is made from the whole trace before the replay: each job on
 * the offer and market with the least expected cost per unit of its work
 * (plan()'s own price, plan_cost_per_work_s, with the boot left out: an
 * instance runs many jobs); then, offer by offer, jobs in order of
 * arrival into chains, each job after the chain whose last job ended the
 * latest before it arrived, if that one idled no longer than a boot: the
 * latest end leaves the earlier ones for later jobs, which can wait on
 * them less. The replay carries the plan out: each chain's instance is
 * launched on time (ready at the start if its boot would begin before
 * it) and takes its chain's jobs, and goes when its chain is done. Spot
 * reclaims are not foreseen: a reclaimed chain is launched again at once
 * (or a boot before its next job), and its job waits for it. */
#include <math.h>
#include <stdlib.h>

#include "sim/engine.h"

/* The run, in reference seconds, its offer is priced over: so long that
 * the boot, shared by a chain's jobs, does not count. */
#define PRICED_OVER_S 1e9

/* The pool (offer * MARKET_COUNT + market) cheapest per unit of job k's
 * work; -1 when no offer fits it. */
static int pool_of(const struct sim *s, size_t k)
{
	const struct trace_job *j = &s->t->jobs[k];
	int64_t ckpt = s->o->checkpoint_every_ms > 0 ? s->o->checkpoint_every_ms : INT64_MAX;
	double best = INFINITY;
	int pool = -1;

	for (int f = 0; f < s->o->noffers; f++) {
		const struct offer *o = &s->o->offers[f];
		for (int m = 0; m < MARKET_COUNT; m++) {
			double c;
			if (o->gpus < j->gpus || o->price[m] < 0)
				continue;
			c = plan_cost_per_work_s(o, (enum market)m, ckpt, PRICED_OVER_S, (double)j->duration_ms / 1000.0);
			if (c < best) {
				best = c;
				pool = f * MARKET_COUNT + m;
			}
		}
	}
	return pool;
}

/* The chains' scratch while they are made. */
struct making {
	int64_t *end;  /* per chain: when its last job ends */
	int *last;     /* per chain: its last job */
	int *below;    /* per chain: the chain under it on its pool's stack */
	int top[SIM_MAX_OFFERS * MARKET_COUNT]; /* per pool: chains ended, the latest on top */
	struct heap running; /* chains by the end of their last job (inst: the chain) */
};

static int by_launch(const void *a, const void *b)
{
	const struct chain *x = a, *y = b;

	if (x->launch_at != y->launch_at)
		return x->launch_at < y->launch_at ? -1 : 1;
	return x->first - y->first;
}

/* Job k, of pool p, joins a chain or starts one. */
static void chain_job(struct sim *s, struct making *mk, size_t k, int p)
{
	struct clairvoyant_state *cv = &s->cv;
	const struct offer *o = &s->o->offers[p / MARKET_COUNT];
	int64_t at = s->t->jobs[k].submit_ms;
	int c;

	/* The chains ended by now are free, the latest on top of their
	 * pool's stack: ends leave the heap in order, arrivals come in order. */
	while (mk->running.n && mk->running.e[0].at <= at) {
		struct event e = heap_pop(&mk->running);
		int q = cv->chains[e.inst].offer * MARKET_COUNT + (int)cv->chains[e.inst].market;
		mk->below[e.inst] = mk->top[q];
		mk->top[q] = e.inst;
	}
	c = mk->top[p];
	if (c >= 0 && at - mk->end[c] <= o->boot_ms) {
		mk->top[p] = mk->below[c];
		cv->next_job[mk->last[c]] = (int)k;
	} else {
		/* The latest ended too long ago: the others before it too. */
		mk->top[p] = -1;
		c = cv->nchains++;
		cv->chains[c] = (struct chain){.first = (int)k, .next = (int)k, .offer = p / MARKET_COUNT,
					       .market = (enum market)(p % MARKET_COUNT), .launch_at = at - o->boot_ms};
	}
	mk->last[c] = (int)k;
	mk->end[c] = at + (int64_t)ceil((double)s->t->jobs[k].duration_ms / o->speed);
	heap_push(s, &mk->running, (struct event){mk->end[c], EV_FINISH, c, 0});
}

int clairvoyant_start(struct sim *s)
{
	struct clairvoyant_state *cv = &s->cv;
	size_t n = s->t->n + 1;
	struct making mk = {0};

	cv->next_job = sim_grown(s, NULL, n, sizeof *cv->next_job);
	cv->chains = sim_grown(s, NULL, n, sizeof *cv->chains);
	cv->relaunch = sim_grown(s, NULL, n, sizeof *cv->relaunch);
	mk.end = sim_grown(s, NULL, n, sizeof *mk.end);
	mk.last = sim_grown(s, NULL, n, sizeof *mk.last);
	mk.below = sim_grown(s, NULL, n, sizeof *mk.below);
	for (size_t p = 0; p < SIM_MAX_OFFERS * MARKET_COUNT; p++)
		mk.top[p] = -1;
	for (size_t k = 0; k < s->t->n && !s->nomem; k++) {
		int p = pool_of(s, k);
		cv->next_job[k] = -1;
		if (p >= 0)
			chain_job(s, &mk, k, p);
	}
	free(mk.end);
	free(mk.last);
	free(mk.below);
	free(mk.running.e);
	if (s->nomem)
		return -1;
	/* Made, the chains are known by their index only from now on. */
	qsort(cv->chains, (size_t)cv->nchains, sizeof *cv->chains, by_launch);
	/* Those due before the start are up at the start. */
	clairvoyant_policy(s);
	return s->nomem ? -1 : 0;
}

/* The next job chain c will run, -1 when it is done. */
static int chain_next(struct sim *s, int c)
{
	struct chain *ch = &s->cv.chains[c];

	while (ch->next >= 0 && s->jobs[ch->next].counted)
		ch->next = s->cv.next_job[ch->next];
	return ch->next;
}

static void launch(struct sim *s, int c)
{
	struct clairvoyant_state *cv = &s->cv;
	const struct chain *ch = &cv->chains[c];
	int k = sim_launch(s, ch->offer, ch->market, s->now == 0 && ch->launch_at <= 0);

	if (k < 0)
		return;
	if ((size_t)k >= cv->cap_chain_of) {
		size_t cap = cv->cap_chain_of ? 2 * cv->cap_chain_of : 64;
		int *grown = sim_grown(s, cv->chain_of, cap > (size_t)k ? cap : (size_t)k + 1, sizeof *grown);
		if (!grown)
			return;
		cv->chain_of = grown;
		cv->cap_chain_of = cap > (size_t)k ? cap : (size_t)k + 1;
	}
	cv->chain_of[k] = c;
}

void clairvoyant_policy(struct sim *s)
{
	struct clairvoyant_state *cv = &s->cv;
	int kept = 0;

	while (cv->launched < cv->nchains && cv->chains[cv->launched].launch_at <= s->now)
		launch(s, cv->launched++);
	if (cv->launched < cv->nchains)
		s->next_policy = min_positive(s->next_policy, cv->chains[cv->launched].launch_at);
	/* A reclaimed chain, again a boot before its next job, or at once. */
	for (int r = 0; r < cv->nrelaunch; r++) {
		int c = cv->relaunch[r], j = chain_next(s, c);
		int64_t at = j < 0 ? 0 : s->t->jobs[j].submit_ms - s->o->offers[cv->chains[c].offer].boot_ms;
		if (j < 0)
			continue;
		if (at <= s->now) {
			launch(s, c);
			continue;
		}
		s->next_policy = min_positive(s->next_policy, at);
		cv->relaunch[kept++] = c;
	}
	cv->nrelaunch = kept;
	/* An instance whose chain is done goes. */
	for (int a = 0; a < s->nopen; a++) {
		int k = s->open[a];
		if (s->inst[k].state == S_IDLE && chain_next(s, cv->chain_of[k]) < 0)
			sim_stop(s, k);
	}
}

int clairvoyant_job_for(struct sim *s, int k)
{
	int j = chain_next(s, s->cv.chain_of[k]);

	return j >= 0 && s->jobs[j].queued ? j : -1;
}

void clairvoyant_reclaimed(struct sim *s, int k)
{
	s->cv.relaunch[s->cv.nrelaunch++] = s->cv.chain_of[k];
}

void clairvoyant_free(struct sim *s)
{
	free(s->cv.next_job);
	free(s->cv.chains);
	free(s->cv.chain_of);
	free(s->cv.relaunch);
}
