/* Teams (src/policy/teams.c, the [team.NAME] sections and plan()'s caps):
 * the sharing rule on hand-built teams (quotas bind, borrowing, lending
 * and borrowing limits, weights), the config's checks with their numbers,
 * the default team's rules, plan() launching for a team only within its
 * share, and a property test over random views: no team is allowed more
 * than its quota and its borrowing limit, all teams together no more than
 * max_gpus, and each team with work at least its quota. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "common/rng.h"
#include "harness.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "policy/teams.h"
#include "serve/chargeback.h"
#include "serve/report.h"

static struct plan_team team(const char *name, int64_t quota, int64_t borrow, int64_t lend, double weight)
{
	struct plan_team t;

	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "%s", name);
	t.quota_gpus = quota;
	t.borrowing_limit_gpus = borrow;
	t.lending_limit_gpus = lend;
	t.weight = weight;
	return t;
}

/* allowed_gpus of each team after teams_share(). */
#define EXPECT_ALLOWED(sh, ...)                                                    \
	do {                                                                       \
		int64_t want_[] = {__VA_ARGS__};                                   \
		for (size_t k_ = 0; k_ < sizeof want_ / sizeof want_[0]; k_++) {   \
			if ((sh)[k_].allowed_gpus != want_[k_])                    \
				fail_msg("team %zu: allowed %lld GPUs, expected %lld", k_, \
					 (long long)(sh)[k_].allowed_gpus, (long long)want_[k_]); \
		}                                                                  \
	} while (0)

/* Two teams of quota 2 on 4 GPUs: each gets its quota when both have
 * work; one alone borrows the other's unused quota; the default team,
 * quota 0, gets only what is left. */
static void test_quota_binds_and_borrowing(void **state)
{
	struct plan_team t[] = {team("default", 0, -1, -1, 1), team("a", 2, -1, -1, 1), team("b", 2, -1, -1, 1)};
	struct team_share sh[3];

	(void)state;
	memset(sh, 0, sizeof sh);
	sh[1].queued_gpus = 5;
	sh[2].used_gpus = 4;
	sh[2].queued_gpus = 6;
	teams_share(t, 3, 4, sh);
	EXPECT_ALLOWED(sh, 0, 2, 2);
	assert_int(sh[2].borrowed_gpus, 0);

	/* a has nothing: b borrows a's 2. */
	memset(sh, 0, sizeof sh);
	sh[2].queued_gpus = 10;
	teams_share(t, 3, 4, sh);
	EXPECT_ALLOWED(sh, 0, 0, 4);
	assert_int(sh[2].borrowed_gpus, 2);

	/* a has 1 GPU of work: b borrows the 1 left. */
	sh[1].queued_gpus = 1;
	teams_share(t, 3, 4, sh);
	EXPECT_ALLOWED(sh, 0, 1, 3);

	/* The default team borrows beside b: 1 each of a's unused 2. */
	memset(sh, 0, sizeof sh);
	sh[0].queued_gpus = 3;
	sh[2].queued_gpus = 10;
	teams_share(t, 3, 4, sh);
	EXPECT_ALLOWED(sh, 1, 0, 3);
}

/* Unassigned GPUs (max_gpus beyond all quotas) are borrowable; a lending
 * limit keeps the rest of a team's unused quota out of the pool; a
 * borrowing limit caps a team however much is free. */
static void test_lending_and_borrowing_limits(void **state)
{
	struct plan_team t[] = {team("default", 0, -1, -1, 1), team("a", 4, -1, 1, 1), team("b", 2, 3, -1, 1)};
	struct team_share sh[3];

	(void)state;
	memset(sh, 0, sizeof sh);
	sh[2].queued_gpus = 20;
	/* max 10: 4 unassigned + 1 of a's 4 (lending limit) = 5 free; b may
	 * borrow 3 of them. */
	teams_share(t, 3, 10, sh);
	EXPECT_ALLOWED(sh, 0, 0, 5);
	assert_int(sh[2].borrowed_gpus, 3);

	/* The default team borrows beside b: the 5 free split 3 and 2 (max-min
	 * with equal weights, the odd GPU to the first listed), within b's
	 * limit. */
	sh[0].queued_gpus = 20;
	teams_share(t, 3, 10, sh);
	EXPECT_ALLOWED(sh, 3, 0, 4);

	/* a uses 3 of its 4: it is owed 3, and lends 1 of its 1 unowed. */
	sh[1].used_gpus = 3;
	teams_share(t, 3, 10, sh);
	EXPECT_ALLOWED(sh, 3, 3, 4);

	/* No lending at all: only the 4 unassigned, 2 each. */
	t[1].lending_limit_gpus = 0;
	sh[1].used_gpus = 0;
	teams_share(t, 3, 10, sh);
	EXPECT_ALLOWED(sh, 2, 0, 4);
}

