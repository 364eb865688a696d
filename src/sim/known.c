/* What the replay tells ebb's plan() of durations (see ebb_internal.h). serve
 * knows a job's run time only from the est_s it was submitted with, else
 * from the median of the newest finished jobs of its type
 * (policy/durations.h), and so does the replay: it adds each job to that
 * history as it ends, and when a type's estimate changes, moves the work
 * plan() sees (queued, arrived lately, running) by as much, at once, as
 * serve's next view would. With --oracle-durations plan() is told each
 * job's duration from the trace instead, a what-if. */
#include <math.h>
#include <stdlib.h>

#include "policy/durations.h"
#include "sim/sim_internal.h"
#include "sim/ebb_internal.h"

int known_estimates(const struct sim *s)
{
	return !s->opts->oracle_durations;
}

void known_start(struct sim *s)
{
	struct known_state *k = &ebb_of(s)->known;

	if (!known_estimates(s))
		return;
	if (!(k->history = durations_new()))
		mem_out("the durations' history");
	k->types = sim_grown(NULL, (size_t)s->trace->ntypes + 1, sizeof *k->types);
	for (int t = 0; t < s->trace->ntypes; t++)
		k->types[t] = (struct known_type){.est_ms = s->policy->settings.default_est_ms, .running = -1};
}

void known_free(struct sim *s)
{
	struct known_state *k = &ebb_of(s)->known;

	for (int t = 0; k->types && t < s->trace->ntypes; t++)
		free(k->types[t].in);
	free(k->types);
	durations_free(k->history);
}

/* A job that serve would know nothing of but its type's history. */
static int by_type(const struct sim *s, int job)
{
	return known_estimates(s) && s->trace->jobs[job].est_ms == 0;
}

/* The type's entry for class cls, made if new; NULL when out of memory. */
static struct known_class *in_class(struct sim *s, int type, int cls)
{
	struct known_type *kt = &ebb_of(s)->known.types[type];

	for (int c = 0; c < kt->nin; c++) {
		if (kt->in[c].cls == cls)
			return &kt->in[c];
	}
	if (kt->nin == kt->capin) {
		kt->capin = kt->capin ? 2 * kt->capin : 2;
		kt->in = sim_grown(kt->in, (size_t)kt->capin, sizeof *kt->in);
	}
	kt->in[kt->nin] = (struct known_class){.cls = cls, .arrived_at = s->now};
	return &kt->in[kt->nin++];
}

void known_queued(struct sim *s, int job, int delta)
{
	const struct trace_job *j = &s->trace->jobs[job];
	struct ebb_queue *q = &ebb_of(s)->queues[s->jobs[job].cls];
	struct known_class *c;

	if (!known_estimates(s))
		return;
	if (j->est_ms) {
		q->est_work_ms += delta * j->est_ms;
	} else {
		c = in_class(s, j->type, s->jobs[job].cls);
		c->queued += delta;
		q->est_work_ms += delta * ebb_of(s)->known.types[j->type].est_ms;
	}
}

void known_running(struct sim *s, int k, int running)
{
	struct type_link *l = ebb_of(s)->links;
	int newest = s->inst[k].newest;
	struct known_type *kt;

	if (!by_type(s, newest))
		return;
	kt = &ebb_of(s)->known.types[s->trace->jobs[newest].type];
	if (running) {
		l[k].prev = -1;
		l[k].next = kt->running;
		if (kt->running >= 0)
			l[kt->running].prev = k;
		kt->running = k;
		return;
	}
	if (l[k].prev >= 0)
		l[l[k].prev].next = l[k].next;
	else
		kt->running = l[k].next;
	if (l[k].next >= 0)
		l[l[k].next].prev = l[k].prev;
}

void known_decay(const struct sim *s, struct ebb_queue *q)
{
	double f;

	if (s->now <= q->arrivals_at)
		return;
	f = exp(-(double)(s->now - q->arrivals_at) / (double)s->policy->settings.arrival_window_ms);
	q->arrived_jobs *= f;
	q->arrived_work_ms *= f;
	q->arrivals_at = s->now;
}

/* The type's arrivals in class c aged to now. */
static void age(const struct sim *s, struct known_class *c)
{
	if (s->now > c->arrived_at)
		c->arrived *= exp(-(double)(s->now - c->arrived_at) / (double)s->policy->settings.arrival_window_ms);
	c->arrived_at = s->now;
}

void known_arrived(struct sim *s, int job)
{
	const struct trace_job *j = &s->trace->jobs[job];
	struct ebb_queue *q = &ebb_of(s)->queues[s->jobs[job].cls];
	struct known_class *c;

	if (!by_type(s, job)) {
		q->arrived_work_ms += (double)(known_estimates(s) ? j->est_ms : j->duration_ms);
	} else {
		c = in_class(s, j->type, s->jobs[job].cls);
		age(s, c);
		c->arrived += 1;
		q->arrived_work_ms += (double)ebb_of(s)->known.types[j->type].est_ms;
	}
}

/* The type's estimate as the history has it now, carried to the work of
 * its jobs queued, arrived and running. */
static void refresh(struct sim *s, int type)
{
	struct known_type *kt = &ebb_of(s)->known.types[type];
	int64_t est = durations_estimate_ms(ebb_of(s)->known.history, type, 0, s->policy->settings.default_est_ms);
	int64_t delta = est - kt->est_ms;

	if (delta == 0)
		return;
	kt->est_ms = est;
	for (int n = 0; n < kt->nin; n++) {
		struct known_class *c = &kt->in[n];
		struct ebb_queue *q = &ebb_of(s)->queues[c->cls];
		q->est_work_ms += c->queued * delta;
		if (c->arrived > 0) {
			known_decay(s, q);
			age(s, c);
			q->arrived_work_ms += c->arrived * (double)delta;
		}
	}
	for (int k = kt->running; k >= 0; k = ebb_of(s)->links[k].next)
		ebb_fleet_end(s, k);
}

void known_finished(struct sim *s, int job, int64_t run_ms)
{
	int type = s->trace->jobs[job].type, other;

	if (!known_estimates(s))
		return;
	if ((other = durations_add(ebb_of(s)->known.history, type, run_ms)) == -2)
		mem_out("the durations' history");
	refresh(s, type);
	if (other >= 0)
		refresh(s, other);
}

int64_t known_end_ms(const struct sim *s, int k)
{
	int job = s->inst[k].newest;
	const struct trace_job *j = &s->trace->jobs[job];

	if (!known_estimates(s))
		return sim_run_end(s, job);
	/* serve's: the lease's start and the reference run time expected,
	 * whatever the offer's speed. */
	return s->jobs[job].since + (j->est_ms ? j->est_ms : ebb_of(s)->known.types[j->type].est_ms);
}
