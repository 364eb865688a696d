/* The clairvoyant's plan (clairvoyant.c), made from the whole trace
 * before the replay: each job on
 * the offer and market with the least expected cost per unit of its work
 * for its GPUs' share of the instance (plan()'s own price,
 * plan_cost_per_work_s, times its GPUs over the offer's, with the boot
 * left out: an instance runs many jobs); then, offer by offer, jobs in
 * order of arrival into chains, the jobs of one instance: each job (1)
 * beside the jobs of a busy chain whose free GPUs hold it, the one with
 * the fewest (it costs nothing more); with a wait budget, else beside
 * those of a chain with jobs waiting, if it ends before they start; else
 * (2) on the chain whose GPUs free for it the soonest within it, waiting
 * until then; else (3) after the idle chain whose last job ended the
 * latest before it arrived, if that one idled no longer than a boot: the
 * latest end leaves the earlier ones for later jobs, which can wait on
 * them less; else (4) on a chain of its own. A job waiting for a chain
 * holds its GPUs in the plan from when it is placed, so that no later
 * job takes them first: a chain's jobs are kept in the order they start,
 * and start in that order, each when it has arrived and the GPUs are
 * free, which is when the plan says. */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_internal.h"
#include "sim/clairvoyant_internal.h"

/* The run, in reference seconds, its offer is priced over: so long that
 * the boot, shared by a chain's jobs, does not count. */
#define PRICED_OVER_S 1e9

/* The pool (offer * MARKET_COUNT + market) cheapest per unit of job k's
 * work for its GPUs' share; -1 when no offer fits it. */
static int pool_of(const struct sim *s, size_t k)
{
	const struct trace_job *j = &s->trace->jobs[k];
	int64_t ckpt = s->opts->checkpoint_every_ms > 0 ? s->opts->checkpoint_every_ms : INT64_MAX;
	double best = INFINITY;
	int pool = -1;

	for (int f = 0; f < s->opts->noffers; f++) {
		const struct offer *o = &s->opts->offers[f];
		for (int m = 0; m < MARKET_COUNT; m++) {
			double c;
			if (o->gpus < j->gpus || o->price[m] < 0)
				continue;
			c = plan_cost_per_work_s(o, (enum market)m, ckpt, PRICED_OVER_S, (double)j->duration_ms / 1000.0, 0) *
			    sim_job_gpus(s, (int)k) / o->gpus;
			if (c < best) {
				best = c;
				pool = f * MARKET_COUNT + m;
			}
		}
	}
	return pool;
}

#define POOLS (SIM_MAX_OFFERS * MARKET_COUNT)

/* The chains' scratch while they are made. */
struct making {
	int64_t *end;  /* per chain: when its jobs so far have all ended */
	int *last;     /* per chain: its last job */
	int *below;    /* per chain: the chain under it on its pool's stack */
	int *free;     /* per chain: its GPUs free now */
	int *prev, *next; /* per chain: its neighbours among the busy ones of its pool as free */
	int top[POOLS]; /* per pool: chains idle, the latest ended on top */
	/* per pool and GPUs free: the busy chains with that many free */
	int busy[POOLS][INSTANCE_GPUS_MAX + 1];
	/* per pool: the ends of the jobs placed and not ended by now (inst:
	 * the chain, job: the job), those waiting to start included */
	struct heap running[POOLS];
	/* with a wait budget, soonest()'s: the ends next in order, the
	 * chains walked, and the GPUs each frees as their jobs end */
	size_t *edge;
	int *walked, *freed;
	/* and per job, when it starts in the plan; per chain, its last job
	 * started by now (its jobs are in order of start), the GPUs of the
	 * jobs after it (waiting), and its neighbours in its pool's list of
	 * chains with jobs waiting (wprev -2: not in it) */
	int64_t *start;
	int *started, *waiting, *wprev, *wnext;
	int wait_head[POOLS];
};

static int by_launch(const void *a, const void *b)
{
	const struct chain *x = a, *y = b;

	if (x->launch_at != y->launch_at)
		return x->launch_at < y->launch_at ? -1 : 1;
	return x->first - y->first;
}

