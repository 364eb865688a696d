/* The simulator's discrete-event engine (see sim.h, sim_internal.h).
 *
 * Events in one heap: job arrivals are read from the sorted trace, and
 * instance boots, job ends and spot reclaims are pushed as they are
 * scheduled. After each batch of events at one instant, instances with
 * GPUs free take queued jobs that fit them, as many as fit, in serve's
 * lease order (policy/lease_order.h), and the policy looks when it is due,
 * called only through its hooks (sim_policy.h). An instance runs jobs side
 * by side, as serve's workers do, and is idle only with all its GPUs
 * free. Instances are billed as they stop, under their offer's billing
 * rule. */
#include "sim/sim_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "policy/classes.h"
#include "policy/lease_order.h"

void *sim_grown(void *p, size_t n, size_t size)
{
	if (n > SIZE_MAX / size)
		mem_out("an array past the address space");
	return xrealloc(p, n * size);
}

void *sim_ring_grow(void *items, size_t *head, size_t n, size_t *cap, size_t size)
{
	size_t room = *cap ? 2 * *cap : 16;
	char *grown = sim_grown(NULL, room, size);

	for (size_t k = 0; k < n; k++)
		memcpy(grown + k * size, (char *)items + (*head + k) % *cap * size, size);
	free(items);
	*head = 0;
	*cap = room;
	return grown;
}

/* ---- heap ---- */

static int before(const struct event *a, const struct event *b)
{
	if (a->at != b->at)
		return a->at < b->at;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	if (a->inst != b->inst)
		return a->inst < b->inst;
	return a->job < b->job;
}

void heap_push(struct heap *h, struct event e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->e = sim_grown(h->e, h->cap, sizeof *h->e);
	}
	i = h->n++;
	while (i > 0 && before(&e, &h->e[(i - 1) / 2])) {
		h->e[i] = h->e[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->e[i] = e;
}

struct event heap_pop(struct heap *h)
{
	struct event top = h->e[0], last = h->e[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c]))
			c++;
		if (!before(&h->e[c], &last))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	if (h->n)
		h->e[i] = last;
	return top;
}

void sim_push(struct sim *s, struct event e)
{
	heap_push(&s->events, e);
}

/* ---- the queue ---- */

/* The type a job's class is kept by: its own if its handler has a
 * setup (plan() is told the setup per class) or it shares a GPU (what
 * fits beside it is the type's share and memory), else -1, which leaves
 * the classes of a config without either as they were. */
static int class_type(const struct sim *s, const struct trace_job *j)
{
	return (s->setup_ms && s->setup_ms[j->type] > 0) || sim_share_of(s, j) < 1 ? j->type : -1;
}

/* The class of job k, made if new. */
static int class_of(struct sim *s, const struct trace_job *j, int team)
{
	struct squeue *q;
	int type = class_type(s, j);

	for (int k = 0; k < s->nq; k++) {
		q = &s->q[k];
		if (q->gpus == j->gpus && q->lane == j->lane && q->team == team && q->priority == j->priority &&
		    q->type == type)
			return k;
	}
	s->q = sim_grown(s->q, (size_t)s->nq + 1, sizeof *s->q);
	q = &s->q[s->nq];
	*q = (struct squeue){.gpus = j->gpus, .lane = j->lane, .team = team, .priority = j->priority, .type = type,
			     .share = sim_share_of(s, j),
			     .lane_rank = lease_lane_rank(&s->policy->settings, s->trace->lanes[j->lane])};
	return s->nq++;
}

/* Where job goes in its queue put back: after the jobs put back before
 * it that were submitted earlier, as serve's seq orders them. */
static size_t put_back_at(const struct sim *s, const struct squeue *q, int job)
{
	size_t at = 0;

	while (at < q->len) {
		int other = q->items[(q->head + at) % q->cap];
		if (!s->jobs[other].ran || other > job)
			break;
		at++;
	}
	return at;
}

