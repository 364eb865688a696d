/* The store contract suite, part two: the fleet, the scaler's decisions,
 * the ledger, what was measured of the offers, and the errors. Every
 * store engine must pass it unchanged (store/engine.h): it opens its
 * stores only through the harness (harness_store_open) and calls only
 * store.h, so it runs against whichever engine EBB_TEST_STORE names,
 * sqlite when unset:
 *
 *   make build/tests/test_store_fleet
 *   EBB_TEST_STORE=sqlite EBB_BIN=$PWD/build/ebb EBB_SRC=$PWD build/tests/test_store_fleet
 *
 * Part one, test_store_jobs.c, holds the transactions, the job counts and
 * the jobs. Times are plain numbers: nothing here sleeps. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "harness.h"
#include "store/store.h"

#define begin(h) STORE_OK((h), store_begin((h)->st))
#define commit(h) STORE_OK((h), store_commit((h)->st))

/* ---- what the walks give, a line per row ---- */

static int see_instance(void *arg, const struct instance *i)
{
	return harness_row(arg, "%s %s", i->offer, instance_state_name(i->state));
}

static int see_decision(void *arg, const struct decision *d)
{
	return harness_row(arg, "%lld %s %s x%d i%lld: %s", (long long)d->at_ms, d->kind, d->offer, d->count,
			   (long long)d->instance, d->reason);
}

static int see_stat(void *arg, const struct offer_stat *o)
{
	return harness_row(arg,
			   "%s %s: runs=%lld speed=%g/%lld items=%lld run=%lld boots=%lld/%lld alive=%lld"
			   " reclaims=%lld launches=%lld failures=%lld last_failure=%lld last_launch=%lld"
			   " capacity=%lld/%lld broken=%lld/%lld",
			   o->offer, market_name(o->market), (long long)o->runs, o->speed_sum,
			   (long long)o->speed_n, (long long)o->items, (long long)o->run_ms, (long long)o->boots,
			   (long long)o->boot_ms, (long long)o->alive_ms, (long long)o->reclaims,
			   (long long)o->launches, (long long)o->launch_failures, (long long)o->last_failure_ms,
			   (long long)o->last_launch_ms, (long long)o->capacity_failures, (long long)o->last_capacity_ms,
			   (long long)o->broken_streak, (long long)o->last_broken_ms);
}

static int see_failing(void *arg, const struct offer_stat *o)
{
	return harness_row(arg, "%s %s: failing_since=%lld lost=%lld/%lld", o->offer, market_name(o->market),
			   (long long)o->failing_since_ms, (long long)o->lost, (long long)o->last_lost_ms);
}

static int see_alert(void *arg, const struct alert_row *a)
{
	return harness_row(arg, "%s %s %s %s since=%lld fired=%lld value=%g: %s", a->key, a->name, a->labels,
			   a->firing ? "firing" : "pending", (long long)a->since_ms, (long long)a->fired_ms, a->value,
			   a->summary);
}

static int see_budget(void *arg, const struct team_budget *b)
{
	return harness_row(arg, "%s %g at=%lld", b->team, b->budget, (long long)b->set_ms);
}

/* Ids differ by engine: a row names its instance by the offer. */
static int see_ledger(void *arg, const struct ledger_row *r)
{
	return harness_row(arg, "%s %s %dg %s %lld-%lld $%g job=%s/%s done=%lld lost=%lld%s", r->offer,
			   market_name(r->market), r->gpus, r->seg->kind, (long long)r->seg->start_ms,
			   (long long)r->seg->end_ms, r->seg->cost, r->team ? r->team : "-",
			   r->type ? r->type : "-", (long long)r->items_done, (long long)r->items_lost,
			   r->reclaimed ? " reclaimed" : "");
}

/* ---- rows ---- */

static struct instance instance_of(const char *offer, enum market m, enum instance_state s, int64_t at)
{
	struct instance i = {.market = m, .state = s, .gpus = 1, .launched_ms = at, .updated_ms = at};

	snprintf(i.offer, sizeof i.offer, "%s", offer);
	return i;
}

static struct segment segment_of(int64_t instance, const char *kind, int64_t job, int64_t start_ms)
{
	struct segment g = {.instance = instance, .job = job, .start_ms = start_ms};

	snprintf(g.kind, sizeof g.kind, "%s", kind);
	return g;
}

/* A job of team and type that ran from start to end and is now in state s. */
static struct job ran(const char *team, const char *type, enum job_state s, int64_t start, int64_t end)
{
	struct job j = {.state = s, .gpus = 1, .items = 1, .started_ms = start, .finished_ms = end};

	snprintf(j.lane, sizeof j.lane, "standard");
	snprintf(j.team, sizeof j.team, "%s", team);
	snprintf(j.type, sizeof j.type, "%s", type);
	return j;
}

static double cost_of(struct harness_store *h, int64_t job)
{
	struct job j;
	double cost;

	STORE_OK(h, store_job_get(h->st, job, &j));
	cost = j.cost;
	job_free(&j);
	return cost;
}

/* ---- what the store holds, as text ---- */

/* The live instances (0), or all of them (1: a page of 100, enough). */
static const char *instances(struct harness_store *h, int with_terminated)
{
	struct harness_rows r = {0};

	if (with_terminated)
		STORE_OK(h, store_instance_page(h->st, 0, 100, see_instance, &r));
	else
		STORE_OK(h, store_instance_list(h->st, see_instance, &r));
	return harness_rows_text(&r, 0);
}

static const char *instance_page(struct harness_store *h, int64_t after_id, int limit)
{
	struct harness_rows r = {0};

	STORE_OK(h, store_instance_page(h->st, after_id, limit, see_instance, &r));
	return harness_rows_text(&r, 0);
}

