/* The clairvoyant: a reference that knows every future arrival and
 * duration, to show how far an online policy is from perfect foresight.
 * With its defaults no job waits for it: each runs as it arrives, on an
 * instance launched a boot ahead, beside other jobs while the instance's
 * GPUs hold them. An instance is kept idle (all its GPUs free) only until
 * the next job it will run, and only when that job comes before holding
 * it has cost as much as a boot, the price of a new one; else it stops,
 * and another is launched a boot before that job.
 *
 * clairvoyant:wait=W is the same under a wait budget: a job may start up
 * to W seconds after it arrives, so that no job waits longer than W (nor,
 * then, the p95). A heuristic, not an optimum: a job that no instance up
 * holds now runs ahead of the jobs waiting for an instance if it ends
 * before the first of them starts (on GPUs that would idle until then);
 * else it waits, within W, for the instance that can take it soonest,
 * when jobs planned on it end; it then adds no boot and no time with the
 * instance idle (it runs while that instance is up anyway, or after, for
 * no longer than it would run anywhere). Only when none can take it within W does it
 * follow an idle instance or have one of its own, as with no wait. W = 0
 * is exactly the plain clairvoyant. What it leaves out, for simplicity:
 * delaying a job that starts an instance so that later ones pack with
 * it (test_sim.c says where that would have been cheaper).
 *
 * The plan is made from the whole trace before the replay: each job on
 * the offer and market with the least expected cost per unit of its work
 * for its GPUs' share of the instance (plan()'s own price,
 * plan_cost_per_work_s, times its GPUs over the offer's, with the boot
 * left out: an instance runs many jobs); then, offer by offer, jobs in
 * order of arrival into chains, the jobs of one instance: each job (1)
 * beside the jobs of a busy chain whose free GPUs hold it, the one with
 * the fewest (it costs nothing more); with a wait budget, else beside
 * those of a chain with jobs waiting, if it ends before they start; else
 * (2) on the chain whose GPUs free for it the soonest within it, waiting
 * until then;
 * else (3) after the idle chain whose last job ended the latest before it
 * arrived, if that one idled no longer than a boot: the latest end leaves
 * the earlier ones for later jobs, which can wait on them less; else (4)
 * on a chain of its own. A job waiting for a chain holds its GPUs in the
 * plan from when it is placed, so that no later job takes them first:
 * a chain's jobs are kept in the order they start, and start in that
 * order, each when it has arrived and the GPUs are free, which is when
 * the plan says. The replay
 * carries the plan out: each chain's instance is launched on time (ready
 * at the start if its boot would begin before it) and takes its chain's
 * jobs in order, and goes when its chain is done; the waits it measures
 * are the plan's. Spot reclaims are not foreseen: a reclaimed chain is
 * launched again at once (or a boot before its next job), and its jobs
 * wait for it. */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* The run, in reference seconds, its offer is priced over: so long that
 * the boot, shared by a chain's jobs, does not count. */
#define PRICED_OVER_S 1e9

struct clairvoyant_params {
	int64_t wait_ms;
};

static const struct clairvoyant_params defaults = {.wait_ms = 0};

static const struct knob knobs[] = {
	{"wait", K_SECONDS, offsetof(struct clairvoyant_params, wait_ms), 0, KNOB_NEVER}, {0}};

/* Its plan: chains of jobs, each run by
 * one instance of its offer and market, side by side as its GPUs hold
 * them, launched a boot before its first job; and, as it replays, each
 * instance's chain and the chains whose instance was reclaimed, to
 * launch again. */
struct chain {
	int first, next; /* jobs: its first, and the first not started (-1: none) */
	int retake;      /* the first of its jobs a reclaim put back (-1: none) */
	int offer;
	enum market market;
	int64_t launch_at;
};

struct clairvoyant_state {
	int64_t wait_ms; /* the most a job may wait (clairvoyant_params) */
	int *next_job; /* per job: the next of its chain, -1 */
	int *retake_next; /* per job put back: the next of its chain's retake */
	struct chain *chains; /* by launch time */
	int nchains, launched;
	int *chain_of; /* per instance */
	size_t cap_chain_of;
	int *relaunch;
	int nrelaunch;
};

static struct clairvoyant_state *cv_of(const struct sim *s)
{
	return s->policy_state;
}

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
			c = plan_cost_per_work_s(o, (enum market)m, ckpt, PRICED_OVER_S, (double)j->duration_ms / 1000.0) *
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

/* The first job of chain c not started yet, -1 when none is left. Its
 * jobs start in order; those a reclaim put back are in ch->retake. */
static int chain_next(struct sim *s, int c)
{
	struct chain *ch = &cv_of(s)->chains[c];

	while (ch->next >= 0 && s->jobs[ch->next].ran)
		ch->next = cv_of(s)->next_job[ch->next];
	return ch->next;
}