void sim_enqueue(struct sim *s, int job, int front)
{
	struct squeue *q = &s->q[s->jobs[job].cls];

	if (q->len == q->cap)
		q->items = sim_ring_grow(q->items, &q->head, q->len, &q->cap, sizeof *q->items);
	if (front) {
		size_t at = put_back_at(s, q, job);
		q->head = (q->head + q->cap - 1) % q->cap;
		for (size_t k = 0; k < at; k++)
			q->items[(q->head + k) % q->cap] = q->items[(q->head + k + 1) % q->cap];
		q->items[(q->head + at) % q->cap] = job;
	} else {
		q->items[(q->head + q->len) % q->cap] = job;
	}
	q->len++;
	q->work_ms += (double)s->jobs[job].left_ms;
	s->queued++;
	s->queued_gpus += sim_job_gpus(s, job);
	s->jobs[job].queued = 1;
	s->jobs[job].since = s->now;
	s->result->requeues += front;
	if (s->kind->queued)
		s->kind->queued(s, job, 1);
}

/* Takes a job out of its class's queue: its head, but for a policy that
 * chooses the job each instance takes (sim_policy.take). */
static void take(struct sim *s, int job)
{
	struct squeue *q = &s->q[s->jobs[job].cls];
	size_t at = 0;

	while (q->items[(q->head + at) % q->cap] != job)
		at++;
	for (; at > 0; at--)
		q->items[(q->head + at) % q->cap] = q->items[(q->head + at - 1) % q->cap];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	q->work_ms -= (double)s->jobs[job].left_ms;
	s->queued--;
	s->queued_gpus -= sim_job_gpus(s, job);
	s->jobs[job].queued = 0;
	if (s->kind->queued)
		s->kind->queued(s, job, -1);
}

/* ---- money ---- */

/* Advances the running cost and the utilisation integrals to `to`. */
static void advance(struct sim *s, int64_t to)
{
	double dt = (double)(to - s->now);

	if (dt <= 0)
		return;
	s->cost += s->spend_per_ms * dt;
	s->gpu_up_ms += dt * (double)s->gpus_live;
	s->gpu_busy_ms += dt * (double)s->gpus_busy;
	s->now = to;
}

/* Samples up to `to`: the state holds still between events, so a sample
 * between two of them is the state now, with the cost run on. */
static void sample(struct sim *s, int64_t to)
{
	while (s->opts->sample_ms && s->next_sample <= to) {
		struct sim_sample *x;
		/* Room doubles: a realloc per sample copied them all each
		 * time, which the sanitizers' allocators do not avoid. */
		if (s->result->nsamples == s->cap_samples) {
			s->cap_samples = s->cap_samples ? s->cap_samples * 2 : 64;
			s->result->samples = sim_grown(s->result->samples, s->cap_samples, sizeof *x);
		}
		x = &s->result->samples[s->result->nsamples++];
		memset(x, 0, sizeof *x);
		x->t_ms = s->next_sample;
		x->queued = (int)s->queued;
		x->cost = s->cost + s->spend_per_ms * (double)(s->next_sample - s->now);
		for (int a = 0; a < s->nroster; a++) {
			const struct sinst *i = &s->inst[s->roster[a]];
			x->instances[i->offer] += i->state != S_GONE;
		}
		s->next_sample += s->opts->sample_ms;
	}
}

int64_t sim_now(const struct sim *s)
{
	return s->now;
}

int64_t sim_setup_ms(const struct sim *s, int job)
{
	return s->jobs[job].setup ? s->setup_ms[s->trace->jobs[job].type] : 0;
}

int64_t sim_run_end(const struct sim *s, int job)
{
	const struct sjob *j = &s->jobs[job];
	double work_ms = ceil((double)j->left_ms / sim_offer(s, &s->inst[j->inst])->speed);

	return j->since + sim_setup_ms(s, job) + (int64_t)work_ms;
}

/* Whether the end e is still due: its job runs on its instance and ends
 * then. */
static int still_due(const struct sim *s, const struct event *e)
{
	const struct sjob *j = &s->jobs[e->job];

	return !j->queued && !j->counted && j->inst == e->inst && sim_run_end(s, e->job) == e->at;
}

/* A job ends. */
static void finish(struct sim *s, int job)
{
	struct sjob *j = &s->jobs[job];
	int64_t ran = s->now - j->since - sim_setup_ms(s, job); /* its work's */

	sim_job_leaves(s, job);
	if (s->kind->finished)
		s->kind->finished(s, job, ran);
	j->left_ms = 0;
	s->waits[s->nwaits++] = j->waited_ms;
	j->counted = 1;
	s->done++;
	s->progress_ms = s->now;
}