static const char *decision_page(struct harness_store *h, int64_t before_id, int limit)
{
	struct harness_rows r = {0};

	STORE_OK(h, store_decision_list(h->st, before_id, limit, see_decision, &r));
	return harness_rows_text(&r, 0);
}

static const char *decisions(struct harness_store *h, int limit) { return decision_page(h, INT64_MAX, limit); }

static const char *stats(struct harness_store *h)
{
	struct harness_rows r = {0};

	STORE_OK(h, store_offer_stats(h->st, see_stat, &r));
	return harness_rows_text(&r, 1);
}

/* The ledger since since_ms, which a walk a segment id at a time up to
 * the last id gives the same. */
static const char *ledger(struct harness_store *h, int64_t since_ms)
{
	struct harness_rows r = {0}, sliced = {0};
	int64_t last = -1;
	char whole[HARNESS_ROWS_MAX * 200];

	STORE_OK(h, store_ledger(h->st, since_ms, 0, INT64_MAX, see_ledger, &r));
	snprintf(whole, sizeof whole, "%s", harness_rows_text(&r, 1));
	STORE_OK(h, store_segment_last_id(h->st, &last));
	for (int64_t id = 0; id < last; id++)
		STORE_OK(h, store_ledger(h->st, since_ms, id, id + 1, see_ledger, &sliced));
	assert_string_equal(harness_rows_text(&sliced, 1), whole);
	return harness_rows_text(&r, 1);
}

/* ---- transactions ---- */

/* In the open batch: a new instance i booting, with a decision, a
 * segment and the offer's launch; job's cost grows by 0.5. */
static void launch(struct harness_store *h, struct instance *i, int64_t job)
{
	struct decision d = {.at_ms = 5, .kind = "launch", .offer = "a100", .count = 2,
			     .reason = "queued work"};
	struct offer_stat o = {.offer = "a100", .market = MARKET_SPOT, .launches = 1, .last_launch_ms = 5};
	struct segment g;

	*i = instance_of("a100", MARKET_SPOT, INST_BOOTING, 5);
	STORE_OK(h, store_instance_insert(h->st, i));
	g = segment_of(i->id, "boot", 0, 5);
	STORE_OK(h, store_decision_insert(h->st, &d));
	STORE_OK(h, store_segment_open(h->st, &g));
	STORE_OK(h, store_offer_stat_add(h->st, &o));
	STORE_OK(h, store_job_add_cost(h->st, job, 0.5));
}

#define LAUNCHED_STATS                                                                              \
	"a100 spot: runs=0 speed=0/0 items=0 run=0 boots=0/0 alive=0 reclaims=0 launches=1 failures=0" \
	" last_failure=0 last_launch=5 capacity=0/0 broken=0/0"

/* A committed job with no cost yet; its id. */
static int64_t costless_job(struct harness_store *h)
{
	struct job j = ran("t", "train", JOB_LEASED, 1, 0);

	begin(h);
	STORE_OK(h, store_job_insert(h->st, &j));
	commit(h);
	return j.id;
}

static void fleet_commit_is_durable(void **state)
{
	struct harness_store *h = *state;
	int64_t job = costless_job(h);
	struct instance i;

	begin(h);
	launch(h, &i, job);
	commit(h);
	harness_store_reopen(h);
	assert_string_equal(instances(h, 1), "a100 booting");
	assert_string_equal(decisions(h, 10), "5 launch a100 x2 i0: queued work");
	assert_string_equal(ledger(h, 0), "a100 spot 1g boot 5-0 $0 job=-/- done=0 lost=0");
	assert_string_equal(stats(h), LAUNCHED_STATS);
	assert_true(cost_of(h, job) == 0.5);
}

static void fleet_rollback_undoes_the_batch(void **state)
{
	struct harness_store *h = *state;
	int64_t job = costless_job(h);
	struct instance i = instance_of("h100", MARKET_ONDEMAND, INST_IDLE, 1), k;

	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	commit(h);
	begin(h);
	i.state = INST_BUSY;
	STORE_OK(h, store_instance_update(h->st, &i));
	launch(h, &k, job);
	assert_string_equal(instances(h, 1), "h100 busy | a100 booting"); /* its own writes */
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(instances(h, 1), "h100 idle");
	assert_string_equal(decisions(h, 10), "");
	assert_string_equal(ledger(h, 0), "");
	assert_string_equal(stats(h), "");
	assert_true(cost_of(h, job) == 0);
}

/* The second of three requests fails; the first and the third stay. */
static void fleet_savepoint_rollback_undoes_only_its_step(void **state)
{
	struct harness_store *h = *state;
	int64_t job = costless_job(h);
	struct instance i = instance_of("h100", MARKET_ONDEMAND, INST_REQUESTED, 1), k, m;

	begin(h);
	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_release(h->st));
	STORE_OK(h, store_savepoint(h->st));
	i.state = INST_BOOTING;
	STORE_OK(h, store_instance_update(h->st, &i));
	launch(h, &k, job);
	STORE_OK(h, store_rollback_savepoint(h->st));
	STORE_OK(h, store_savepoint(h->st));
	launch(h, &m, job);
	STORE_OK(h, store_release(h->st));
	commit(h);
	harness_store_reopen(h);
	assert_string_equal(instances(h, 1), "h100 requested | a100 booting");
	assert_string_equal(decisions(h, 10), "5 launch a100 x2 i0: queued work");
	assert_string_equal(ledger(h, 0), "a100 spot 1g boot 5-0 $0 job=-/- done=0 lost=0");
	assert_string_equal(stats(h), LAUNCHED_STATS);
	assert_true(cost_of(h, job) == 0.5);
}