/* Three teams borrow the same free GPUs by weight (max-min): 12 free,
 * weights 1, 2, 3 give 2, 4, 6; one that wants less leaves its part to
 * the others in their ratio; whole GPUs left by the fractions go to the
 * team furthest below its weighted share. */
static void test_weights_share_max_min(void **state)
{
	struct plan_team t[] = {team("default", 0, -1, -1, 1), team("x", 0, -1, -1, 2), team("y", 0, -1, -1, 3)};
	struct team_share sh[3];

	(void)state;
	memset(sh, 0, sizeof sh);
	for (int k = 0; k < 3; k++)
		sh[k].queued_gpus = 100;
	teams_share(t, 3, 12, sh);
	EXPECT_ALLOWED(sh, 2, 4, 6);

	/* y wants 1: the 11 left go 1:2, 3 2/3 and 7 1/3; the whole GPU the
	 * fractions leave goes to the default team, furthest below its
	 * weighted share (3/1 < 7/2): 4 and 7. */
	sh[2].queued_gpus = 1;
	teams_share(t, 3, 12, sh);
	EXPECT_ALLOWED(sh, 4, 7, 1);

	/* Equal weights, an odd GPU: the first listed. */
	t[1].weight = 1;
	t[2].weight = 1;
	sh[2].queued_gpus = 100;
	teams_share(t, 3, 5, sh);
	EXPECT_ALLOWED(sh, 2, 2, 1);
}

/* Random teams and demands: the rule's invariants hold in every one. */
static void test_random_shares_keep_the_invariants(void **state)
{
	uint64_t rng = rng_seed(11);

	(void)state;
	for (int round = 0; round < 20000; round++) {
		struct plan_team t[CONF_MAX_TEAMS + 1];
		struct team_share sh[CONF_MAX_TEAMS + 1];
		int n = 1 + (int)(rng_next(&rng) % 6);
		int64_t max_gpus = (int64_t)(rng_next(&rng) % 40), quotas = 0, total = 0;

		memset(sh, 0, sizeof sh);
		for (int k = 0; k < n; k++) {
			int64_t room = max_gpus - quotas, q = room > 0 ? (int64_t)(rng_next(&rng) % (uint64_t)(room + 1)) : 0;
			t[k] = team("t", k == 0 ? 0 : q, rng_next(&rng) % 3 ? -1 : (int64_t)(rng_next(&rng) % 6),
				    rng_next(&rng) % 3 ? -1 : (int64_t)(rng_next(&rng) % 6), 0.5 + (double)(rng_next(&rng) % 4));
			quotas += t[k].quota_gpus;
			sh[k].used_gpus = (int64_t)(rng_next(&rng) % 8);
			sh[k].queued_gpus = (int64_t)(rng_next(&rng) % 12);
		}
		teams_share(t, n, max_gpus, sh);
		for (int k = 0; k < n; k++) {
			int64_t want = sh[k].used_gpus + sh[k].queued_gpus;
			int64_t owed = want < t[k].quota_gpus ? want : t[k].quota_gpus;
			if (sh[k].allowed_gpus > want)
				fail_msg("round %d team %d: allowed %lld, more than it wants (%lld)", round, k,
					 (long long)sh[k].allowed_gpus, (long long)want);
			if (sh[k].allowed_gpus < owed)
				fail_msg("round %d team %d: allowed %lld, less than its quota owed (%lld)", round, k,
					 (long long)sh[k].allowed_gpus, (long long)owed);
			if (t[k].borrowing_limit_gpus >= 0 &&
			    sh[k].allowed_gpus > t[k].quota_gpus + t[k].borrowing_limit_gpus)
				fail_msg("round %d team %d: allowed %lld, past quota %lld + borrowing limit %lld", round,
					 k, (long long)sh[k].allowed_gpus, (long long)t[k].quota_gpus,
					 (long long)t[k].borrowing_limit_gpus);
			total += sh[k].allowed_gpus;
		}
		if (total > max_gpus)
			fail_msg("round %d: %lld GPUs allowed in all, max_gpus %lld", round, (long long)total,
				 (long long)max_gpus);
	}
}

/* Loads text; 0 or -1 with the error in err. */
static int load(const char *text, struct config *cfg, char *err, size_t errsize)
{
	const char *path = harness_fmt("%s/ebb.conf", harness_tmpdir());

	harness_write_file(path, text);
	err[0] = '\0';
	return config_load(cfg, &cmd_plugins, path, err, errsize);
}