static void requeue_wait(struct sim *s, int64_t ms)
{
	if (s->nrequeue_waits == s->cap_requeue_waits) {
		s->cap_requeue_waits = s->cap_requeue_waits ? 2 * s->cap_requeue_waits : 64;
		s->requeue_waits = sim_grown(s->requeue_waits, s->cap_requeue_waits, sizeof *s->requeue_waits);
	}
	s->requeue_waits[s->nrequeue_waits++] = ms;
}

/* The head of class c in the lease order: a job is the id its index
 * is (the trace is in submission order), put back once it ran. */
static struct lease_key head_key(const struct sim *s, int c)
{
	const struct squeue *q = &s->q[c];
	int job = q->items[q->head];

	return (struct lease_key){.lane_rank = q->lane_rank, .priority = q->priority,
				  .seq = lease_seq(job, s->jobs[job].ran), .id = job};
}

int sim_lease_next(struct sim *s, int k, int room)
{
	int best = -1;
	struct lease_key best_key = {0}, key;

	for (int c = 0; c < s->nq; c++) {
		struct squeue *q = &s->q[c];
		int gpus = q->gpus > 1 ? q->gpus : 1;
		if (!q->len || (s->nteams && gpus > s->team_room[q->team]) || !sim_fits(s, k, q->items[q->head], room))
			continue;
		key = head_key(s, c);
		if (best < 0 || lease_before(&key, &best_key)) {
			best = c;
			best_key = key;
		}
	}
	return best < 0 ? -1 : s->q[best].items[s->q[best].head];
}

/* The jobs of type that instance i runs. */
static int running_of_type(const struct sim *s, const struct sinst *i, int type)
{
	int n = 0;

	for (int job = i->newest; job >= 0; job = s->jobs[job].next_on)
		n += s->trace->jobs[job].type == type;
	return n;
}

/* Job starts on instance i: with a resident handler of its type waiting
 * there (one more than its jobs running), it runs at once; else it
 * starts one first, which takes the type's setup and stops the handlers
 * of another type the instance had, as the worker stops waiting ones
 * whose GPUs another type needs. A type without a handler leaves the
 * instance's as they were. */
static void start_handler(const struct sim *s, struct sinst *i, struct sjob *j, int job)
{
	int type = s->trace->jobs[job].type;

	j->setup = 0;
	if (!s->setup_ms || s->setup_ms[type] == 0 ||
	    (i->warm == type && running_of_type(s, i, type) < i->handlers))
		return;
	j->setup = 1;
	if (i->warm != type)
		i->handlers = 0;
	i->warm = type;
	i->handlers++;
}

/* Instance k starts a queued job beside those it runs. */
static void start_job(struct sim *s, int k, int job)
{
	struct sinst *i = &s->inst[k];
	struct sjob *j = &s->jobs[job];

	take(s, job);
	if (!j->ran && s->result->first_start_ms)
		s->result->first_start_ms[job] = s->now;
	if (s->result->last_start_ms)
		s->result->last_start_ms[job] = s->now;
	j->waited_ms += s->now - j->since;
	if (j->ran)
		requeue_wait(s, s->now - j->since);
	j->ran = 1;
	j->since = s->now;
	j->inst = k;
	start_handler(s, i, j, job);
	if (i->njobs++ == 0) {
		i->state = S_BUSY;
		s->idling--;
	} else if (s->kind->running) {
		s->kind->running(s, k, 0); /* no longer the newest */
	}
	j->next_on = i->newest;
	i->newest = job;
	sim_hold(s, k, job);
	s->q[j->cls].running++;
	/* A shared job counts one GPU to its team, as in serve. */
	s->team_room[s->q[j->cls].team] -= sim_job_gpus(s, job);
	s->running++;
	sim_push(s, (struct event){sim_run_end(s, job), EV_FINISH, k, job});
	if (s->kind->running)
		s->kind->running(s, k, 1);
	sim_changed(s, k);
}

/* The queued job instance k takes: the policy's choice, else the first
 * in lease order that fits its free GPUs. */
static int job_for(struct sim *s, int k)
{
	return s->kind->take ? s->kind->take(s, k) : sim_lease_next(s, k, s->inst[k].free_gpus);
}

/* Instances with room take queued jobs, as many as fit each. */
/* The fewest GPUs a queued job asks for: an instance with less free can
 * take none. Taking jobs only raises it, so it holds for a whole pass. */