/* A job's cost is a write of the job. */
static void changes_grow_with_instance_writes_and_costs(void **state)
{
	struct harness_store *h = *state;
	int64_t job = costless_job(h);
	struct instance i = instance_of("a100", MARKET_SPOT, INST_BOOTING, 5);
	uint64_t was = store_changes(h->st);

#define GREW() (assert_true(store_changes(h->st) > was), was = store_changes(h->st))
	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	GREW();
	STORE_OK(h, store_instance_update(h->st, &i));
	GREW();
	STORE_OK(h, store_job_add_cost(h->st, job, 1.0));
	GREW();
	STORE_OK(h, store_rollback(h->st));
	assert_true(store_changes(h->st) >= was);
#undef GREW
}

/* ---- instances ---- */

static void instance_ids_are_positive_and_increasing(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("x", MARKET_SPOT, INST_IDLE, 1), k = i, m = i;

	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	commit(h);
	harness_store_reopen(h);
	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &m));
	commit(h);
	assert_true(i.id > 0);
	assert_true(i.id < k.id && k.id < m.id);
}

static void assert_same_instance(const struct instance *got, const struct instance *want)
{
#define SAME(field) \
	harness_assert_int((int64_t)got->field, (int64_t)want->field, #field, __FILE__, __LINE__)
	SAME(id), SAME(market), SAME(state), SAME(gpus), SAME(vram_gb), SAME(launched_ms);
	SAME(registered_ms), SAME(idle_since_ms), SAME(terminated_ms), SAME(updated_ms), SAME(job_id);
	SAME(billed_ms), SAME(reclaim_at_ms);
#undef SAME
	assert_string_equal(got->offer, want->offer);
	assert_string_equal(got->gpu_ids, want->gpu_ids);
	assert_string_equal(got->provider_ref, want->provider_ref);
	assert_string_equal(got->reason, want->reason);
	assert_string_equal(got->token, want->token);
	assert_string_equal(got->team, want->team);
	if (got->cost != want->cost)
		fail_msg("cost is %.17g, expected %.17g", got->cost, want->cost);
}

/* Every field, inserted and then updated, at values an engine could get
 * wrong: texts of the longest length, the integer extremes. */
static void instance_round_trips_every_field(void **state)
{
	struct harness_store *h = *state;
	struct instance i = {.market = MARKET_SPOT, .state = INST_BOOTING, .gpus = INT_MAX, .vram_gb = 80,
			     .launched_ms = INT64_MIN, .registered_ms = 2, .idle_since_ms = 3,
			     .terminated_ms = 0, .updated_ms = 4, .job_id = INT64_MAX, .billed_ms = 5,
			     .cost = 0.1 + 0.7, .reclaim_at_ms = 6},
			got;

	memset(i.offer, 'o', CONF_NAME_MAX);
	snprintf(i.gpu_ids, sizeof i.gpu_ids, "0,1,2,3");
	memset(i.provider_ref, 'p', sizeof i.provider_ref - 1);
	memset(i.reason, 'r', sizeof i.reason - 1);
	memset(i.token, 'a', sizeof i.token - 1);
	memset(i.team, 't', CONF_NAME_MAX);
	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	commit(h);
	STORE_OK(h, store_instance_get(h->st, i.id, &got));
	assert_same_instance(&got, &i);

	snprintf(i.offer, sizeof i.offer, "h100");
	i.market = MARKET_ONDEMAND;
	i.state = INST_TERMINATED;
	i.gpus = 2;
	i.vram_gb = INT_MAX;
	i.gpu_ids[0] = '\0';
	snprintf(i.provider_ref, sizeof i.provider_ref, "pid 42");
	i.token[0] = '\0';
	i.launched_ms = 10;
	i.registered_ms = INT64_MAX;
	i.idle_since_ms = 12;
	i.terminated_ms = 13;
	i.updated_ms = 14;
	i.job_id = 0;
	snprintf(i.reason, sizeof i.reason, "reclaimed: \"notice\" ✓");
	i.billed_ms = INT64_MAX;
	i.cost = 12.75;
	i.reclaim_at_ms = INT64_MIN;
	i.team[0] = '\0';
	begin(h);
	STORE_OK(h, store_instance_update(h->st, &i));
	commit(h);
	harness_store_reopen(h);
	STORE_OK(h, store_instance_get(h->st, i.id, &got));
	assert_same_instance(&got, &i);
	assert_int(store_instance_get(h->st, i.id + 1000, &got), STORE_NOT_FOUND);
	/* Writing back one the store does not hold is an error. */
	i.id += 1000;
	begin(h);
	assert_int(store_instance_update(h->st, &i), -1);
	commit(h);
}

/* An instance is found by its worker token, and only by a token it has;
 * what its provider wants back is kept beside it. */
static void instance_by_token_and_provider_data(void **state)
{
	struct harness_store *h = *state;
	struct instance a = {.state = INST_BOOTING}, b = {.state = INST_BOOTING}, got;
	char data[4097], big[4097]; /* what the exec provider keeps: 4 KiB */

	snprintf(a.token, sizeof a.token, "%064d", 1);
	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &a));
	STORE_OK(h, store_instance_insert(h->st, &b)); /* no token */
	commit(h);
	STORE_OK(h, store_instance_by_token(h->st, a.token, &got));
	assert_int(got.id, a.id);
	assert_int(store_instance_by_token(h->st, harness_fmt("%064d", 2), &got), STORE_NOT_FOUND);
	/* The empty token is no instance's, though b has none. */
	assert_int(store_instance_by_token(h->st, "", &got), STORE_NOT_FOUND);

	STORE_OK(h, store_instance_data(h->st, b.id, data, sizeof data));
	assert_string_equal(data, "");
	memset(big, 'd', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	begin(h);
	STORE_OK(h, store_instance_data_set(h->st, a.id, "{\"zone\":\"us-east-1a\"}"));
	STORE_OK(h, store_instance_data_set(h->st, b.id, big));
	assert_int(store_instance_data_set(h->st, b.id + 1000, "{}"), -1);
	commit(h);
	harness_store_reopen(h);
	STORE_OK(h, store_instance_data(h->st, a.id, data, sizeof data));
	assert_string_equal(data, "{\"zone\":\"us-east-1a\"}");
	STORE_OK(h, store_instance_data(h->st, b.id, data, sizeof data));
	assert_string_equal(data, big);
	assert_int(store_instance_data(h->st, b.id + 1000, data, sizeof data), STORE_NOT_FOUND);
	/* Writing the instance back leaves its data alone. */
	begin(h);
	STORE_OK(h, store_instance_update(h->st, &a));
	commit(h);
	STORE_OK(h, store_instance_data(h->st, a.id, data, sizeof data));
	assert_string_equal(data, "{\"zone\":\"us-east-1a\"}");
}