static int pool_gpus(const struct sim *s, int p)
{
	return s->opts->offers[p / MARKET_COUNT].gpus;
}

/* Busy chain c, of pool p, joins (1) or leaves (0) its pool's list of
 * those with as many GPUs free, if some of its GPUs are free and some not
 * (none while a job waits for it: its GPUs free counts that job's, less
 * than none). */
static void listed(struct sim *s, struct making *mk, int p, int c, int in)
{
	int f = mk->free[c], *head;

	if (f <= 0 || f == pool_gpus(s, p))
		return;
	head = &mk->busy[p][f];
	if (in) {
		mk->prev[c] = -1;
		mk->next[c] = *head;
		if (*head >= 0)
			mk->prev[*head] = c;
		*head = c;
		return;
	}
	if (mk->prev[c] >= 0)
		mk->next[mk->prev[c]] = mk->next[c];
	else
		*head = mk->next[c];
	if (mk->next[c] >= 0)
		mk->prev[mk->next[c]] = mk->prev[c];
}

/* The jobs of pool q ended by `at` free their GPUs: a chain with all
 * free is idle, the latest on top of its pool's stack (ends leave the
 * heap in order, arrivals come in order). Pools share nothing: each is
 * brought up to date when a job of its own comes. */
static void ended_by(struct sim *s, struct making *mk, int q, int64_t at)
{
	while (mk->running[q].n && mk->running[q].e[0].at <= at) {
		struct event e = heap_pop(&mk->running[q]);
		int c = e.inst;
		listed(s, mk, q, c, 0);
		mk->free[c] += sim_job_gpus(s, e.job);
		if (mk->free[c] == pool_gpus(s, q)) {
			mk->below[c] = mk->top[q];
			mk->top[q] = c;
		}
		listed(s, mk, q, c, 1);
	}
}

/* The busy chain of pool p with the fewest GPUs free that hold gpus; -1
 * if none. */
static int busy_fitting(const struct sim *s, const struct making *mk, int p, int gpus)
{
	for (int f = gpus; f < pool_gpus(s, p); f++) {
		if (mk->busy[p][f] >= 0)
			return mk->busy[p][f];
	}
	return -1;
}

/* Whether entry a of a running heap ends before entry b: by time, then
 * chain, then job, an order that does not depend on the heap's shape. */
static int before(const struct heap *h, size_t a, size_t b)
{
	const struct event *x = &h->e[a], *y = &h->e[b];

	if (x->at != y->at)
		return x->at < y->at;
	return x->inst != y->inst ? x->inst < y->inst : x->job < y->job;
}

/* The ends not yet walked whose parent in running heap h was: a heap of
 * its entries (as before()), in mk->edge, n of them. */
static void edge_push(struct making *mk, const struct heap *h, size_t *n, size_t entry)
{
	size_t k = (*n)++;

	for (; k > 0 && before(h, entry, mk->edge[(k - 1) / 2]); k = (k - 1) / 2)
		mk->edge[k] = mk->edge[(k - 1) / 2];
	mk->edge[k] = entry;
}

static size_t edge_pop(struct making *mk, const struct heap *h, size_t *n)
{
	size_t top = mk->edge[0], last = mk->edge[--*n], k = 0;

	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && before(h, mk->edge[c + 1], mk->edge[c]))
			c++;
		if (!before(h, mk->edge[c], last))
			break;
		mk->edge[k] = mk->edge[c];
		k = c;
	}
	if (*n)
		mk->edge[k] = last;
	return top;
}

/* The chain of pool p whose GPUs free enough for a job of gpus the
 * soonest by until, and when (*start); -1 if none. Its jobs' ends are
 * all it waits on: every job placed holds its GPUs from then, so a
 * chain's free GPUs only grow as time goes on. (Those free now hold no
 * such job: busy_fitting() found none.) The ends are walked in order
 * from the running heap's root, each entry's children once it is
 * walked, until a chain has room or the next end is past until. */