static int least_gpus_queued(const struct sim *s)
{
	int least = INT_MAX;

	for (int c = 0; c < s->nq; c++) {
		int g = s->q[c].gpus > 1 ? s->q[c].gpus : 1;
		if (s->q[c].len && g < least)
			least = g;
	}
	return least;
}

/* What each team may still take in this dispatch: teams_share() on what
 * its jobs hold and ask for, as serve's lease reads it (team_state.c).
 * Starting a job moves its GPUs from asked to held, which leaves the
 * shares as they were: one call holds for the whole pass. */
static void share_teams(struct sim *s)
{
	struct team_share sh[CONF_MAX_TEAMS + 1] = {{0}};

	for (int c = 0; c < s->nq; c++) {
		int64_t gpus = s->q[c].gpus > 1 ? s->q[c].gpus : 1;
		sh[s->q[c].team].used_gpus += s->q[c].running * gpus;
		sh[s->q[c].team].queued_gpus += (int64_t)s->q[c].len * gpus;
	}
	teams_share(s->policy->settings.teams, s->nteams, s->policy->settings.max_gpus, sh);
	/* A team past its budget takes no job, as serve's lease gives it none. */
	for (int t = 0; t < s->nteams; t++)
		s->team_room[t] = s->over_budget >> t & 1 ? 0 : sh[t].allowed_gpus - sh[t].used_gpus;
}

/* serve's warm preference: a job goes first to an instance whose
 * resident handler is of its type. Each open instance with one takes the
 * job serve's lease would give it (the next in lease order that fits it)
 * only if it is of that type; passes repeat while one did, as a job taken
 * can bring another instance's type to the head. Those left go to the
 * usual pass. */
static void dispatch_warm(struct sim *s)
{
	int took = 1;

	while (took && s->queued > 0) {
		took = 0;
		for (int a = 0; a < s->nopen && s->queued > 0; a++) {
			int k = s->open[a], job;
			struct sinst *i = &s->inst[k];

			if (i->state == S_GONE || i->warm < 0 || i->draining)
				continue;
			while ((i->free_gpus > 0 || sim_share_room(s, k)) &&
			       (job = sim_lease_next(s, k, i->free_gpus)) >= 0 && s->trace->jobs[job].type == i->warm) {
				start_job(s, k, job);
				took = 1;
			}
		}
	}
}

static void dispatch(struct sim *s)
{
	int a, kept = 0, need = s->queued > 0 ? least_gpus_queued(s) : 0;

	if (s->nteams && s->queued > 0)
		share_teams(s);
	/* A policy that picks each instance's job (sim_policy.take) picks
	 * it alone. */
	if (s->setup_ms && !s->kind->take)
		dispatch_warm(s);

	/* Over the open instances only, in index order, which is launch
	 * order, the order serve offers a job to its workers in
	 * (policy/placement.h): a long replay launches hundreds of
	 * thousands, and this runs after every event.
	 * Those left full leave the list in one pass at the end (one at a
	 * time from its head was quadratic when a burst of a million jobs met
	 * as many instances). */
	for (a = 0; a < s->nopen && s->queued > 0; a++) {
		int k = s->open[a], job;
		struct sinst *i = &s->inst[k];

		if (i->state == S_GONE)
			continue;
		while (!i->draining && (i->free_gpus >= need || sim_share_room(s, k)) && (job = job_for(s, k)) >= 0)
			start_job(s, k, job);
		if (i->free_gpus > 0 || sim_share_room(s, k))
			s->open[kept++] = k;
		else
			i->open = 0;
	}
	if (kept < a) {
		memmove(&s->open[kept], &s->open[a], (size_t)(s->nopen - a) * sizeof *s->open);
		s->nopen -= a - kept;
	}
}

/* ---- the policy: what it launches on, when it starts and looks ---- */

/* Can any offer the policy launches run a job of this many GPUs? */
static int placeable(const struct sim *s, int gpus)
{
	for (int k = 0; k < s->opts->noffers; k++) {
		if ((policy_any_offer(s->policy) || k == s->policy->offer) && s->opts->offers[k].gpus >= gpus)
			return 1;
	}
	return 0;
}

static void run_policy(struct sim *s)
{
	/* Cleared first: what the policy itself stops is a change to look at
	 * again, as serve is woken when an instance it released is gone (an
	 * idle one released makes room under the limits for queued work). */
	s->dirty = 0;
	if (s->kind->look)
		s->kind->look(s);
	s->last_policy = s->now;
}