static void instance_list_by_id(void **state)
{
	struct harness_store *h = *state;
	struct instance i[] = {instance_of("a", MARKET_SPOT, INST_BUSY, 4),
			       instance_of("b", MARKET_SPOT, INST_TERMINATED, 3),
			       instance_of("c", MARKET_ONDEMAND, INST_REQUESTED, 2),
			       instance_of("d", MARKET_ONDEMAND, INST_DRAINING, 1)};

	begin(h);
	for (int k = 0; k < 4; k++)
		STORE_OK(h, store_instance_insert(h->st, &i[k]));
	commit(h);
	assert_string_equal(instances(h, 0), "a busy | c requested | d draining");
	assert_string_equal(instances(h, 1), "a busy | b terminated | c requested | d draining");
	/* Pages of all of them: past an id, at most so many. */
	assert_string_equal(instance_page(h, 0, 2), "a busy | b terminated");
	assert_string_equal(instance_page(h, i[1].id, 2), "c requested | d draining");
	assert_string_equal(instance_page(h, i[3].id, 2), "");
	i[0].state = INST_TERMINATED;
	begin(h);
	STORE_OK(h, store_instance_update(h->st, &i[0]));
	commit(h);
	assert_string_equal(instances(h, 0), "c requested | d draining");
}

static void decisions_newest_first(void **state)
{
	struct harness_store *h = *state;

	begin(h);
	for (int k = 1; k <= 4; k++) {
		struct decision d = {.at_ms = 100 * k, .kind = k % 2 ? "launch" : "terminate",
				     .offer = k % 2 ? "a100" : "h100", .count = k, .instance = 10 * k,
				     .reason = harness_fmt("why %d", k)};
		STORE_OK(h, store_decision_insert(h->st, &d));
	}
	commit(h);
	assert_string_equal(decisions(h, 3), "400 terminate h100 x4 i40: why 4 | 300 launch a100 x3 i30: why 3"
					     " | 200 terminate h100 x2 i20: why 2");
	assert_string_equal(decisions(h, 1), "400 terminate h100 x4 i40: why 4");
	/* A page after another: those below the id it ended with (ids 1 to
	 * 4, in a store of its own). */
	assert_string_equal(decision_page(h, 3, 3), "200 terminate h100 x2 i20: why 2 | 100 launch a100 x1 i10: why 1");
	assert_string_equal(decision_page(h, 1, 3), "");
}

/* ---- the ledger and the offers ---- */

/* Jobs side by side on a 4-GPU instance, $8/h (1/450000 USD per ms):
 * each segment costs its GPUs' share, by hand: 1 GPU for 9 s is
 * 9000 / 450000 / 4 = $0.005, 3 GPUs for 6 s 6000 / 450000 * 3 / 4 =
 * $0.01, and one holding all of them (0) the whole price. Both close,
 * one at a time. */
static void segment_close_costs_its_gpus_share(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("a100", MARKET_SPOT, INST_BUSY, 100);
	struct segment g, closed = {0};
	double usd_per_ms = 8.0 / 3600000.0, cost[2] = {0};

	i.gpus = 4;
	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	g = segment_of(i.id, "job", 77, 1000);
	g.gpus = 1;
	STORE_OK(h, store_segment_open(h->st, &g));
	g = segment_of(i.id, "idle", 0, 4000);
	g.gpus = 3;
	STORE_OK(h, store_segment_open(h->st, &g));
	for (int n = 0; n < 2; n++) {
		STORE_OK(h, store_segment_close(h->st, i.id, 10000, usd_per_ms, i.gpus, &closed));
		cost[strcmp(closed.kind, "job") != 0] = closed.cost;
		assert_int(closed.gpus, strcmp(closed.kind, "job") == 0 ? 1 : 3);
	}
	assert_int(store_segment_close(h->st, i.id, 10000, usd_per_ms, i.gpus, &closed), STORE_NOT_FOUND);
	assert_true(fabs(cost[0] - 0.005) < 1e-12);
	assert_true(fabs(cost[1] - 0.01) < 1e-12);
	g = segment_of(i.id, "idle", 0, 10000);
	STORE_OK(h, store_segment_open(h->st, &g));
	STORE_OK(h, store_segment_close(h->st, i.id, 19000, usd_per_ms, i.gpus, &closed));
	assert_true(fabs(closed.cost - 0.02) < 1e-12);
	commit(h);
}