static void test_config_refuses_quotas_past_max_gpus(void **state)
{
	struct config cfg;
	char err[512];

	(void)state;
	assert_int(load("[scaler]\nmax_gpus = 4\n[team.a]\nquota_gpus = 3\n[team.b]\nquota_gpus = 2\n", &cfg, err,
			sizeof err), -1);
	config_free(&cfg);
	assert_contains(err, "add up to 5 (a 3, b 2), more than [scaler] max_gpus = 4");

	assert_int(load("[team.a]\nborrowing_limit_gpus = 1.5\n", &cfg, err, sizeof err), -1);
	config_free(&cfg);
	assert_contains(err, "[team.a] borrowing_limit_gpus: expected a whole number of GPUs, got 1.5");

	assert_int(load("[team.a]\nweight = 0\n", &cfg, err, sizeof err), -1);
	config_free(&cfg);
	assert_contains(err, "weight");
}

/* Without [team.default], the default team has quota 0, no limits and
 * weight 1; with it, its keys; no teams at all: teams are off. */
static void test_default_team_rules(void **state)
{
	struct config cfg;
	struct plan_settings s;
	char err[512];

	(void)state;
	assert_int(load("[scaler]\nmax_gpus = 4\n", &cfg, err, sizeof err), 0);
	plan_settings_from_config(&cfg, &s);
	assert_int(s.nteams, 0);
	config_free(&cfg);

	assert_int(load("[scaler]\nmax_gpus = 4\n[team.a]\nquota_gpus = 2\nlending_limit_gpus = 1\nweight = 2\n", &cfg,
			err, sizeof err), 0);
	plan_settings_from_config(&cfg, &s);
	assert_int(s.nteams, 2);
	assert_string_equal(s.teams[0].name, "default");
	assert_int(s.teams[0].quota_gpus, 0);
	assert_int(s.teams[0].borrowing_limit_gpus, -1);
	assert_int(s.teams[0].lending_limit_gpus, -1);
	assert_string_equal(s.teams[1].name, "a");
	assert_int(s.teams[1].lending_limit_gpus, 1);
	assert_int(s.teams[1].borrowing_limit_gpus, -1);
	assert_int(teams_index(s.teams, s.nteams, "a"), 1);
	assert_int(teams_index(s.teams, s.nteams, "nosuch"), 0);
	assert_int(teams_index(s.teams, s.nteams, ""), 0);
	config_free(&cfg);

	assert_int(load("[scaler]\nmax_gpus = 4\n[team.a]\nquota_gpus = 2\n[team.default]\nquota_gpus = 1\n"
			"borrowing_limit_gpus = 0\n", &cfg, err, sizeof err), 0);
	plan_settings_from_config(&cfg, &s);
	assert_int(s.nteams, 2);
	assert_string_equal(s.teams[0].name, "default");
	assert_int(s.teams[0].quota_gpus, 1);
	assert_int(s.teams[0].borrowing_limit_gpus, 0);
	config_free(&cfg);
}

/* ---- plan() with teams ---- */

struct pfx {
	struct plan_settings set;
	struct offer offers[1];
	struct plan_class classes[4];
	int nclasses;
	struct plan_instance fleet[16];
	int nfleet;
	struct plan_result r;
};

static void pfx_reset(struct pfx *f, int64_t max_gpus)
{
	memset(f, 0, sizeof *f);
	f->set.max_instances = 100;
	f->set.max_gpus = max_gpus;
	f->set.boot_timeout_ms = 600000;
	f->set.max_share_per_offer = 1;
	f->set.checkpoint_every_ms = 600000;
	f->set.nteams = 3;
	f->set.teams[0] = team("default", 0, -1, -1, 1);
	f->set.teams[1] = team("a", 2, -1, -1, 1);
	f->set.teams[2] = team("b", 2, -1, -1, 1);
	snprintf(f->offers[0].name, sizeof f->offers[0].name, "one");
	f->offers[0].gpus = 1;
	f->offers[0].vram_gb = 24;
	f->offers[0].price[MARKET_ONDEMAND] = 1;
	f->offers[0].price[MARKET_SPOT] = -1;
	f->offers[0].speed = 1;
}

/* jobs of 1 GPU and an hour each, queued a minute ago, for team t. */
static void queue_for(struct pfx *f, int t, int64_t jobs)
{
	struct plan_class *c = &f->classes[f->nclasses++];

	memset(c, 0, sizeof *c);
	c->lane = "standard";
	c->gpus = 1;
	c->jobs = jobs;
	c->items = jobs;
	c->work_s = 3600.0 * (double)jobs;
	c->oldest_ms = 1000000 - 60000;
	c->wait_target_ms = 60000;
	c->team = t;
}