/* When the policy looks next (INT64_MAX: not until something happens):
 * when it asked (next_policy), and after a change as it says. */
static int64_t policy_due(const struct sim *s)
{
	int64_t due = s->next_policy ? s->next_policy : INT64_MAX, soon = INT64_MAX;

	if (s->dirty && s->kind->on_change)
		soon = s->kind->on_change(s);
	return soon < due ? soon : due;
}

/* ---- the tail ---- */

/* Every job has ended: whether the replay ends now, the policy being
 * down to its standing floor. At the first call, the last job has just
 * ended: what stopping everything then would have cost is noted, for the
 * tail's cost. */
static int tail_over(struct sim *s)
{
	if (s->tail_from < 0) {
		s->tail_from = s->now;
		s->cost_at_tail = s->result->cost_usd;
		for (int a = 0; a < s->nroster; a++) {
			if (s->inst[s->roster[a]].state != S_GONE)
				s->cost_at_tail += sim_billed_usd(s, s->roster[a]);
		}
	}
	/* The fleet the policy keeps with no work at all. */
	return s->nup <= (s->kind->floor ? s->kind->floor(s) : 0);
}

/* ---- what the replay measured ---- */

/* Waits (non-negative milliseconds) in ascending order: a radix sort on
 * 11-bit digits, as many as the longest wait needs. On a million waits it
 * is several times quicker than qsort with its comparison callback. */
void sim_sort_waits(int64_t *w, size_t n)
{
	int64_t *tmp = sim_grown(NULL, n + 1, sizeof *tmp), *from = w, *to = tmp, longest = 0;

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

double sim_quantile_s(const int64_t *sorted, size_t n, double q)
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

	/* A replay that stopped short: the jobs that ran and did not end
	 * have waited this long so far. */
	for (size_t k = 0; k < s->trace->n; k++) {
		const struct sjob *j = &s->jobs[k];
		if (j->ran && !j->counted)
			s->waits[s->nwaits++] = j->waited_ms + (j->queued ? s->now - j->since : 0);
	}
	sim_sort_waits(s->waits, s->nwaits);
	sim_sort_waits(s->requeue_waits, s->nrequeue_waits);
	s->result->requeue_wait_p95_s = sim_quantile_s(s->requeue_waits, s->nrequeue_waits, 0.95);
	for (size_t k = 0; k < s->nwaits; k++)
		sum += (double)s->waits[k];
	s->result->wait_p50_s = sim_quantile_s(s->waits, s->nwaits, 0.50);
	s->result->wait_p95_s = sim_quantile_s(s->waits, s->nwaits, 0.95);
	s->result->wait_p99_s = sim_quantile_s(s->waits, s->nwaits, 0.99);
	s->result->wait_mean_s = s->nwaits ? sum / (double)s->nwaits / 1000.0 : 0;
	/* done counts the left-out jobs too, so that the replay can end. */
	s->result->jobs_done = (int64_t)s->done - s->result->unplaceable;
	s->result->idle_gpu_hours = s->result->gpu_hours_billed - s->result->gpu_hours_busy;
	s->result->end_ms = s->now;
	sim_teams_summarise(s);
	if (s->tail_from >= 0) {
		s->result->tail_ms = s->now - s->tail_from;
		s->result->tail_cost_usd = s->result->cost_usd - s->cost_at_tail;
	}
}