static void segment_close_costs_the_open_one(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("a100", MARKET_SPOT, INST_BUSY, 100), k = i;
	struct segment g, closed = {0};

	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	assert_int(store_segment_close(h->st, i.id, 200, 1.0, 1, &closed), STORE_NOT_FOUND);
	g = segment_of(i.id, "job", 77, 1000);
	STORE_OK(h, store_segment_open(h->st, &g));
	g = segment_of(k.id, "idle", 0, 1200); /* another instance's */
	STORE_OK(h, store_segment_open(h->st, &g));
	STORE_OK(h, store_segment_close(h->st, i.id, 4000, 0.25, 1, &closed));
	assert_int(closed.instance, i.id);
	assert_string_equal(closed.kind, "job");
	assert_int(closed.job, 77);
	assert_int(closed.start_ms, 1000);
	assert_int(closed.end_ms, 4000);
	assert_true(closed.cost == 3000 * 0.25);
	assert_int(store_segment_close(h->st, i.id, 5000, 1.0, 1, &closed), STORE_NOT_FOUND);
	/* A segment opened with its end is closed already (a billing rest). */
	g = segment_of(i.id, "billing", 0, 5000);
	g.end_ms = 6000;
	g.cost = 2.5;
	STORE_OK(h, store_segment_open(h->st, &g));
	assert_int(store_segment_close(h->st, i.id, 7000, 1.0, 1, &closed), STORE_NOT_FOUND);
	commit(h);
	assert_string_equal(ledger(h, 0), "a100 spot 1g billing 5000-6000 $2.5 job=-/- done=0 lost=0"
					  " | a100 spot 1g idle 1200-0 $0 job=-/- done=0 lost=0"
					  " | a100 spot 1g job 1000-4000 $750 job=-/- done=0 lost=0");
}

static void job_add_cost_accumulates(void **state)
{
	struct harness_store *h = *state;
	struct job j = ran("t", "train", JOB_LEASED, 1, 0);

	j.cost = 1.5;
	begin(h);
	STORE_OK(h, store_job_insert(h->st, &j));
	STORE_OK(h, store_job_add_cost(h->st, j.id, 0.25));
	commit(h);
	begin(h);
	STORE_OK(h, store_job_add_cost(h->st, j.id, 2.0));
	commit(h);
	assert_true(cost_of(h, j.id) == 3.75);
}

/* Counts add up per (offer, market); each last_* time is the later one. */
static void offer_stat_add_accumulates(void **state)
{
	struct harness_store *h = *state;
	struct offer_stat a = {.offer = "a100", .market = MARKET_SPOT, .runs = 1, .speed_sum = 0.5,
			       .speed_n = 1, .items = 10, .run_ms = 100, .boots = 1, .boot_ms = 1000,
			       .alive_ms = 5000, .reclaims = 1, .launches = 2, .launch_failures = 1,
			       .last_failure_ms = 900, .last_launch_ms = 100},
			  b = {.offer = "a100", .market = MARKET_SPOT, .runs = 2, .speed_sum = 1.25,
			       .speed_n = 2, .items = 20, .run_ms = 200, .boots = 2, .boot_ms = 3000,
			       .alive_ms = 7000, .reclaims = 3, .launches = 4, .launch_failures = 5,
			       .last_failure_ms = 500, .last_launch_ms = 800},
			  other = {.offer = "a100", .market = MARKET_ONDEMAND, .runs = 1, .last_launch_ms = 1};

	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &a));
	STORE_OK(h, store_offer_stat_add(h->st, &other));
	commit(h);
	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &b));
	commit(h);
	assert_string_equal(stats(h), "a100 on-demand: runs=1 speed=0/0 items=0 run=0 boots=0/0 alive=0"
				      " reclaims=0 launches=0 failures=0 last_failure=0 last_launch=1"
				      " capacity=0/0 broken=0/0"
				      " | a100 spot: runs=3 speed=1.75/3 items=30 run=300 boots=3/4000"
				      " alive=12000 reclaims=4 launches=6 failures=6 last_failure=900"
				      " last_launch=800 capacity=0/0 broken=0/0");
}

/* A run of failing launches keeps the time of its first failure until a
 * launch works; workers lost add up with the latest time. */
static void offer_stat_failing_since_and_lost(void **state)
{
	struct harness_store *h = *state;
	struct offer_stat fail1 = {.offer = "a", .market = MARKET_SPOT, .failing_since_ms = 100},
			  fail2 = {.offer = "a", .market = MARKET_SPOT, .failing_since_ms = 200},
			  ok = {.offer = "a", .market = MARKET_SPOT, .launched_ok = 1},
			  ok_fail = {.offer = "a", .market = MARKET_SPOT, .launched_ok = 1, .failing_since_ms = 400},
			  lost = {.offer = "a", .market = MARKET_ONDEMAND, .lost = 1, .last_lost_ms = 70},
			  lost_before = {.offer = "a", .market = MARKET_ONDEMAND, .lost = 1, .last_lost_ms = 60};
	struct harness_rows r = {0};

	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &fail1));
	STORE_OK(h, store_offer_stat_add(h->st, &fail2));
	STORE_OK(h, store_offer_stat_add(h->st, &lost));
	STORE_OK(h, store_offer_stat_add(h->st, &lost_before));
	commit(h);
	STORE_OK(h, store_offer_stats(h->st, see_failing, &r));
	assert_string_equal(harness_rows_text(&r, 1), "a on-demand: failing_since=0 lost=2/70 | a spot: failing_since=100 lost=0/0");
	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &ok));
	commit(h);
	r = (struct harness_rows){0};
	STORE_OK(h, store_offer_stats(h->st, see_failing, &r));
	assert_contains(harness_rows_text(&r, 1), "a spot: failing_since=0");
	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &fail2));
	STORE_OK(h, store_offer_stat_add(h->st, &ok_fail));
	commit(h);
	r = (struct harness_rows){0};
	STORE_OK(h, store_offer_stats(h->st, see_failing, &r));
	assert_contains(harness_rows_text(&r, 1), "a spot: failing_since=400");
}

/* Failures for want of capacity add up with the latest time; a broken
 * setup's run of failures grows until a launch works, which ends it
 * before its own delta counts. */