static struct plan_instance *running_for(struct pfx *f, int t)
{
	struct plan_instance *i = &f->fleet[f->nfleet];

	memset(i, 0, sizeof *i);
	i->id = ++f->nfleet;
	i->state = INST_BUSY;
	i->running = 1;
	i->launched_ms = 0;
	i->busy_since_ms = 500000;
	i->busy_until_ms = 1000000 + 3600000;
	i->team = t;
	i->team_gpus = 1;
	return i;
}

static int64_t launched(const struct pfx *f)
{
	int64_t n = 0;

	for (int k = 0; k < f->r.n; k++)
		n += f->r.actions[k].kind == ACTION_LAUNCH ? f->r.actions[k].count : 0;
	return n;
}

/* The one offer's idle timeout. */
static const int64_t idle_ms[1] = {600000};

static void plan_it(struct pfx *f)
{
	struct plan_view v = {.now_ms = 1000000, .settings = &f->set, .idle_timeout_ms = idle_ms,
			      .classes = f->classes, .nclasses = f->nclasses, .fleet = f->fleet,
			      .nfleet = f->nfleet, .offers = f->offers, .noffers = 1};

	plan(&v, &f->r);
}

/* b alone floods: it launches up to the whole fleet, borrowing a's quota;
 * once b runs on 4, a's queued work has no room to launch in (max_gpus
 * binds) and b none either: it is at its share. */
static void test_plan_launches_within_the_team_share(void **state)
{
	struct pfx f;

	(void)state;
	pfx_reset(&f, 4);
	queue_for(&f, 2, 10);
	plan_it(&f);
	assert_int(launched(&f), 4);

	/* max_gpus 8: b's borrowing limit of 1 stops it at 3, with max_gpus
	 * to spare, and the reason says so. */
	pfx_reset(&f, 8);
	f.set.teams[2].borrowing_limit_gpus = 1;
	queue_for(&f, 2, 10);
	plan_it(&f);
	assert_int(launched(&f), 3);
	assert_contains(f.r.actions[0].reason, "capped by the team's quota and borrowing");

	/* b runs on 3 (its quota and 1 borrowed) and wants more; a queues 3:
	 * a is owed 2 and borrows 1 of the 4 unassigned (b's limit leaves
	 * them), so 3 launches, all a's: b is at its share. */
	pfx_reset(&f, 8);
	f.set.teams[2].borrowing_limit_gpus = 1;
	for (int k = 0; k < 3; k++)
		running_for(&f, 2);
	queue_for(&f, 2, 7);
	queue_for(&f, 1, 3);
	plan_it(&f);
	assert_int(launched(&f), 3);
}

/* A team that holds what another team is now owed launches nothing
 * more; the other launches what it is owed. */
static void test_plan_team_over_its_share_waits(void **state)
{
	struct pfx f;

	(void)state;
	/* max 6, a lends nothing: b holds its 2 and borrows the 2
	 * unassigned, so 2 launches. */
	pfx_reset(&f, 6);
	f.set.teams[1].lending_limit_gpus = 0;
	for (int k = 0; k < 2; k++)
		running_for(&f, 2);
	queue_for(&f, 2, 5);
	plan_it(&f);
	assert_int(launched(&f), 2);

	/* b runs on 4 and a queues 2: b is at its share (2 + the 2
	 * unassigned), a is owed 2: 2 launches, for a. */
	pfx_reset(&f, 6);
	for (int k = 0; k < 4; k++)
		running_for(&f, 2);
	queue_for(&f, 2, 5);
	plan_it(&f);
	assert_int(launched(&f), 2); /* b borrows a's unused 2 */
	f.nclasses = 0;
	queue_for(&f, 2, 5);
	queue_for(&f, 1, 2);
	plan_it(&f);
	assert_int(launched(&f), 2);
	assert_string_equal(f.r.actions[0].lane, "standard");

	/* The same on 4 GPUs: max_gpus binds; no launch at all (b's
	 * borrowed jobs are what preemption would take back). */
	pfx_reset(&f, 4);
	for (int k = 0; k < 4; k++)
		running_for(&f, 2);
	queue_for(&f, 2, 5);
	queue_for(&f, 1, 2);
	plan_it(&f);
	assert_int(launched(&f), 0);
}

static int preempted(const struct pfx *f, int64_t *ids)
{
	int n = 0;

	for (int k = 0; k < f->r.n; k++) {
		if (f->r.actions[k].kind == ACTION_PREEMPT)
			ids[n++] = f->r.actions[k].instance;
	}
	return n;
}