int sim_load(const char *trace_path, const char *offers_path, const struct trace_filter *filters,
	     int nfilters, int skip_bad, struct trace *t, struct sim_options *o, char *err, size_t errsize)
{
	struct config cfg;

	if (offers_path) {
		if (config_load(&cfg, o->plugins, offers_path, err, errsize) != 0) {
			config_free(&cfg);
			return -1;
		}
	} else {
		config_defaults(&cfg, o->plugins);
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

/* The replay's arrays, and each job with its class. */
static void start(struct sim *s)
{
	const struct trace *t = s->trace;
	double slowest = 1, longest_ms = 0;

	s->jobs = sim_grown(NULL, t->n + 1, sizeof *s->jobs);
	if (s->opts->job_starts) {
		s->result->first_start_ms = sim_grown(NULL, t->n + 1, sizeof *s->result->first_start_ms);
		s->result->last_start_ms = sim_grown(NULL, t->n + 1, sizeof *s->result->last_start_ms);
		for (size_t k = 0; k < t->n; k++)
			s->result->first_start_ms[k] = s->result->last_start_ms[k] = -1;
	}
	s->waits = sim_grown(NULL, t->n + 1, sizeof *s->waits);
	for (int k = 0; k < s->opts->noffers; k++)
		slowest = fmin(slowest, s->opts->offers[k].speed);
	/* The trace's types map to the config's [type.NAME] by name. */
	if (classes_longest_setup_ms(&s->policy->settings, NULL) > 0) {
		s->setup_ms = sim_grown(NULL, (size_t)t->ntypes + 1, sizeof *s->setup_ms);
		for (int k = 0; k < t->ntypes; k++)
			s->setup_ms[k] = classes_setup_ms(&s->policy->settings, NULL, t->types[k]);
	}
	sim_shares_start(s);
	/* Teams are those of a policy that shares GPUs among them: a
	 * job of a team with no [team.NAME] is the default team's, as in
	 * serve. */
	if (s->kind->teams && s->policy->settings.nteams > 0) {
		s->team_index = sim_grown(NULL, (size_t)t->nteams + 1, sizeof *s->team_index);
		for (int k = 0; k < t->nteams; k++)
			s->team_index[k] = teams_index(s->policy->settings.teams, s->policy->settings.nteams, t->teams[k]);
		s->nteams = s->policy->settings.nteams;
	}
	for (size_t k = 0; k < t->n; k++) {
		int cls = class_of(s, &t->jobs[k], s->nteams ? s->team_index[t->jobs[k].team] : 0);
		s->jobs[k] = (struct sjob){.left_ms = t->jobs[k].duration_ms, .cls = cls};
		longest_ms = fmax(longest_ms, (double)t->jobs[k].duration_ms / slowest);
		/* A job no usable offer fits could never run: it is left out and
		 * counted, not waited for forever. */
		if (!placeable(s, t->jobs[k].gpus)) {
			s->jobs[k].counted = 1;
			s->done++;
			s->result->unplaceable++;
		}
	}
	s->stall_ms = (int64_t)fmax(SIM_STALL_MS, longest_ms * SIM_STALL_JOBS);
}

static void release(struct sim *s)
{
	for (int c = 0; c < s->nq; c++)
		free(s->q[c].items);
	for (int k = 0; k < s->ninst; k++)
		free(s->inst[k].parts); /* of those still up */
	free(s->q);
	free(s->events.e);
	free(s->inst);
	free(s->roster);
	free(s->open);
	free(s->jobs);
	free(s->setup_ms);
	free(s->shares);
	free(s->team_index);
	free(s->waits);
	free(s->requeue_waits);
	if (s->kind->free)
		s->kind->free(s);
	free(s->policy_state);
	window_free(&s->idled);
}

/* Spot reclaims instance k: the policy does what it does of one (its
 * replacement, say), else the instance stops; either way every job on
 * it is put back. */
static void reclaim(struct sim *s, int k)
{
	s->result->reclaims++;
	if (s->kind->reclaim)
		s->kind->reclaim(s, k);
	else
		sim_stop(s, k);
}

/* The spot instance a reclaim of the trace's takes now, -1: none (sim.h,
 * reclaims_missed). A job's instance is where it runs only while its
 * instance's list holds it. */
static int placed_target(const struct sim *s, const struct trace_reclaim *r)
{
	int k = r->target - 1;

	if (s->trace->reclaims_by_job) {
		if ((size_t)r->target >= s->trace->n || !s->jobs[r->target].ran)
			return -1;
		k = s->jobs[r->target].inst;
		if (k < 0 || k >= s->ninst || s->inst[k].state == S_GONE)
			return -1;
		for (int j = s->inst[k].newest;; j = s->jobs[j].next_on) {
			if (j < 0)
				return -1;
			if (j == r->target)
				break;
		}
	}
	if (k < 0 || k >= s->ninst || s->inst[k].state == S_GONE || s->inst[k].market != MARKET_SPOT)
		return -1;
	return k;
}

/* What the policy is told of durations, for the outputs to say: one told
 * estimates is told the trace's own with --oracle-durations. */
static const char *durations_told(const struct policy *p, const struct sim_options *o)
{
	return o->oracle_durations && strcmp(p->kind->durations, "estimated") == 0 ? "oracle" : p->kind->durations;
}

void sim_run(const struct trace *t, const struct policy *p, const struct sim_options *o,
	     struct sim_result *r)
{
	struct sim s = {.trace = t, .policy = p, .kind = p->kind, .opts = o, .result = r,
			.rng = o->seed ? o->seed : 1, .last_policy = -1, .tail_from = -1};
	size_t next = 0;

	memset(r, 0, sizeof *r);
	snprintf(r->policy, sizeof r->policy, "%s", p->spec);
	r->durations = durations_told(p, o);
	r->jobs = (int64_t)t->n;
	if (p->kind->offline) {
		p->kind->offline(t, &p->settings, o, r);
		return;
	}
	start(&s);
	sim_teams_start(&s);
	if (s.kind->state_size)
		s.policy_state = xcalloc(1, s.kind->state_size);
	if (s.kind->start)
		s.kind->start(&s);
	for (size_t k = 0; k < t->nreclaims; k++)
		sim_push(&s, (struct event){t->reclaims[k].at_ms, EV_PLACED, -1, (int)k});
	for (;;) {
		int64_t t_arrival, t_event = s.events.n ? s.events.e[0].at : INT64_MAX, t_policy = policy_due(&s), at;

		t_arrival = next < t->n ? t->jobs[next].submit_ms : INT64_MAX;
		if (s.done == t->n && s.queued == 0 && tail_over(&s))
			break;
		at = t_arrival < t_event ? t_arrival : t_event;
		at = t_policy < at ? t_policy : at;
		/* A policy that would hold instances past its floor for ever, or
		 * for longer than a replay waits for anything, is cut short. */
		if (s.tail_from >= 0 && (at == INT64_MAX || at - s.tail_from > SIM_STALL_MS)) {
			r->tail_cut = 1;
			sample(&s, s.tail_from + SIM_STALL_MS);
			advance(&s, s.tail_from + SIM_STALL_MS);
			break;
		}
		if (at == INT64_MAX)
			break; /* nothing left can happen: jobs that no instance fits stay queued */
		if (at < s.now)
			at = s.now;
		if (s.queued == 0 && s.running == 0) {
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
				if (s.kind->arrival)
					s.kind->arrival(&s, (int)next);
				sim_enqueue(&s, (int)next, 0);
				s.dirty = 1;
			}
			next++;
		}
		while (s.events.n && s.events.e[0].at <= s.now) {
			struct event e = heap_pop(&s.events);
			if (e.kind == EV_RESUME) {
				sim_enqueue(&s, e.job, 1);
				/* It has waited since its preemption. */
				s.jobs[e.job].since -= p->settings.preempt_backoff_ms;
				s.dirty = 1;
				continue;
			}
			if (e.kind == EV_PLACED) {
				int k = placed_target(&s, &t->reclaims[e.job]);
				if (k >= 0)
					reclaim(&s, k);
				continue;
			}
			if (s.inst[e.inst].state == S_GONE)
				continue;
			if (e.kind == EV_RECLAIM) {
				reclaim(&s, e.inst);
			} else if (e.kind == EV_READY) {
				s.booting--;
				sim_make_idle(&s, e.inst);
				sim_changed(&s, e.inst);
				s.dirty = 1;
			} else if (still_due(&s, &e)) {
				finish(&s, e.job);
			}
		}
		dispatch(&s);
		if (policy_due(&s) <= s.now) {
			s.next_policy = 0;
			run_policy(&s);
			dispatch(&s);
		}
	}
	/* What is still up at the end (a standing floor, a cut tail, a
	 * stalled replay) is billed up to then. The lists are done with:
	 * billing alone keeps this linear, where a stop of each, from the
	 * lists' heads, was quadratic in the fleet. */
	for (int k = 0; k < s.ninst; k++) {
		if (s.inst[k].state != S_GONE)
			sim_bill(&s, k);
	}
	/* Those the trace placed are all the reclaims there were. */
	r->reclaims_missed = t->has_reclaims ? (int64_t)t->nreclaims - r->reclaims : 0;
	summarise(&s);
	release(&s);
}

void sim_result_free(struct sim_result *r)
{
	free(r->first_start_ms);
	r->first_start_ms = NULL;
	free(r->last_start_ms);
	r->last_start_ms = NULL;
	free(r->samples);
	r->samples = NULL;
	r->nsamples = 0;
	free(r->teams);
	r->teams = NULL;
	r->nteams = 0;
}