static void offer_stat_failure_runs(void **state)
{
	struct harness_store *h = *state;
	struct offer_stat cap = {.offer = "a", .market = MARKET_SPOT, .capacity_failures = 1, .last_capacity_ms = 50},
			  cap2 = {.offer = "a", .market = MARKET_SPOT, .capacity_failures = 1, .last_capacity_ms = 40},
			  broken = {.offer = "a", .market = MARKET_SPOT, .broken_streak = 1, .last_broken_ms = 60},
			  ok = {.offer = "a", .market = MARKET_SPOT, .launched_ok = 1},
			  ok_broken = {.offer = "a", .market = MARKET_SPOT, .launched_ok = 1, .broken_streak = 1,
				       .last_broken_ms = 70};

	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &cap));
	STORE_OK(h, store_offer_stat_add(h->st, &cap2));
	STORE_OK(h, store_offer_stat_add(h->st, &broken));
	STORE_OK(h, store_offer_stat_add(h->st, &broken));
	commit(h);
	assert_contains(stats(h), "capacity=2/50 broken=2/60");
	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &ok));
	commit(h);
	assert_contains(stats(h), "capacity=2/50 broken=0/60");
	begin(h);
	STORE_OK(h, store_offer_stat_add(h->st, &broken));
	STORE_OK(h, store_offer_stat_add(h->st, &ok_broken));
	commit(h);
	assert_contains(stats(h), "capacity=2/50 broken=1/70");
}

/* Segments ended at or after since, and the open ones, with their
 * instance and, for a job's run, the job. */
static void ledger_rows_since(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("a100", MARKET_SPOT, INST_BUSY, 0),
			k = instance_of("h100", MARKET_ONDEMAND, INST_IDLE, 0);
	struct job j = ran("t1", "train", JOB_SUCCEEDED, 100, 300);
	struct segment g[4];

	j.items_done = 30;
	j.items_lost = 4;
	i.gpus = 4;
	i.reclaim_at_ms = 50;
	begin(h);
	STORE_OK(h, store_job_insert(h->st, &j));
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	g[0] = segment_of(i.id, "boot", 0, 0), g[0].end_ms = 99;
	g[1] = segment_of(i.id, "job", j.id, 100), g[1].end_ms = 300, g[1].cost = 2;
	g[2] = segment_of(k.id, "idle", 0, 100), g[2].end_ms = 200;
	g[3] = segment_of(k.id, "idle", 0, 200);
	for (int n = 0; n < 4; n++)
		STORE_OK(h, store_segment_open(h->st, &g[n]));
	commit(h);
	assert_string_equal(ledger(h, 200), "a100 spot 4g job 100-300 $2 job=t1/train done=30 lost=4 reclaimed"
					    " | h100 on-demand 1g idle 100-200 $0 job=-/- done=0 lost=0"
					    " | h100 on-demand 1g idle 200-0 $0 job=-/- done=0 lost=0");
	assert_contains(ledger(h, 0), "a100 spot 4g boot 0-99 $0 job=-/- done=0 lost=0 reclaimed");
}


static int see_sum_offer(void *arg, const struct ledger_sum *g) { return harness_row(arg, "%s", g->offer); }

/* The running sums: each add goes to its day and to all time; the sums
 * of the days from a day on are added up per (offer, market, kind,
 * team); a rolled-back add leaves nothing. */
static void ledger_sums_by_day_and_all_time(void **state)
{
	struct harness_store *h = *state;
	struct ledger_sum a = {.offer = "a100", .market = MARKET_SPOT, .kind = "job", .team = "ml", .ms = 1000,
			       .gpu_ms = 4000, .cost = 0.5, .items = 7},
			  idle = {.offer = "a100", .market = MARKET_SPOT, .kind = "idle", .team = "", .ms = 10,
				  .gpu_ms = 40, .cost = 0.25},
			  od = {.offer = "a100", .market = MARKET_ONDEMAND, .kind = "job", .team = "ml", .ms = 1};

	assert_string_equal(harness_ledger_sums(h, STORE_ALL_TIME), "");
	begin(h);
	STORE_OK(h, store_ledger_add(h->st, 100, &a));
	STORE_OK(h, store_ledger_add(h->st, 101, &a));
	STORE_OK(h, store_ledger_add(h->st, 101, &idle));
	STORE_OK(h, store_ledger_add(h->st, 102, &od));
	commit(h);
	begin(h);
	STORE_OK(h, store_ledger_add(h->st, 102, &a));
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(harness_ledger_sums(h, STORE_ALL_TIME), "a100 on-demand job ml: 1ms 0gpu-ms $0 items=0"
						    " | a100 spot idle -: 10ms 40gpu-ms $0.25 items=0"
						    " | a100 spot job ml: 2000ms 8000gpu-ms $1 items=14");
	assert_string_equal(harness_ledger_sums(h, 101), "a100 on-demand job ml: 1ms 0gpu-ms $0 items=0"
					  " | a100 spot idle -: 10ms 40gpu-ms $0.25 items=0"
					  " | a100 spot job ml: 1000ms 4000gpu-ms $0.5 items=7");
	assert_string_equal(harness_ledger_sums(h, 102), "a100 on-demand job ml: 1ms 0gpu-ms $0 items=0");
	assert_string_equal(harness_ledger_sums(h, 0), harness_ledger_sums(h, STORE_ALL_TIME));
	assert_string_equal(harness_ledger_sums(h, 103), "");
	harness_store_reopen(h);
	assert_string_equal(harness_ledger_sums(h, 101), "a100 on-demand job ml: 1ms 0gpu-ms $0 items=0"
					  " | a100 spot idle -: 10ms 40gpu-ms $0.25 items=0"
					  " | a100 spot job ml: 1000ms 4000gpu-ms $0.5 items=7");
}