/* max_gpus binds and b holds a's quota: b's jobs are preempted, lowest
 * priority first, then the most recently started, as many as a is owed;
 * none that has run less than preempt_min_runtime; none when a launch
 * within the hard limits would serve; none for work beyond a's quota. */
static void test_plan_preempts_only_when_a_limit_binds(void **state)
{
	struct pfx f;
	int64_t ids[PLAN_MAX_ACTIONS];

	(void)state;
	pfx_reset(&f, 4);
	f.set.preempt_min_runtime_ms = 60000;
	for (int k = 0; k < 4; k++)
		running_for(&f, 2)->busy_since_ms = 1000000 - 600000 + k * 1000; /* 4 started last */
	f.fleet[0].priority = -1; /* the oldest, but the lowest priority */
	queue_for(&f, 2, 3);
	queue_for(&f, 1, 2);
	plan_it(&f);
	assert_int(launched(&f), 0);
	assert_int(preempted(&f, ids), 2);
	assert_int(ids[0], 1);
	assert_int(ids[1], 4);
	assert_contains(f.r.actions[0].reason, "(team b, priority -1): its team holds 2 GPUs beyond its share");
	assert_contains(f.r.actions[0].reason, "team a is owed 2 GPUs of its quota");

	/* One asked to stop already: one more. */
	f.fleet[3].preempting = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 1);
	assert_int(ids[0], 1);
	f.fleet[3].preempting = 0;

	/* a wants 5: still only its quota's 2 are taken back. */
	f.classes[1].jobs = 5;
	plan_it(&f);
	assert_int(preempted(&f, ids), 2);

	/* a has one GPU already: 1 more. */
	f.classes[1].jobs = 2;
	running_for(&f, 1)->busy_since_ms = 1000000 - 600000;
	f.set.max_gpus = 5;
	plan_it(&f);
	assert_int(preempted(&f, ids), 1);
	f.nfleet--;
	f.set.max_gpus = 4;

	/* Started within preempt_min_runtime: not yet; the plan comes back
	 * when the jobs' runs would allow it... */
	for (int k = 0; k < 4; k++)
		f.fleet[k].busy_since_ms = 1000000 - 30000;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
	assert_int(f.r.next_ms, 1000000 + 30000);

	/* ...and two of them past it: those two. */
	f.fleet[1].busy_since_ms = 1000000 - 90000;
	f.fleet[2].busy_since_ms = 1000000 - 70000;
	plan_it(&f);
	assert_int(preempted(&f, ids), 2);

	/* Room for a launch within max_gpus: a launches, no preemption. */
	for (int k = 0; k < 4; k++)
		f.fleet[k].busy_since_ms = 1000000 - 600000;
	f.set.max_gpus = 5;
	plan_it(&f);
	assert_int(launched(&f), 1);
	assert_int(preempted(&f, ids), 1);
	f.set.max_gpus = 6;
	plan_it(&f);
	assert_int(launched(&f), 2);
	assert_int(preempted(&f, ids), 0);

	/* Without teams, nothing is ever preempted. */
	f.set.nteams = 0;
	f.set.max_gpus = 4;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
}

/* preempt_within: team a runs on its 2 at max_gpus; its queued job of a
 * higher priority preempts a's lowest-priority job (the most recent of
 * them), only when the team has it on; never one of another team, of the
 * same priority, or of a lane served before the queued job's; none when a
 * launch can serve it or a free GPU was given to it. */