static int soonest(struct sim *s, struct making *mk, int p, int gpus, int64_t until, int64_t *start)
{
	const struct heap *h = &mk->running[p];
	size_t n = 0, walked = 0;
	int c = -1;

	if (h->n && h->e[0].at <= until)
		edge_push(mk, h, &n, 0);
	while (n > 0 && c < 0) {
		size_t k = edge_pop(mk, h, &n);
		const struct event *e = &h->e[k];
		for (size_t child = 2 * k + 1; child <= 2 * k + 2 && child < h->n; child++) {
			if (h->e[child].at <= until)
				edge_push(mk, h, &n, child);
		}
		mk->walked[walked++] = e->inst;
		mk->freed[e->inst] += sim_job_gpus(s, e->job);
		if (mk->free[e->inst] + mk->freed[e->inst] >= gpus) {
			c = e->inst;
			*start = e->at;
		}
	}
	while (walked > 0)
		mk->freed[mk->walked[--walked]] = 0;
	return c;
}

/* Chain c's jobs started by `at` are no longer waiting. */
static void started_by(const struct sim *s, struct making *mk, int c, int64_t at)
{
	const int *next = cv_of(s)->next_job;

	for (int j; (j = next[mk->started[c]]) >= 0 && mk->start[j] <= at; mk->started[c] = j) {
		if (mk->start[j] > s->trace->jobs[j].submit_ms)
			mk->waiting[c] -= sim_job_gpus(s, j);
	}
}

/* Chain c of pool p joins (1) or leaves (0) the pool's chains with jobs
 * waiting. */
static void waits_listed(struct making *mk, int p, int c, int in)
{
	if (in) {
		mk->wprev[c] = -1;
		mk->wnext[c] = mk->wait_head[p];
		if (mk->wait_head[p] >= 0)
			mk->wprev[mk->wait_head[p]] = c;
		mk->wait_head[p] = c;
		return;
	}
	if (mk->wprev[c] >= 0)
		mk->wnext[mk->wprev[c]] = mk->wnext[c];
	else
		mk->wait_head[p] = mk->wnext[c];
	if (mk->wnext[c] >= 0)
		mk->wprev[mk->wnext[c]] = mk->wprev[c];
	mk->wprev[c] = -2;
}

/* The chain of pool p with jobs waiting whose GPUs free now (not held
 * for those) hold a job of gpus that ends by the time the first of them
 * starts, the one with the fewest; -1 if none. The job runs ahead of
 * them, on GPUs that would idle until then, and delays none: its
 * instance takes it first (the chain's jobs are in order of start). */
static int ahead_fitting(const struct sim *s, struct making *mk, int p, int gpus, int64_t at, int64_t end)
{
	int best = -1, best_free = 0;

	for (int c = mk->wait_head[p], after; c >= 0; c = after) {
		int f;
		after = mk->wnext[c];
		started_by(s, mk, c, at);
		if (mk->waiting[c] == 0) {
			waits_listed(mk, p, c, 0);
			continue;
		}
		f = mk->free[c] + mk->waiting[c];
		if (f >= gpus && end <= mk->start[cv_of(s)->next_job[mk->started[c]]] && (best < 0 || f < best_free)) {
			best = c;
			best_free = f;
		}
	}
	return best;
}

