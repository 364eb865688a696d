/* The replays of a sweep on threads (see tune_internal.h). Each replay is
 * independent: the trace and the options are only read (the simulator
 * keeps no state outside its struct sim), and each result goes into its
 * own slot, so that the sweep's answer is the same whatever the threads. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/mem.h"
#include "sim/tune_internal.h"

struct pool {
	struct tune_space *s;
	struct tune_job *j;
	const size_t *batch;
	size_t n, next, done;
	size_t *finished; /* positions in the batch, in the order their replays ended */
	size_t base;      /* the sweep's replays done before this batch */
	size_t failed; /* the first failing position in the batch; n: none */
	char err[600];
	pthread_mutex_t mu;
	pthread_cond_t changed;
};

double tune_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replays one setting into c: its state and figures. A replay that did
 * not run every job it could place (it stalled, or its limits allowed no
 * launch) is no point on a frontier. */
static void replay(struct tune_cand *c, const struct tune_job *j, char *err, size_t errsize)
{
	struct sim_result r;
	struct policy p;

	if (policy_parse(c->pt.spec, j->config_path, j->o->plugins, &p, err, errsize) != 0) {
		c->state = CAND_FAILED;
		return;
	}
	sim_run(j->trace, &p, j->o, &r);
	policy_free(&p);
	sim_result_free(&r); /* its samples: the figures stay */
	c->pt.cost_usd = r.cost_usd;
	c->pt.wait_p95_s = r.wait_p95_s;
	c->state = r.jobs_done + r.unplaceable < r.jobs ? CAND_PARTIAL : CAND_DONE;
}

/* Takes the next setting of the batch until none is left; the result is
 * copied in under the lock, where the progress reads it. */
static void *worker(void *arg)
{
	struct pool *pl = arg;

	pthread_mutex_lock(&pl->mu);
	while (pl->next < pl->n) {
		size_t k = pl->next++;
		struct tune_cand c = pl->s->cands[pl->batch[k]];
		char err[600];

		pthread_mutex_unlock(&pl->mu);
		replay(&c, pl->j, err, sizeof err);
		pthread_mutex_lock(&pl->mu);
		pl->s->cands[pl->batch[k]] = c;
		pl->finished[pl->done] = k;
		if (c.state == CAND_FAILED && k < pl->failed) {
			pl->failed = k;
			snprintf(pl->err, sizeof pl->err, "%s", err);
		}
		pl->done++;
		pthread_cond_signal(&pl->changed);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* ebb's cheapest point within the wait among those replayed. */
static void best_so_far(struct tune_progress *p, const struct tune_cand *c, double wait_p95_s)
{
	if (c->state == CAND_DONE && strcmp(c->pt.family, "ebb") == 0 && c->pt.wait_p95_s <= wait_p95_s &&
	    (!p->best || c->pt.cost_usd < p->best->cost_usd))
		p->best = &c->pt;
}

/* Called with the lock held: the progress once the replays finished[from..]
 * have ended too. */
static void report(struct pool *pl, size_t from)
{
	struct tune_progress *p = &pl->j->progress;

	for (size_t k = from; k < pl->done && !pl->j->screening; k++)
		best_so_far(p, &pl->s->cands[pl->batch[pl->finished[k]]], pl->j->wait_p95_s);
	p->done = pl->base + pl->done;
	p->elapsed_s = tune_now_s() - pl->j->start_s;
	p->left_s = p->done ? p->elapsed_s / (double)p->done * (double)(p->queued - p->done) : 0;
	if (pl->j->to->progress)
		pl->j->to->progress(p, pl->j->to->arg);
}

int tune_replay(struct tune_space *s, struct tune_job *j, const size_t *batch, size_t n, char *err, size_t errsize)
{
	struct pool pl = {.s = s, .j = j, .batch = batch, .n = n, .failed = n, .base = j->progress.done};
	int threads = j->to->jobs < 1 ? 1 : (size_t)j->to->jobs > n ? (int)n : j->to->jobs;
	pthread_t *tids = xcalloc(threads ? (size_t)threads : 1, sizeof *tids);
	int started = 0;

	pl.finished = xcalloc(n ? n : 1, sizeof *pl.finished);
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.changed, NULL);
	j->progress.queued += n;
	while (started < threads && pthread_create(&tids[started], NULL, worker, &pl) == 0)
		started++;
	if (started == 0) /* no thread to be had: this one does the work */
		worker(&pl);
	pthread_mutex_lock(&pl.mu);
	for (size_t seen = 0; seen < n; ) {
		/* The progress moves on as replays end: report each. */
		while (pl.done == seen)
			pthread_cond_wait(&pl.changed, &pl.mu);
		report(&pl, seen);
		seen = pl.done;
	}
	pthread_mutex_unlock(&pl.mu);
	for (int k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	free(tids);
	free(pl.finished);
	pthread_cond_destroy(&pl.changed);
	pthread_mutex_destroy(&pl.mu);
	if (pl.failed < n) {
		snprintf(err, errsize, "%s", pl.err);
		return -1;
	}
	return 0;
}
