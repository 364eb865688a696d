/* The simulator's instances (see sim_internal.h): launched, idle, stopped and
 * billed. A replay may launch hundreds of thousands, and a policy may
 * stop as many at one instant (keda's scale to zero after a burst), so a
 * stop costs nothing in the lists: a stopped instance stays in roster[]
 * and open[] as a hole, skipped by those who walk them, until the holes
 * outnumber the instances up and one pass takes them all out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "sim/sim_internal.h"

static double price_per_ms(const struct sim *s, const struct sinst *i)
{
	double p = sim_offer(s, i)->price[i->market];
	return p > 0 ? p / 3600000.0 : 0;
}

void sim_changed(struct sim *s, int k)
{
	if (s->kind->changed)
		s->kind->changed(s, k);
}

/* Whether the instance of an entry of idled[] is idle since then. */
static int still_idle(const struct window_entry *e, const void *inst)
{
	const struct sinst *i = (const struct sinst *)inst + (int)e->a;

	return i->state == S_IDLE && i->idle_since == e->at;
}

/* Instance k, up, has room for a job: it joins open[] if not in it. */
static void sim_open(struct sim *s, int k)
{
	int at;

	if (s->inst[k].open)
		return;
	at = sim_position(s->open, s->nopen, k);
	memmove(&s->open[at + 1], &s->open[at], (size_t)(s->nopen - at) * sizeof *s->open);
	s->open[at] = k;
	s->nopen++;
	s->inst[k].open = 1;
}

void sim_make_idle(struct sim *s, int k)
{
	sim_open(s, k);
	s->idling++;
	s->inst[k].state = S_IDLE;
	s->inst[k].idle_since = s->now;
	/* A policy that chooses what to stop needs no order of them. */
	if (s->kind->picks_stops)
		return;
	/* The entries of instances busy or gone since are dropped when there
	 * are more of them than of the idle ones: a list as long as the
	 * trace would hold them all. */
	if (s->idled.n > 2 * (size_t)s->idling + 64)
		window_keep(&s->idled, still_idle, s->inst);
	window_push(&s->idled, s->now, k, 0);
}

int sim_longest_idle(struct sim *s)
{
	while (s->idled.n > 0) {
		const struct window_entry *e = window_at(&s->idled, 0);
		if (still_idle(e, s->inst))
			return (int)e->a;
		window_pop_front(&s->idled);
	}
	return -1;
}

int sim_first_booting(struct sim *s)
{
	/* An instance boots once: those passed are done booting for good. */
	while (s->boot_head < s->ninst && s->inst[s->boot_head].state != S_BOOTING)
		s->boot_head++;
	return s->boot_head < s->ninst ? s->boot_head : -1;
}

void sim_compact(struct sim *s)
{
	int kept = 0;

	for (int a = 0; a < s->nroster; a++) {
		if (s->inst[s->roster[a]].state == S_GONE)
			continue;
		if (s->kind->moved)
			s->kind->moved(s, a, kept);
		s->roster[kept++] = s->roster[a];
	}
	s->nroster = kept;
	kept = 0;
	for (int a = 0; a < s->nopen; a++) {
		if (s->inst[s->open[a]].state != S_GONE)
			s->open[kept++] = s->open[a];
	}
	s->nopen = kept;
}

/* Room for twice the instances in each array kept per instance. */
static void grow_fleet(struct sim *s)
{
	size_t cap = s->capinst ? (size_t)s->capinst * 2 : 64;

	s->inst = sim_grown(s->inst, cap, sizeof *s->inst);
	s->roster = sim_grown(s->roster, cap, sizeof *s->roster);
	s->open = sim_grown(s->open, cap, sizeof *s->open);
	if (s->kind->grow)
		s->kind->grow(s, cap);
	s->capinst = (int)cap;
}

int sim_launch(struct sim *s, int offer, enum market m, int warm)
{
	const struct offer *o = &s->opts->offers[offer];
	struct sinst *i;
	int k;

	if (s->ninst == s->capinst)
		grow_fleet(s);
	k = s->ninst++;
	i = &s->inst[k];
	memset(i, 0, sizeof *i);
	i->offer = offer;
	i->market = m;
	i->launched = s->now;
	i->newest = -1;
	i->launch_team = -1;
	i->warm = -1;
	i->free_gpus = o->gpus;
	if (s->shares)
		i->parts = xcalloc((size_t)o->gpus, sizeof *i->parts);
	i->state = S_BOOTING;
	s->roster[s->nroster++] = k;
	s->nup++;
	s->gpus_live += i->free_gpus;
	s->spend_per_ms += price_per_ms(s, i);
	if (s->nup > s->result->max_instances)
		s->result->max_instances = s->nup;
	if (warm) {
		sim_make_idle(s, k);
	} else {
		s->booting++;
		s->result->cold_starts++;
		sim_push(s, (struct event){s->now + o->boot_ms, EV_READY, k, -1});
	}
	sim_changed(s, k);
	/* A trace that places its reclaims has those alone. */
	if (m == MARKET_SPOT && o->reclaims_per_hour > 0 && !s->trace->has_reclaims) {
		double hours = -log(1.0 - rng_uniform(&s->rng)) / o->reclaims_per_hour;
		sim_push(s, (struct event){s->now + (int64_t)(hours * 3600000.0), EV_RECLAIM, k, -1});
	}
	return k;
}