static void test_plan_preempts_within_a_team(void **state)
{
	struct pfx f;
	int64_t ids[PLAN_MAX_ACTIONS];

	(void)state;
	pfx_reset(&f, 4);
	f.set.preempt_min_runtime_ms = 60000;
	for (int k = 0; k < 2; k++)
		running_for(&f, 1)->busy_since_ms = 1000000 - 600000 + k * 1000; /* 2 started last */
	for (int k = 0; k < 2; k++)
		running_for(&f, 2)->priority = -5; /* b's, lower still: not a's to take */
	queue_for(&f, 1, 3);
	f.classes[0].top_priority = 5;
	f.classes[0].top_jobs = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0); /* off by default */

	f.set.teams[1].preempt_within = 1;
	plan_it(&f);
	assert_int(launched(&f), 0);
	assert_int(preempted(&f, ids), 1);
	assert_int(ids[0], 2);
	assert_contains(f.r.actions[0].reason, "(team a, priority 0): the team is at its share and its 1 queued"
					       " jobs of priority 5 outrank it (preempt_within)");

	/* Asked to stop already (the worker has not heard it yet): its GPU is
	 * on its way; the next plan takes no other job for it. */
	f.fleet[1].preempting = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
	f.classes[0].top_jobs = 2;
	plan_it(&f);
	assert_int(preempted(&f, ids), 1);
	assert_int(ids[0], 1);
	f.fleet[1].preempting = 0;

	/* Two of them: both of a's jobs, the lower priority first. */
	f.classes[0].top_jobs = 2;
	f.fleet[1].priority = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 2);
	assert_int(ids[0], 1);
	assert_int(ids[1], 2);

	/* Of the same priority as the queued ones: nothing to take. */
	f.classes[0].top_priority = 1;
	f.fleet[0].priority = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
	f.classes[0].top_priority = 5;
	f.fleet[0].priority = f.fleet[1].priority = 0;

	/* The running jobs' lane is served before the queued job's: a
	 * preempted one would be leased back first. */
	f.classes[0].lane_rank = 1;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
	f.classes[0].lane_rank = 0;

	/* Within preempt_min_runtime: not yet. */
	f.fleet[0].busy_since_ms = f.fleet[1].busy_since_ms = 1000000 - 1000;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);
	assert_int(f.r.next_ms, 1000000 + 59000);
	f.fleet[0].busy_since_ms = f.fleet[1].busy_since_ms = 1000000 - 600000;

	/* b's job ended: b lends a its unused GPU, so a may use 3 and holds
	 * 2: not at its share, the free instance serves its top job. */
	f.fleet[2].running = 0;
	f.fleet[2].state = INST_IDLE;
	f.fleet[2].team = 0;
	f.fleet[2].busy_since_ms = 0;
	plan_it(&f);
	assert_int(preempted(&f, ids), 0);

	/* Room within max_gpus and a's share: a launch serves it. */
	f.set.teams[1].quota_gpus = 3;
	f.set.max_gpus = 6;
	f.nfleet = 2;
	plan_it(&f);
	assert_true(launched(&f) >= 1);
	assert_int(preempted(&f, ids), 0);
}

/* Random views of three teams on one-GPU offers: what runs and what plan()
 * launches for each team (one lane per team tells them apart) stays
 * within its quota and borrowing limit unless it already ran beyond them,
 * within max_gpus; a preemption comes only when no launch fits within the
 * hard limits, and only of a team holding more than its share. */
static void test_random_views_keep_the_team_invariants(void **state)
{
	static const char *const lanes[] = {"t0", "t1", "t2"};
	uint64_t rng = rng_seed(7);
	struct pfx f;

	(void)state;
	for (int round = 0; round < 5000; round++) {
		int64_t used[3] = {0}, launched_for[3] = {0}, gpus = 0, quotas = 0;
		int preempts = 0;

		pfx_reset(&f, 2 + (int64_t)(rng_next(&rng) % 10));
		for (int t = 0; t < 3; t++) {
			int64_t room = f.set.max_gpus - quotas;
			f.set.teams[t] = team(lanes[t], t == 0 ? 0 : (int64_t)(rng_next(&rng) % (uint64_t)(room + 1)),
					      rng_next(&rng) % 2 ? -1 : (int64_t)(rng_next(&rng) % 4),
					      rng_next(&rng) % 2 ? -1 : (int64_t)(rng_next(&rng) % 4),
					      1 + (double)(rng_next(&rng) % 3));
			quotas += f.set.teams[t].quota_gpus;
		}
		for (int64_t n = (int64_t)(rng_next(&rng) % (uint64_t)(f.set.max_gpus + 1)); n > 0; n--) {
			struct plan_instance *i = running_for(&f, (int)(rng_next(&rng) % 3));
			used[i->team]++;
			gpus++;
		}
		for (int t = 0; t < 3; t++) {
			int64_t jobs = (int64_t)(rng_next(&rng) % 6);
			if (jobs) {
				queue_for(&f, t, jobs);
				f.classes[f.nclasses - 1].lane = lanes[t];
			}
		}
		plan_it(&f);
		for (int k = 0; k < f.r.n; k++) {
			const struct action *a = &f.r.actions[k];
			if (a->kind == ACTION_LAUNCH)
				launched_for[a->lane[1] - '0'] += a->count;
			preempts += a->kind == ACTION_PREEMPT;
		}
		for (int t = 0; t < 3; t++) {
			const struct plan_team *tm = &f.set.teams[t];
			gpus += launched_for[t];
			if (launched_for[t] > 0 && tm->borrowing_limit_gpus >= 0 &&
			    used[t] + launched_for[t] > tm->quota_gpus + tm->borrowing_limit_gpus)
				fail_msg("round %d: team %d runs %lld and gets %lld launches, past quota %lld +"
					 " borrowing limit %lld", round, t, (long long)used[t], (long long)launched_for[t],
					 (long long)tm->quota_gpus, (long long)tm->borrowing_limit_gpus);
		}
		if (gpus > f.set.max_gpus)
			fail_msg("round %d: %lld GPUs, max_gpus %lld", round, (long long)gpus, (long long)f.set.max_gpus);
		if (preempts && gpus + 1 <= f.set.max_gpus)
			fail_msg("round %d: %d preempted with room for a launch (%lld of %lld GPUs)", round, preempts,
				 (long long)gpus, (long long)f.set.max_gpus);
	}
}