/* The open segments alone, with what store_ledger gives of them. */
static void ledger_open_rows(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("a100", MARKET_SPOT, INST_BUSY, 0),
			k = instance_of("h100", MARKET_ONDEMAND, INST_IDLE, 0);
	struct job j = ran("t1", "train", JOB_LEASED, 100, 0);
	struct segment g[3];
	struct harness_rows r = {0};

	begin(h);
	STORE_OK(h, store_job_insert(h->st, &j));
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	g[0] = segment_of(i.id, "boot", 0, 0), g[0].end_ms = 99;
	g[1] = segment_of(i.id, "job", j.id, 100);
	g[2] = segment_of(k.id, "idle", 0, 200);
	for (int n = 0; n < 3; n++)
		STORE_OK(h, store_segment_open(h->st, &g[n]));
	commit(h);
	STORE_OK(h, store_ledger_open(h->st, see_ledger, &r));
	assert_string_equal(harness_rows_text(&r, 1), "a100 spot 1g job 100-0 $0 job=t1/train done=0 lost=0"
						       " | h100 on-demand 1g idle 200-0 $0 job=-/- done=0 lost=0");
}

/* Instance time from launch to termination (or now), and the run time
 * of the jobs that finished (succeeded, failed, dead), of all time: a
 * job taken back to the queue takes its run time with it, a batch rolled
 * back leaves the sum as it was, and a restart counts the same. */
static void usage_of_all_time(void **state)
{
	struct harness_store *h = *state;
	struct instance i[] = {instance_of("live", MARKET_SPOT, INST_IDLE, 5000),
			       instance_of("gone", MARKET_SPOT, INST_TERMINATED, 1000),
			       instance_of("before", MARKET_SPOT, INST_TERMINATED, 500)};
	struct job j[] = {ran("t", "ok", JOB_SUCCEEDED, 1000, 1500), ran("t", "failed", JOB_FAILED, 2000, 2200),
			  ran("t", "dead", JOB_DEAD, 3000, 3030), ran("u", "early", JOB_SUCCEEDED, 100, 900),
			  ran("t", "running", JOB_LEASED, 1000, 0), ran("t", "cancelled", JOB_CANCELLED, 10, 20)};
	int64_t inst_ms = -1, job_ms = -1;

	i[1].terminated_ms = 4000;
	i[2].terminated_ms = 900;
	begin(h);
	for (int k = 0; k < 3; k++)
		STORE_OK(h, store_instance_insert(h->st, &i[k]));
	for (int k = 0; k < 6; k++)
		STORE_OK(h, store_job_insert(h->st, &j[k]));
	commit(h);
	STORE_OK(h, store_usage(h->st, 10000, &inst_ms, &job_ms));
	assert_int(inst_ms, 5000 + 3000 + 400);
	assert_int(job_ms, 500 + 200 + 30 + 800);
	/* The failed one back in the queue, its run time gone with it. */
	begin(h);
	j[1].state = JOB_QUEUED;
	j[1].finished_ms = 0;
	STORE_OK(h, store_job_update(h->st, &j[1]));
	STORE_OK(h, store_usage(h->st, 10000, &inst_ms, &job_ms));
	assert_int(job_ms, 500 + 30 + 800);
	STORE_OK(h, store_rollback(h->st));
	STORE_OK(h, store_usage(h->st, 10000, &inst_ms, &job_ms));
	assert_int(job_ms, 500 + 200 + 30 + 800);
	/* The struct still says what the undone update made it: read again. */
	begin(h);
	STORE_OK(h, store_job_get(h->st, j[1].id, &j[1]));
	j[1].state = JOB_QUEUED;
	j[1].finished_ms = 0;
	STORE_OK(h, store_job_update(h->st, &j[1]));
	commit(h);
	job_free(&j[1]);
	harness_store_reopen(h);
	STORE_OK(h, store_usage(h->st, 10000, &inst_ms, &job_ms));
	assert_int(job_ms, 500 + 30 + 800);
}

/* ---- alerts ---- */

/* Alerts are kept by key: a put replaces, a delete removes, the walk is
 * by key, and they outlive a reopen. */
static void alerts_put_delete_and_walk(void **state)
{
	struct harness_store *h = *state;
	struct harness_rows r = {0};
	struct alert_row a = {.key = "b", .name = "EbbInstanceIdle", .labels = "{\"instance\":\"3\"}",
			      .since_ms = 10, .value = 2.5, .summary = "idle"},
			 b = {.key = "a", .name = "EbbStoreErrors", .labels = "{}", .firing = 1, .since_ms = 5,
			      .fired_ms = 6, .value = 1, .summary = "errors"};

	begin(h);
	STORE_OK(h, store_alert_put(h->st, &a));
	STORE_OK(h, store_alert_put(h->st, &b));
	a.firing = 1;
	a.fired_ms = 20;
	a.summary = "idle longer";
	STORE_OK(h, store_alert_put(h->st, &a));
	commit(h);
	harness_store_reopen(h);
	STORE_OK(h, store_alerts(h->st, see_alert, &r));
	assert_string_equal(harness_rows_text(&r, 0),
			    "a EbbStoreErrors {} firing since=5 fired=6 value=1: errors"
			    " | b EbbInstanceIdle {\"instance\":\"3\"} firing since=10 fired=20 value=2.5: idle longer");
	assert_walk_stops(r, store_alerts(h->st, see_alert, &r));
	begin(h);
	STORE_OK(h, store_alert_delete(h->st, "a"));
	STORE_OK(h, store_alert_delete(h->st, "no such key"));
	commit(h);
	r = (struct harness_rows){0};
	STORE_OK(h, store_alerts(h->st, see_alert, &r));
	assert_contains(harness_rows_text(&r, 0), "b EbbInstanceIdle");
	assert_int(r.n, 1);
}

/* ---- team budgets ---- */

/* A team's budget set at run time is kept by team: a set replaces, the
 * walk is by name, a lifted one (-1) is kept as such, and they outlive a
 * reopen. */