static void launch(struct sim *s, int c)
{
	struct clairvoyant_state *cv = cv_of(s);
	const struct chain *ch = &cv->chains[c];
	int k = sim_launch(s, ch->offer, ch->market, s->now == 0 && ch->launch_at <= 0);

	if ((size_t)k >= cv->cap_chain_of) {
		size_t cap = cv->cap_chain_of ? 2 * cv->cap_chain_of : 64;
		cv->cap_chain_of = cap > (size_t)k ? cap : (size_t)k + 1;
		cv->chain_of = sim_grown(cv->chain_of, cv->cap_chain_of, sizeof *cv->chain_of);
	}
	cv->chain_of[k] = c;
}

static void clairvoyant_look(struct sim *s)
{
	struct clairvoyant_state *cv = cv_of(s);
	int kept = 0;

	while (cv->launched < cv->nchains && cv->chains[cv->launched].launch_at <= s->now)
		launch(s, cv->launched++);
	if (cv->launched < cv->nchains)
		s->next_policy = min_positive(s->next_policy, cv->chains[cv->launched].launch_at);
	/* A reclaimed chain, at once for the jobs it put back, else again a
	 * boot before its next job. */
	for (int r = 0; r < cv->nrelaunch; r++) {
		int c = cv->relaunch[r], j = chain_next(s, c);
		int64_t at = s->now;
		if (cv->chains[c].retake < 0 && j < 0)
			continue;
		if (cv->chains[c].retake < 0)
			at = s->trace->jobs[j].submit_ms - s->opts->offers[cv->chains[c].offer].boot_ms;
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
		int k = s->open[a], c = cv->chain_of[k];
		if (s->inst[k].state == S_IDLE && chain_next(s, c) < 0 && cv->chains[c].retake < 0)
			sim_stop(s, k);
	}
}

/* Its plan, from the whole trace; the chains due at the start are up. */
static void clairvoyant_start(struct sim *s)
{
	struct clairvoyant_state *cv = cv_of(s);
	size_t n = s->trace->n + 1;
	struct making mk = {0};

	cv->wait_ms = ((const struct clairvoyant_params *)s->policy->params)->wait_ms;
	cv->next_job = sim_grown(NULL, n, sizeof *cv->next_job);
	cv->retake_next = sim_grown(NULL, n, sizeof *cv->retake_next);
	cv->chains = sim_grown(NULL, n, sizeof *cv->chains);
	cv->relaunch = sim_grown(NULL, n, sizeof *cv->relaunch);
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
	/* Those due before the start are up at the start. */
	clairvoyant_look(s);
}

/* The job instance k takes now: one of its chain's put back by a
 * reclaim, else the next of its chain once queued, if it fits the
 * instance's free GPUs; -1 if none. */
static int clairvoyant_take(struct sim *s, int k)
{
	struct chain *ch = &cv_of(s)->chains[cv_of(s)->chain_of[k]];
	int free_gpus = s->inst[k].free_gpus, j;

	/* Those a reclaim put back first: they came before the others. */
	for (int *at = &ch->retake; *at >= 0; at = &cv_of(s)->retake_next[*at]) {
		if (sim_job_gpus(s, *at) <= free_gpus) {
			j = *at;
			*at = cv_of(s)->retake_next[j];
			return j;
		}
	}
	j = chain_next(s, cv_of(s)->chain_of[k]);
	return j >= 0 && s->jobs[j].queued && sim_job_gpus(s, j) <= free_gpus ? j : -1;
}

/* Instance k was reclaimed: its chain is launched again. */
static void clairvoyant_reclaim(struct sim *s, int k)
{
	struct chain *ch = &cv_of(s)->chains[cv_of(s)->chain_of[k]];

	/* Newest first, each to the front: the oldest is taken first. */
	for (int j = s->inst[k].newest; j >= 0; j = s->jobs[j].next_on) {
		cv_of(s)->retake_next[j] = ch->retake;
		ch->retake = j;
	}
	cv_of(s)->relaunch[cv_of(s)->nrelaunch++] = cv_of(s)->chain_of[k];
	sim_stop(s, k);
}

static void clairvoyant_free(struct sim *s)
{
	free(cv_of(s)->next_job);
	free(cv_of(s)->retake_next);
	free(cv_of(s)->chains);
	free(cv_of(s)->chain_of);
	free(cv_of(s)->relaunch);
}

static int clairvoyant_check(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
			     size_t errsize)
{
	(void)p;
	return policy_check_no_offer(spec, market_given, offer_given,
				     "the clairvoyant chooses the offer and market of each job", err, errsize);
}

const struct sim_policy sim_policy_clairvoyant = {
	.name = "clairvoyant",
	.knobs = knobs,
	.params_size = sizeof(struct clairvoyant_params),
	.defaults = &defaults,
	.check = clairvoyant_check,
	.any_offer = policy_every_offer,
	.durations = "foresight",
	.state_size = sizeof(struct clairvoyant_state),
	.free = clairvoyant_free,
	.start = clairvoyant_start,
	.look = clairvoyant_look,
	.on_change = sim_now, /* at every change: an instance whose chain is done goes */
	.take = clairvoyant_take,
	.reclaim = clairvoyant_reclaim,
	.reference = 1,
	.at_target = "clairvoyant:wait",
};