/* A team that spent its monthly budget gets no launch, and says why;
 * the other team launches as before. */
static void test_plan_no_launch_past_the_budget(void **state)
{
	struct pfx f;
	struct plan_view v;

	(void)state;
	pfx_reset(&f, 4);
	queue_for(&f, 1, 2);
	queue_for(&f, 2, 1);
	v = (struct plan_view){.now_ms = 1000000, .settings = &f.set, .idle_timeout_ms = idle_ms,
			       .classes = f.classes, .nclasses = f.nclasses, .offers = f.offers, .noffers = 1,
			       .over_budget = 1u << 1};
	plan(&v, &f.r);
	assert_int(launched(&f), 1);
	v.over_budget = 0;
	plan(&v, &f.r);
	assert_int(launched(&f), 3);
}

/* The chargeback: each line (a team, or shared) pays its busy and its
 * not-busy cost; the lines' totals, in whole cents, add up to the fleet's
 * total to the cent, on random bills, and each is its busy and not-busy
 * cents. */
static void test_chargeback_adds_up_to_the_cent(void **state)
{
	struct charge c[5];
	uint64_t rng = rng_seed(5);

	(void)state;
	memset(c, 0, sizeof c);
	c[0].busy_usd = 30;
	c[0].not_busy_usd = 5;
	c[1].busy_usd = 10;
	c[2].not_busy_usd = 2.5; /* shared: the warm pool's */
	assert_int(chargeback(c, 3, 47.5), 4750);
	assert_int(c[0].total_cents, 3500);
	assert_int(c[0].busy_cents, 3000);
	assert_int(c[0].not_busy_cents, 500);
	assert_int(c[1].total_cents, 1000);
	assert_int(c[2].total_cents, 250);
	assert_int(c[2].busy_cents, 0);

	/* Thirds of a cent: the cent the floors leave goes to the largest
	 * fraction, the first listed on a tie. */
	for (int k = 0; k < 3; k++) {
		c[k].busy_usd = 1.0 / 300;
		c[k].not_busy_usd = 0;
	}
	assert_int(chargeback(c, 3, 0.01), 1);
	assert_int(c[0].total_cents, 1);
	assert_int(c[1].total_cents, 0);
	assert_int(c[2].total_cents, 0);

	/* Float noise on a half cent rounds as the half cent: a total read
	 * back from 13 digits rounds as the one it was written from. */
	assert_int(chargeback_cents(8.655), 866);
	assert_int(chargeback_cents(8.655000000001), 866);
	assert_int(chargeback_cents(8.6549), 865);

	/* A fleet's total below what its lines' floors reach (a cent each,
	 * the total 1.49 cents): the line with the smallest fraction, the
	 * first on a tie, gives its cent back, and the lines add up to it. */
	c[0].busy_usd = 0.01;
	c[1].busy_usd = 0.01;
	c[2].busy_usd = 0;
	assert_int(chargeback(c, 3, 0.0149), 1);
	assert_int(c[0].total_cents, 0);
	assert_int(c[1].total_cents, 1);
	assert_int(c[2].total_cents, 0);

	for (int round = 0; round < 20000; round++) {
		int n = 1 + (int)(rng_next(&rng) % 5);
		double all = 0;
		int64_t sum = 0, fleet;
		for (int k = 0; k < n; k++) {
			c[k].busy_usd = rng_next(&rng) % 3 ? (double)(rng_next(&rng) % 100000) / 991.0 : 0;
			c[k].not_busy_usd = (double)(rng_next(&rng) % 100000) / 997.0;
			all += c[k].busy_usd + c[k].not_busy_usd;
		}
		fleet = chargeback(c, n, all);
		for (int k = 0; k < n; k++) {
			sum += c[k].total_cents;
			if (c[k].busy_cents + c[k].not_busy_cents != c[k].total_cents || c[k].not_busy_cents < 0 ||
			    llabs(c[k].total_cents - llround((c[k].busy_usd + c[k].not_busy_usd) * 100)) > 1)
				fail_msg("round %d line %d: %lld + %lld != %lld", round, k, (long long)c[k].busy_cents,
					 (long long)c[k].not_busy_cents, (long long)c[k].total_cents);
		}
		if (sum != fleet || sum != chargeback_cents(all))
			fail_msg("round %d: lines add up to %lld cents, the fleet's total is %.4f USD", round,
				 (long long)sum, all);
	}
}