static void team_budgets_set_and_walk(void **state)
{
	struct harness_store *h = *state;
	struct harness_rows r = {0};

	begin(h);
	STORE_OK(h, store_team_budget_set(h->st, &(struct team_budget){.team = "ml", .budget = 500, .set_ms = 1}));
	STORE_OK(h, store_team_budget_set(h->st, &(struct team_budget){.team = "cv", .budget = -1, .set_ms = 2}));
	STORE_OK(h, store_team_budget_set(h->st, &(struct team_budget){.team = "ml", .budget = 0.5, .set_ms = 3}));
	commit(h);
	harness_store_reopen(h);
	STORE_OK(h, store_team_budgets(h->st, see_budget, &r));
	assert_string_equal(harness_rows_text(&r, 0), "cv -1 at=2 | ml 0.5 at=3");
	assert_walk_stops(r, store_team_budgets(h->st, see_budget, &r));
}

/* ---- errors ---- */

/* Every call the engine fails counts, whatever it was; a walk stopped by
 * its callback does not. */
static void errors_count_failed_calls(void **state)
{
	struct harness_store *h = *state;
	struct job ghost = {.id = 1000, .state = JOB_LEASED};
	struct harness_rows r;
	uint64_t was = store_errors(h->st);

	begin(h);
	assert_int(store_job_update(h->st, &ghost), -1);
	assert_int(store_errors(h->st), was + 1);
	STORE_OK(h, store_alert_put(h->st, &(struct alert_row){.key = "k", .name = "n", .labels = "{}", .summary = ""}));
	commit(h);
	assert_walk_stops(r, store_alerts(h->st, see_alert, &r));
	assert_int(store_errors(h->st), was + 1);
}

static void open_names_the_engine(void **state)
{
	struct harness_store *h = *state;
	struct config cfg;
	char err[256] = "";

	assert_string_equal(store_kind(h->st), harness_store_kind());
	config_defaults(&cfg, NULL);
	free(cfg.data_dir);
	free(cfg.store_kind);
	cfg.data_dir = strdup(h->dir);
	cfg.store_kind = strdup("no-such-engine");
	assert_null(store_open(&cfg, err, sizeof err));
	assert_contains(err, "'no-such-engine'");
	config_free(&cfg);
}

/* Every walk of the fleet and the ledger, of two rows or more: a
 * callback's nonzero return stops it and is what it returns. */
static void callback_stops_every_fleet_walk(void **state)
{
	struct harness_store *h = *state;
	struct instance i = instance_of("a", MARKET_SPOT, INST_IDLE, 1),
			k = instance_of("b", MARKET_SPOT, INST_IDLE, 1);
	struct decision d = {.at_ms = 1, .kind = "launch", .offer = "a", .count = 1, .reason = "r"};
	struct offer_stat o = {.offer = "a", .market = MARKET_SPOT}, p = {.offer = "b", .market = MARKET_SPOT};
	struct segment g;
	struct harness_rows r;

	begin(h);
	STORE_OK(h, store_instance_insert(h->st, &i));
	STORE_OK(h, store_instance_insert(h->st, &k));
	g = segment_of(i.id, "idle", 0, 1);
	STORE_OK(h, store_segment_open(h->st, &g));
	g = segment_of(k.id, "idle", 0, 1);
	STORE_OK(h, store_segment_open(h->st, &g));
	STORE_OK(h, store_decision_insert(h->st, &d));
	STORE_OK(h, store_decision_insert(h->st, &d));
	STORE_OK(h, store_offer_stat_add(h->st, &o));
	STORE_OK(h, store_offer_stat_add(h->st, &p));
	commit(h);
	assert_walk_stops(r, store_instance_list(h->st, see_instance, &r));
	assert_walk_stops(r, store_instance_page(h->st, 0, 10, see_instance, &r));
	assert_walk_stops(r, store_decision_list(h->st, INT64_MAX, 10, see_decision, &r));
	assert_walk_stops(r, store_offer_stats(h->st, see_stat, &r));
	assert_walk_stops(r, store_ledger(h->st, 0, 0, INT64_MAX, see_ledger, &r));
	assert_walk_stops(r, store_ledger_open(h->st, see_ledger, &r));
	begin(h);
	STORE_OK(h, store_ledger_add(h->st, 1, &(struct ledger_sum){.offer = "a", .kind = "idle", .team = "", .ms = 1}));
	STORE_OK(h, store_ledger_add(h->st, 1, &(struct ledger_sum){.offer = "b", .kind = "idle", .team = "", .ms = 1}));
	commit(h);
	assert_walk_stops(r, store_ledger_sums(h->st, STORE_ALL_TIME, see_sum_offer, &r));
	assert_walk_stops(r, store_ledger_sums(h->st, 0, see_sum_offer, &r));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, harness_store_setup, harness_store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(fleet_commit_is_durable),
		T(fleet_rollback_undoes_the_batch),
		T(fleet_savepoint_rollback_undoes_only_its_step),
		T(changes_grow_with_instance_writes_and_costs),
		T(instance_ids_are_positive_and_increasing),
		T(instance_round_trips_every_field),
		T(instance_list_by_id),
		T(decisions_newest_first),
		T(segment_close_costs_the_open_one),
		T(segment_close_costs_its_gpus_share),
		T(job_add_cost_accumulates),
		T(offer_stat_add_accumulates),
		T(offer_stat_failure_runs),
		T(offer_stat_failing_since_and_lost),
		T(alerts_put_delete_and_walk),
		T(team_budgets_set_and_walk),
		T(errors_count_failed_calls),
		T(instance_by_token_and_provider_data),
		T(ledger_rows_since),
		T(ledger_sums_by_day_and_all_time),
		T(ledger_open_rows),
		T(usage_of_all_time),
		T(open_names_the_engine),
		T(callback_stops_every_fleet_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