/* Job k, of pool p, joins a chain or starts one. */
static void chain_job(struct sim *s, struct making *mk, size_t k, int p)
{
	struct clairvoyant_state *cv = cv_of(s);
	const struct offer *o = &s->opts->offers[p / MARKET_COUNT];
	int64_t at = s->trace->jobs[k].submit_ms, start = at, run = (int64_t)ceil((double)s->trace->jobs[k].duration_ms / o->speed), end;
	int gpus = sim_job_gpus(s, (int)k), c, ahead = 0;

	ended_by(s, mk, p, at);
	if ((c = busy_fitting(s, mk, p, gpus)) >= 0) {
		listed(s, mk, p, c, 0);
		cv->next_job[mk->last[c]] = (int)k;
	} else if (cv->wait_ms > 0 && (c = ahead_fitting(s, mk, p, gpus, at, at + run)) >= 0) {
		/* After its last job started, before those waiting. */
		ahead = 1;
		cv->next_job[k] = cv->next_job[mk->started[c]];
		cv->next_job[mk->started[c]] = (int)k;
		mk->started[c] = (int)k;
	} else if (cv->wait_ms > 0 && (c = soonest(s, mk, p, gpus, at + cv->wait_ms, &start)) >= 0) {
		listed(s, mk, p, c, 0);
		cv->next_job[mk->last[c]] = (int)k;
		if (mk->wprev[c] == -2)
			waits_listed(mk, p, c, 1);
		mk->waiting[c] += gpus;
	} else if ((c = mk->top[p]) >= 0 && at - mk->end[c] <= o->boot_ms) {
		mk->top[p] = mk->below[c];
		cv->next_job[mk->last[c]] = (int)k;
	} else {
		/* The latest ended too long ago: the others before it too. */
		mk->top[p] = -1;
		c = cv->nchains++;
		cv->chains[c] = (struct chain){.first = (int)k, .next = (int)k, .retake = -1, .offer = p / MARKET_COUNT,
					       .market = (enum market)(p % MARKET_COUNT), .launch_at = at - o->boot_ms};
		mk->free[c] = o->gpus;
		mk->end[c] = at;
		if (cv->wait_ms > 0) {
			mk->started[c] = (int)k;
			mk->waiting[c] = 0;
			mk->wprev[c] = -2;
		}
	}
	if (cv->wait_ms > 0)
		mk->start[k] = start;
	mk->free[c] -= gpus;
	listed(s, mk, p, c, 1);
	if (!ahead)
		mk->last[c] = (int)k;
	end = start + run;
	mk->end[c] = end > mk->end[c] ? end : mk->end[c];
	heap_push(&mk->running[p], (struct event){end, EV_FINISH, c, (int)k});
}

void clairvoyant_plan(struct sim *s)
{
	struct clairvoyant_state *cv = cv_of(s);
	size_t n = s->trace->n + 1;
	struct making mk = {0};

	cv->next_job = sim_grown(NULL, n, sizeof *cv->next_job);
	cv->chains = sim_grown(NULL, n, sizeof *cv->chains);
	mk.end = sim_grown(NULL, n, sizeof *mk.end);
	mk.last = sim_grown(NULL, n, sizeof *mk.last);
	mk.below = sim_grown(NULL, n, sizeof *mk.below);
	mk.free = sim_grown(NULL, n, sizeof *mk.free);
	mk.prev = sim_grown(NULL, n, sizeof *mk.prev);
	mk.next = sim_grown(NULL, n, sizeof *mk.next);
	if (cv->wait_ms > 0) {
		mk.edge = sim_grown(NULL, n, sizeof *mk.edge);
		mk.walked = sim_grown(NULL, n, sizeof *mk.walked);
		mk.start = sim_grown(NULL, n, sizeof *mk.start);
		mk.started = sim_grown(NULL, n, sizeof *mk.started);
		mk.waiting = sim_grown(NULL, n, sizeof *mk.waiting);
		mk.wprev = sim_grown(NULL, n, sizeof *mk.wprev);
		mk.wnext = sim_grown(NULL, n, sizeof *mk.wnext);
		mk.freed = xcalloc(n, sizeof *mk.freed);
	}
	for (size_t p = 0; p < POOLS; p++) {
		mk.top[p] = -1;
		mk.wait_head[p] = -1;
		for (int f = 0; f <= INSTANCE_GPUS_MAX; f++)
			mk.busy[p][f] = -1;
	}
	for (size_t k = 0; k < s->trace->n; k++) {
		int p = pool_of(s, k);
		cv->next_job[k] = -1;
		if (p >= 0)
			chain_job(s, &mk, k, p);
	}
	free(mk.end);
	free(mk.last);
	free(mk.below);
	free(mk.free);
	free(mk.prev);
	free(mk.next);
	for (size_t p = 0; p < POOLS; p++)
		free(mk.running[p].e);
	free(mk.edge);
	free(mk.walked);
	free(mk.start);
	free(mk.started);
	free(mk.waiting);
	free(mk.wprev);
	free(mk.wnext);
	free(mk.freed);
	/* Made, the chains are known by their index only from now on. */
	qsort(cv->chains, (size_t)cv->nchains, sizeof *cv->chains, by_launch);
}