/* One closed segment of an instance launched for launch_team ("": none),
 * of a job of job_team (NULL: not a job's run), into the report. */
static void add_segment(struct report *r, int64_t instance, const char *kind, const char *job_team,
			const char *launch_team, double cost)
{
	struct segment g = {.instance = instance, .job = job_team ? instance * 10 : 0, .start_ms = 1000,
			    .end_ms = 2000, .cost = cost};
	struct ledger_row row = {.seg = &g, .offer = "one", .gpus = 1, .team = job_team, .type = job_team ? "t" : NULL,
				 .launch_team = launch_team};

	snprintf(g.kind, sizeof g.kind, "%s", kind);
	assert_int(report_add(r, &row, 0), 0);
}

/* By team, a job's run is its team's and the time no job used is the
 * team's the instance was launched for, or (shared); the chargeback's
 * lines are those rows, to the cent. By type, that time is (idle). */
static void test_report_attributes_idle_to_the_launching_team(void **state)
{
	struct report r;
	json_t *j;

	(void)state;
	for (int by = REPORT_BY_TEAM; by <= REPORT_BY_TYPE; by++) {
		report_init(&r, (enum report_by)by, 0, 10000);
		add_segment(&r, 1, "boot", NULL, "a", 0.10);
		add_segment(&r, 1, "job", "a", "a", 3);
		add_segment(&r, 1, "idle", NULL, "a", 1);
		add_segment(&r, 2, "boot", NULL, "", 0.5); /* the warm pool's */
		add_segment(&r, 2, "job", "b", "", 2);      /* b's run on it is b's */
		add_segment(&r, 3, "idle", NULL, "b", 0.255);
		add_segment(&r, 3, "billing", NULL, "b", 0.001);
		report_finish(&r);
		j = report_to_json(&r);
		if (by == REPORT_BY_TYPE) {
			assert_int(json_array_size(harness_jget(j, "groups")), 2); /* t, (idle) */
			assert_null(harness_jget(j, "chargeback"));
		} else {
			assert_string_equal(JSTR(j, "chargeback.teams.0.team"), "a");
			assert_int(JINT(j, "chargeback.teams.0.busy_cents"), 300);
			assert_int(JINT(j, "chargeback.teams.0.idle_cents"), 110);
			assert_string_equal(JSTR(j, "chargeback.teams.1.team"), "b");
			assert_int(JINT(j, "chargeback.teams.1.busy_cents"), 200);
			/* 25.6 cents: the leftover cent of the floors goes here. */
			assert_int(JINT(j, "chargeback.teams.1.idle_cents"), 26);
			assert_int(JINT(j, "chargeback.shared_cents"), 50);
			assert_int(JINT(j, "chargeback.total_cents"), 686);
		}
		json_decref(j);
		report_free(&r);
	}
}

static void test_report_month(void **state)
{
	int64_t since, until;

	(void)state;
	assert_int(report_month("2026-11", &since, &until), 0);
	assert_int(since, 1793491200000LL); /* 2026-11-01T00:00:00Z */
	assert_int(until, 1796083200000LL); /* 2026-12-01 */
	assert_int(report_month("2026-12", &since, &until), 0);
	assert_int(until, 1798761600000LL); /* 2027-01-01 */
	assert_int(report_month("2026-13", &since, &until), -1);
	assert_int(report_month("2026-1", &since, &until), -1);
	assert_int(report_month("2026-11x", &since, &until), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_binds_and_borrowing),
		cmocka_unit_test(test_lending_and_borrowing_limits),
		cmocka_unit_test(test_weights_share_max_min),
		cmocka_unit_test(test_random_shares_keep_the_invariants),
		cmocka_unit_test(test_config_refuses_quotas_past_max_gpus),
		cmocka_unit_test(test_default_team_rules),
		cmocka_unit_test(test_plan_launches_within_the_team_share),
		cmocka_unit_test(test_plan_team_over_its_share_waits),
		cmocka_unit_test(test_plan_preempts_only_when_a_limit_binds),
		cmocka_unit_test(test_plan_preempts_within_a_team),
		cmocka_unit_test(test_random_views_keep_the_team_invariants),
		cmocka_unit_test(test_plan_no_launch_past_the_budget),
		cmocka_unit_test(test_chargeback_adds_up_to_the_cent),
		cmocka_unit_test(test_report_attributes_idle_to_the_launching_team),
		cmocka_unit_test(test_report_month),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