double sim_billed_usd(const struct sim *s, int k)
{
	const struct sinst *i = &s->inst[k];

	return offer_cost(sim_offer(s, i), i->market, offer_billed_ms(sim_offer(s, i), s->now - i->launched));
}

void sim_bill(struct sim *s, int k)
{
	const struct sinst *i = &s->inst[k];
	const struct offer *o = sim_offer(s, i);
	int64_t lifetime = s->now - i->launched, billed = offer_billed_ms(o, lifetime);
	double usd = sim_billed_usd(s, k);

	s->spend_per_ms -= price_per_ms(s, i);
	s->cost += (double)(billed - lifetime) * price_per_ms(s, i);
	s->result->cost_usd += usd;
	sim_teams_billed(s, k, usd - i->busy_usd);
	s->result->gpu_hours_billed += (double)billed * o->gpus / 3600000.0;
}

/* Job leaves instance k's list of jobs. */
static void unlink_job(struct sim *s, int k, int job)
{
	int *at = &s->inst[k].newest;

	while (*at != job)
		at = &s->jobs[*at].next_on;
	*at = s->jobs[job].next_on;
}

void sim_job_leaves(struct sim *s, int job)
{
	struct sjob *j = &s->jobs[job];
	int k = j->inst, newest = s->inst[k].newest == job;
	struct sinst *i = &s->inst[k];
	/* its share of the instance by the GPUs it held, or its part of one,
	 * as the ledger splits it (segments' gpu_part) */
	double held = sim_job_held(s, job);
	double usd = price_per_ms(s, i) * (double)(s->now - j->since) * held / sim_offer(s, i)->gpus;

	s->result->gpu_hours_busy += (double)(s->now - j->since) * held / 3600000.0;
	i->busy_usd += usd;
	sim_teams_ran(s, job, usd);
	if (newest && s->kind->running)
		s->kind->running(s, k, 0);
	unlink_job(s, k, job);
	s->q[j->cls].running--;
	s->running--;
	sim_release(s, k, job);
	if (--i->njobs == 0) {
		sim_make_idle(s, k);
	} else {
		if (newest && s->kind->running)
			s->kind->running(s, k, 1);
		sim_open(s, k);
	}
	s->dirty = 1;
	sim_changed(s, k);
}

void sim_interrupt(struct sim *s, int job)
{
	struct sjob *j = &s->jobs[job];
	const struct offer *o = sim_offer(s, &s->inst[j->inst]);
	/* Its work ran after its handler's setup. */
	int64_t ran = s->now - j->since - sim_setup_ms(s, job), ckpt = s->opts->checkpoint_every_ms;
	int64_t saved = ckpt > 0 && ran > 0 ? (int64_t)((double)(ran / ckpt * ckpt) * o->speed) : 0;

	sim_job_leaves(s, job);
	j->left_ms -= saved < j->left_ms ? saved : j->left_ms;
	j->preempted = 0; /* ebb.c's preemption sets it after */
}

void sim_put_back(struct sim *s, int job)
{
	sim_interrupt(s, job);
	sim_enqueue(s, job, 1);
}

void sim_stop(struct sim *s, int k)
{
	struct sinst *i = &s->inst[k];

	if (i->state == S_GONE)
		return;
	/* Newest first, each to the queue's head: the oldest ends up first. */
	while (i->newest >= 0)
		sim_put_back(s, i->newest);
	s->idling -= i->state == S_IDLE;
	s->booting -= i->state == S_BOOTING;
	sim_bill(s, k);
	s->gpus_live -= sim_offer(s, i)->gpus;
	i->state = S_GONE;
	i->warm = -1; /* its handlers went with it */
	i->handlers = 0;
	free(i->parts);
	i->parts = NULL;
	s->nup--;
	s->dirty = 1;
	if (s->nroster - s->nup > s->nup + 64)
		sim_compact(s);
}
