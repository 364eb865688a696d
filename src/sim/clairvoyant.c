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
 * no longer than it would run anywhere). Only when none can take it
 * within W does it follow an idle instance or have one of its own, as
 * with no wait. W = 0 is exactly the plain clairvoyant. What it leaves
 * out, for simplicity: delaying a job that starts an instance so that
 * later ones pack with it (test_sim.c says where that would have been
 * cheaper).
 *
 * The plan (chains.c) is made from the whole trace before the replay;
 * the replay carries it out: each chain's instance is launched on time
 * (ready at the start if its boot would begin before it) and takes its
 * chain's jobs in order, and goes when its chain is done; the waits it
 * measures are the plan's. Spot reclaims are not foreseen: a reclaimed
 * chain is launched again at once (or a boot before its next job), and
 * its jobs wait for it. */
#include <stdlib.h>

#include "sim/sim_internal.h"
#include "sim/clairvoyant_internal.h"

struct clairvoyant_params {
	int64_t wait_ms;
};

static const struct clairvoyant_params defaults = {.wait_ms = 0};

static const struct knob knobs[] = {
	{"wait", K_SECONDS, offsetof(struct clairvoyant_params, wait_ms), 0, KNOB_NEVER}, {0}};

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

	cv->wait_ms = ((const struct clairvoyant_params *)s->policy->params)->wait_ms;
	cv->retake_next = sim_grown(NULL, n, sizeof *cv->retake_next);
	cv->relaunch = sim_grown(NULL, n, sizeof *cv->relaunch);
	clairvoyant_plan(s);
	/* Those due before the start are up at the start. */
	clairvoyant_look(s);
}

/* The job instance k takes now: one of its chain's put back by a
 * reclaim, else the next of its chain once queued, if it fits the
 * instance (its free GPUs, or a shared GPU's room: sim_fits); -1 if
 * none. */
static int clairvoyant_take(struct sim *s, int k)
{
	struct chain *ch = &cv_of(s)->chains[cv_of(s)->chain_of[k]];
	int free_gpus = s->inst[k].free_gpus, j;

	/* Those a reclaim put back first: they came before the others. */
	for (int *at = &ch->retake; *at >= 0; at = &cv_of(s)->retake_next[*at]) {
		if (sim_fits(s, k, *at, free_gpus)) {
			j = *at;
			*at = cv_of(s)->retake_next[j];
			return j;
		}
	}
	j = chain_next(s, cv_of(s)->chain_of[k]);
	return j >= 0 && s->jobs[j].queued && sim_fits(s, k, j, free_gpus) ? j : -1;
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
