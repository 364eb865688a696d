/* The store contract suite, part one: transactions, the job counts and the
 * jobs. Every store engine must pass it unchanged (store/engine.h), as git
 * runs its test suite once per ref backend: it opens its stores only
 * through the harness (harness_store_open) and calls only store.h, so it
 * runs against whichever engine EBB_TEST_STORE names, sqlite when unset:
 *
 *   make build/tests/test_store_jobs
 *   EBB_TEST_STORE=sqlite EBB_BIN=$PWD/build/ebb EBB_SRC=$PWD build/tests/test_store_jobs
 *
 * Part two, test_store_fleet.c, holds the instances, the decisions, the
 * ledger and the errors. Times are plain numbers handed to the store (an
 * engine never reads a clock), so nothing here sleeps. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "policy/lease_order.h"
#include "store/store.h"

#define begin(h) STORE_OK((h), store_begin((h)->st))
#define commit(h) STORE_OK((h), store_commit((h)->st))

/* ---- what the walks give, a line per row ---- */

/* A job is named by its worker field, which no query looks at; one that
 * does not know the state the store holds for it says so. */
static int see_job(void *arg, const struct job *j)
{
	if (j->stored_state != j->state)
		return harness_row(arg, "%s (stored_state %s)", j->worker, job_state_name(j->stored_state));
	return harness_row(arg, "%s", j->worker);
}

static int see_count(void *arg, const struct job_count *c)
{
	return harness_row(arg, "%s %s %s %s=%lld", job_state_name(c->state), c->lane, c->type, c->team,
			   (long long)c->n);
}

static int see_demand(void *arg, const struct demand_row *r)
{
	return harness_row(arg, "%dx%d %s %s: jobs=%lld items=%lld no_est=%lld est=%lld oldest=%lld",
			   r->gpus, r->min_vram_gb, r->lane, r->type, (long long)r->jobs, (long long)r->items,
			   (long long)r->jobs_without_est, (long long)r->est_s, (long long)r->oldest_ms);
}

static int see_time(void *arg, int64_t ms) { return harness_row(arg, "%lld", (long long)ms); }

static int see_arrival(void *arg, const struct arrival_row *r)
{
	return harness_row(arg, "%lld %dx%d %s %s est=%lld", (long long)r->created_ms, r->gpus,
			   r->min_vram_gb, r->lane, r->type, (long long)r->est_s);
}

static int see_duration(void *arg, const char *type, int64_t run_ms)
{
	return harness_row(arg, "%s %lld", type, (long long)run_ms);
}

/* ---- jobs ---- */

/* A queued job of one GPU named name, submitted at `at`. */
static struct job job_of(const char *name, const char *lane, const char *type, const char *team,
			 int64_t at)
{
	struct job j = {0};

	snprintf(j.worker, sizeof j.worker, "%s", name);
	snprintf(j.lane, sizeof j.lane, "%s", lane);
	snprintf(j.type, sizeof j.type, "%s", type);
	snprintf(j.team, sizeof j.team, "%s", team);
	j.gpus = 1;
	j.items = 1;
	j.max_attempts = 3;
	j.created_ms = j.updated_ms = j.run_at_ms = at;
	return j;
}

static struct job named(const char *name) { return job_of(name, "standard", "default", "t", 1); }

/* Writes j (an insert when it has no id yet) in a batch of its own. */
static int64_t put(struct harness_store *h, struct job *j)
{
	begin(h);
	STORE_OK(h, j->id ? store_job_update(h->st, j) : store_job_insert(h->st, j));
	commit(h);
	return j->id;
}

/* A job named name in state s, with the two times that can make it due. */
static int64_t put_in(struct harness_store *h, const char *name, enum job_state s, int64_t run_at_ms,
		      int64_t lease_expires_ms)
{
	struct job j = named(name);

	j.state = s;
	j.run_at_ms = run_at_ms;
	j.lease_expires_ms = lease_expires_ms;
	return put(h, &j);
}

/* A job of type that ran from start to end and ended in state s. */
static void put_run(struct harness_store *h, const char *type, enum job_state s, int64_t start,
		    int64_t end)
{
	struct job j = job_of("x", "standard", type, "t", 1);

	j.state = s;
	j.started_ms = start;
	j.finished_ms = end;
	put(h, &j);
}

static struct job get(struct harness_store *h, int64_t id)
{
	struct job j;

	STORE_OK(h, store_job_get(h->st, id, &j));
	return j;
}

/* Moves a stored job to state s, as the queue does: read, then write. */
static void move(struct harness_store *h, int64_t id, enum job_state s)
{
	struct job j = get(h, id);

	j.state = s;
	put(h, &j);
	job_free(&j);
}

/* ---- what the store holds, as text ---- */

static const char *list(struct harness_store *h, struct job_filter flt)
{
	struct harness_rows r = {0};

	STORE_OK(h, store_job_list(h->st, &flt, see_job, &r));
	return harness_rows_text(&r, 0);
}

static const char *all_jobs(struct harness_store *h)
{
	return list(h, (struct job_filter){.state = -1, .limit = 1000});
}

/* The counts per key, and store_count_in_state checked against them. */
static const char *counts(struct harness_store *h)
{
	struct harness_rows r = {0};
	int64_t in_state[JOB_NSTATES] = {0};

	STORE_OK(h, store_job_counts(h->st, see_count, &r));
	for (int i = 0; i < r.n; i++) {
		char state[32];
		sscanf(r.line[i], "%31s", state);
		in_state[job_state_parse(state)] += atoll(strrchr(r.line[i], '=') + 1);
	}
	for (int s = 0; s < JOB_NSTATES; s++)
		assert_int(store_count_in_state(h->st, (enum job_state)s), in_state[s]);
	return harness_rows_text(&r, 1);
}

/* The names of the jobs with these ids, sorted. */
static const char *names(struct harness_store *h, const int64_t *ids, int n)
{
	struct harness_rows r = {0};

	for (int i = 0; i < n; i++) {
		struct job j = get(h, ids[i]);
		see_job(&r, &j);
		job_free(&j);
	}
	return harness_rows_text(&r, 1);
}

static const char *next_ready(struct harness_store *h, const struct lease_offer *o)
{
	struct harness_rows r = {0};
	struct job j;
	int rc = store_job_next_ready(h->st, o, &j);

	if (rc == STORE_NOT_FOUND)
		return "none";
	STORE_OK(h, rc);
	see_job(&r, &j);
	job_free(&j);
	return harness_rows_text(&r, 0);
}

/* ---- transactions ---- */

static void commit_is_durable(void **state)
{
	struct harness_store *h = *state;
	struct job a = named("a"), b = named("b");

	begin(h);
	STORE_OK(h, store_job_insert(h->st, &a));
	STORE_OK(h, store_job_insert(h->st, &b));
	b.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &b));
	commit(h);
	harness_store_reopen(h);
	assert_string_equal(all_jobs(h), "a | b");
	assert_string_equal(counts(h), "leased standard default t=1 | queued standard default t=1");
}

static void rollback_undoes_the_batch(void **state)
{
	struct harness_store *h = *state;
	struct job a = named("a"), b = named("b");

	put(h, &a);
	begin(h);
	a.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &a));
	STORE_OK(h, store_job_insert(h->st, &b));
	assert_string_equal(all_jobs(h), "a | b"); /* a batch reads its own writes */
	assert_string_equal(counts(h), "leased standard default t=1 | queued standard default t=1");
	STORE_OK(h, store_rollback(h->st));
	a = get(h, a.id);
	assert_string_equal(job_state_name(a.state), "queued");
	job_free(&a);
	assert_string_equal(all_jobs(h), "a");
	assert_string_equal(counts(h), "queued standard default t=1");
}

/* Three requests in one batch; the second fails and leaves no trace. */
static void savepoint_rollback_undoes_only_its_step(void **state)
{
	struct harness_store *h = *state;
	struct job a = named("a"), b = named("b"), c = named("c");

	begin(h);
	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &a));
	STORE_OK(h, store_release(h->st));

	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &b));
	a.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &a));
	STORE_OK(h, store_rollback_savepoint(h->st));

	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &c));
	STORE_OK(h, store_release(h->st));
	for (int pass = 0; pass < 2; pass++) { /* in the batch, then after a restart */
		assert_string_equal(all_jobs(h), "a | c");
		assert_string_equal(counts(h), "queued standard default t=2");
		if (pass == 0) {
			commit(h);
			harness_store_reopen(h);
		}
	}
}

static void release_keeps_the_step_in_the_batch(void **state)
{
	struct harness_store *h = *state;
	struct job a = named("a"), b = named("b");

	begin(h);
	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &a));
	a.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &a));
	STORE_OK(h, store_release(h->st));
	commit(h);
	harness_store_reopen(h);
	assert_string_equal(all_jobs(h), "a");
	assert_string_equal(counts(h), "leased standard default t=1");

	/* Released is not committed: the batch's rollback takes it too. */
	begin(h);
	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &b));
	STORE_OK(h, store_release(h->st));
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(all_jobs(h), "a");
	assert_string_equal(counts(h), "leased standard default t=1");
}

/* A count per (state, lane, type, team). A batch of enough keys to
 * outgrow any small table rolls back to the counts before it, and a
 * restart counts the same from the stored jobs. */
static void counts_per_key_follow_commit_and_rollback(void **state)
{
	struct harness_store *h = *state;
	struct job a = job_of("a", "express", "train", "t1", 1), b = job_of("b", "express", "train", "t2", 1),
		   c = job_of("c", "batch", "infer", "t1", 1);
	const char *want = "leased express train t1=1 | queued batch infer t1=1 | queued express train t2=1";

	put(h, &a);
	put(h, &b);
	put(h, &c);
	move(h, a.id, JOB_LEASED);
	assert_string_equal(counts(h), want);

	begin(h);
	for (int n = 0; n < 300; n++) {
		struct job j = job_of("x", harness_fmt("lane%d", n % 50), harness_fmt("type%d", n % 7), "t1", 2);
		STORE_OK(h, store_job_insert(h->st, &j));
		if (n % 3 == 0) {
			j.state = n % 2 ? JOB_SUCCEEDED : JOB_DEAD;
			STORE_OK(h, store_job_update(h->st, &j));
		}
	}
	assert_int(store_count_in_state(h->st, JOB_QUEUED), 2 + 200);
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(counts(h), want);
	harness_store_reopen(h);
	assert_string_equal(counts(h), want);
}

/* Committed or not: an undone write has been seen by whoever looked. */
static void changes_grow_with_every_job_write(void **state)
{
	struct harness_store *h = *state;
	struct job j = named("a");
	uint64_t was = store_changes(h->st);

#define GREW() (assert_true(store_changes(h->st) > was), was = store_changes(h->st))
	begin(h);
	STORE_OK(h, store_job_insert(h->st, &j));
	GREW();
	STORE_OK(h, store_job_update(h->st, &j));
	GREW();
	STORE_OK(h, store_rollback(h->st));
	assert_true(store_changes(h->st) >= was);
	begin(h);
	STORE_OK(h, store_savepoint(h->st));
	STORE_OK(h, store_job_insert(h->st, &j));
	GREW();
	STORE_OK(h, store_rollback_savepoint(h->st));
	assert_true(store_changes(h->st) >= was);
	commit(h);
#undef GREW
}

/* ---- one job ---- */

static void ids_are_positive_and_increasing(void **state)
{
	struct harness_store *h = *state;
	struct job a = named("a"), b = named("b"), c = named("c"), d = named("d");

	begin(h);
	STORE_OK(h, store_job_insert(h->st, &a));
	STORE_OK(h, store_job_insert(h->st, &b));
	commit(h);
	put(h, &c);
	harness_store_reopen(h);
	put(h, &d);
	assert_true(a.id > 0);
	assert_true(a.id < b.id && b.id < c.id && c.id < d.id);
}

static void assert_same_string(const char *got, const char *want, const char *field)
{
	if (want && got ? strcmp(got, want) != 0 : want != got)
		fail_msg("%s is %s%s%s, expected %s%s%s", field, got ? "\"" : "", got ? got : "NULL",
			 got ? "\"" : "", want ? "\"" : "", want ? want : "NULL", want ? "\"" : "");
}

static void assert_same_job(const struct job *got, const struct job *want)
{
#define SAME(field) \
	harness_assert_int((int64_t)got->field, (int64_t)want->field, #field, __FILE__, __LINE__)
#define SAME_STR(field) assert_same_string(got->field, want->field, #field)
	SAME(id), SAME(state), SAME(lane_rank), SAME(priority), SAME(gpus), SAME(min_vram_gb);
	SAME(items), SAME(timeout_s), SAME(est_s), SAME(max_attempts), SAME(attempts);
	SAME(run_at_ms), SAME(created_ms), SAME(updated_ms), SAME(finished_ms), SAME(started_ms);
	SAME(idem_hash), SAME(lease_token), SAME(instance), SAME(lease_expires_ms), SAME(lease_ms);
	SAME(items_done), SAME(items_start), SAME(items_lost), SAME(interruptions), SAME(seq);
	SAME_STR(type), SAME_STR(lane), SAME_STR(team), SAME_STR(command), SAME_STR(payload);
	SAME_STR(labels), SAME_STR(idem_key), SAME_STR(worker), SAME_STR(checkpoint), SAME_STR(error);
	SAME_STR(result);
#undef SAME
#undef SAME_STR
	if (got->cost != want->cost)
		fail_msg("cost is %.17g, expected %.17g", got->cost, want->cost);
	/* The front end's share: a job read knows the state the store holds. */
	assert_int(got->stored_state, got->state);
}

/* Every field of a job, at values an engine could get wrong: a name of
 * the longest length, the integer extremes, NULL beside "", quotes and
 * UTF-8 in texts, a cost that is no short decimal. */
static struct job every_field(void)
{
	struct job j = {.state = JOB_DELAYED, .lane_rank = INT_MAX, .priority = INT_MIN, .gpus = 8,
			.min_vram_gb = 80, .items = INT64_MAX, .timeout_s = INT64_MAX - 1, .est_s = 3600,
			.max_attempts = INT_MAX, .attempts = 2, .run_at_ms = INT64_MAX - 2,
			.created_ms = INT64_MIN, .updated_ms = -1, .finished_ms = 0, .started_ms = 3,
			.idem_hash = INT64_MIN + 1, .lease_token = INT64_MAX - 3, .instance = INT64_MAX - 4,
			.lease_expires_ms = 4, .lease_ms = 5, .items_done = 6, .items_start = 7,
			.items_lost = 8, .interruptions = 9, .seq = INT64_MIN + 2, .cost = 0.1 + 0.2};

	memset(j.type, 't', CONF_NAME_MAX);
	snprintf(j.lane, sizeof j.lane, "express");
	snprintf(j.team, sizeof j.team, "équipe");
	snprintf(j.worker, sizeof j.worker, "w-1");
	j.command = strdup("[\"sh\",\"-c\",\"echo 'a' \\\"b\\\" ✓\"]");
	j.payload = strdup("\"\""); /* the JSON text of an empty string */
	j.labels = strdup("[\"a100\",\"nvlink\"]");
	j.idem_key = strdup("key-1");
	j.checkpoint = strdup("");
	return j;
}

static void job_round_trips_every_field(void **state)
{
	struct harness_store *h = *state;
	struct job j = every_field(), got;

	put(h, &j);
	assert_int(j.stored_state, JOB_DELAYED);
	got = get(h, j.id);
	assert_same_job(&got, &j);
	job_free(&got);

	/* Every mutable field changes; a NULL and a "" trade places. */
	j.state = JOB_LEASED;
	j.priority = INT_MAX;
	j.attempts = INT_MAX;
	j.run_at_ms = INT64_MIN;
	j.updated_ms = 11;
	j.finished_ms = 12;
	j.started_ms = INT64_MAX;
	j.lease_token = INT64_MAX;
	j.worker[0] = '\0';
	j.instance = 13;
	j.lease_expires_ms = INT64_MAX;
	j.lease_ms = 14;
	job_set_str(&j.checkpoint, NULL);
	j.items_done = INT64_MAX;
	job_set_str(&j.error, "");
	job_set_str(&j.result, "{\"ok\":true,\"r\":1.5}");
	j.cost = 1234567.000000001;
	j.items_start = 15;
	j.items_lost = INT64_MAX - 5;
	j.interruptions = INT_MAX;
	j.seq = INT64_MAX;
	put(h, &j);
	assert_int(j.stored_state, JOB_LEASED);
	harness_store_reopen(h);
	got = get(h, j.id);
	assert_same_job(&got, &j);
	job_free(&got);
	job_free(&j);
}

static void missing_job_is_not_found(void **state)
{
	struct harness_store *h = *state;
	struct job j = named("a"), out;
	struct lease_offer o = {.gpus = 8, .vram_gb = 80};

	put(h, &j);
	assert_int(store_job_get(h->st, j.id + 1000, &out), STORE_NOT_FOUND);
	assert_int(store_job_get_by_key(h->st, "t", "nope", &out), STORE_NOT_FOUND);
	move(h, j.id, JOB_LEASED);
	assert_int(store_job_next_ready(h->st, &o, &out), STORE_NOT_FOUND);
}

/* Writing back a job the store does not hold is an error, not a write of
 * nothing: the counts would move for a job that is not there. */
static void update_of_a_missing_job_fails(void **state)
{
	struct harness_store *h = *state;
	struct job ghost = named("ghost");
	uint64_t changes;

	begin(h);
	ghost.id = 1000;
	ghost.state = JOB_LEASED;
	changes = store_changes(h->st);
	assert_int(store_job_update(h->st, &ghost), -1);
	assert_true(strstr(store_error(h->st), "1000") != NULL);
	assert_int(store_count_in_state(h->st, JOB_LEASED), 0);
	assert_int(store_count_in_state(h->st, JOB_QUEUED), 0);
	assert_int(store_changes(h->st), changes);
	commit(h);
}

/* A key belongs to a team: the same key in two teams is two jobs. */
static void get_by_team_and_key(void **state)
{
	struct harness_store *h = *state;
	struct job a = job_of("a", "standard", "default", "t1", 1),
		   b = job_of("b", "standard", "default", "t2", 1),
		   c = job_of("c", "standard", "default", "t1", 1), out;

	a.idem_key = strdup("k");
	b.idem_key = strdup("k");
	put(h, &a);
	put(h, &b);
	put(h, &c); /* no key */
	STORE_OK(h, store_job_get_by_key(h->st, "t1", "k", &out));
	assert_string_equal(out.worker, "a");
	assert_int(out.stored_state, JOB_QUEUED);
	job_free(&out);
	STORE_OK(h, store_job_get_by_key(h->st, "t2", "k", &out));
	assert_string_equal(out.worker, "b");
	job_free(&out);
	assert_int(store_job_get_by_key(h->st, "t3", "k", &out), STORE_NOT_FOUND);
	assert_int(store_job_get_by_key(h->st, "t1", "K", &out), STORE_NOT_FOUND);
	job_free(&a);
	job_free(&b);
}

/* ---- leasing order and fit ---- */

/* A queued job by name with the keys of the order. */
static void put_ranked(struct harness_store *h, const char *name, int lane_rank, int priority,
		       int64_t seq)
{
	struct job j = named(name);

	j.lane_rank = lane_rank;
	j.priority = priority;
	j.seq = seq;
	put(h, &j);
}

/* Lane rank, then priority (higher first), then seq, then id; each job
 * taken (leased) in turn, as the queue does. */
static void next_ready_order(void **state)
{
	struct harness_store *h = *state;
	struct lease_offer o = {.gpus = 1};
	const char *want[] = {"rank0", "hi-seq9", "lo-seq1", "lo-seq2-first", "lo-seq2-second", "rank2"};

	put_ranked(h, "rank2", 2, 1000, 0);
	put_ranked(h, "lo-seq2-first", 1, -5, 2);
	put_ranked(h, "lo-seq1", 1, -5, 1);
	put_ranked(h, "hi-seq9", 1, 5, 9);
	put_ranked(h, "lo-seq2-second", 1, -5, 2);
	put_ranked(h, "rank0", 0, -1000, 100);
	put_in(h, "delayed", JOB_DELAYED, 0, 0); /* first in the order, but not queued */
	put_in(h, "leased", JOB_LEASED, 0, 0);
	put_in(h, "done", JOB_SUCCEEDED, 0, 0);
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		struct job j;

		STORE_OK(h, store_job_next_ready(h->st, &o, &j));
		assert_string_equal(j.worker, want[k]);
		assert_int(j.stored_state, JOB_QUEUED);
		j.state = JOB_LEASED;
		put(h, &j);
		job_free(&j);
	}
	assert_string_equal(next_ready(h, &o), "none");
}

/* The lease query orders as policy/lease_order.h does, which the
 * simulator leases by: the same jobs (lanes, priorities, some put back
 * after an interruption, submitted in a scrambled order), leased in turn
 * from the store and sorted by lease_compare(), come out the same. */
static void next_ready_is_the_policy_order(void **state)
{
	struct harness_store *h = *state;
	struct lease_offer o = {.gpus = 1};
	struct lease_key keys[40];
	int n = (int)(sizeof keys / sizeof *keys);

	for (int k = 0; k < n; k++) {
		struct job j = named(harness_fmt("j%d", k));
		j.lane_rank = (k * 7) % 3;
		j.priority = (k * 5) % 4 == 0 ? 100 : (k * 11) % 3 - 1;
		put(h, &j);
		/* Every fourth one interrupted since: serve's seq for it. */
		if (k % 4 == 1) {
			j.seq = lease_seq(j.id, 1);
			put(h, &j);
		}
		keys[k] = (struct lease_key){.lane_rank = j.lane_rank, .priority = j.priority, .seq = j.seq, .id = j.id};
		job_free(&j);
	}
	qsort(keys, (size_t)n, sizeof *keys, lease_compare);
	for (int k = 0; k < n; k++) {
		struct job j;

		STORE_OK(h, store_job_next_ready(h->st, &o, &j));
		if (j.id != keys[k].id)
			fail_msg("lease %d: the store gave job %lld (rank %d, priority %d, seq %lld), the policy's order"
				 " job %lld (rank %d, priority %d, seq %lld)", k, (long long)j.id, j.lane_rank,
				 j.priority, (long long)j.seq, (long long)keys[k].id, keys[k].lane_rank,
				 keys[k].priority, (long long)keys[k].seq);
		j.state = JOB_LEASED;
		put(h, &j);
		job_free(&j);
	}
	assert_string_equal(next_ready(h, &o), "none");
}

/* Each job ahead of the next in the order, so that only its own filter
 * passes it over; the offer grows step by step. */
static void next_ready_filters(void **state)
{
	struct harness_store *h = *state;
	const char *spec[][3] = {
		/* name, type, labels */
		{"4gpus", "train", NULL},
		{"80gb", "train", NULL},
		{"ab", "train", "[\"a\",\"b\"]"},
		{"full", "infer", NULL},
		{"fits", "train", "[\"a\"]"},
	};
	json_t *a = json_pack("[s]", "a"), *cba = json_pack("[sss]", "c", "b", "a");
	const char *full[] = {"infer"};
	struct lease_offer base = {.gpus = 2, .vram_gb = 40}, o;

	for (int k = 0; k < 5; k++) {
		struct job j = job_of(spec[k][0], "standard", spec[k][1], "t", 1);
		j.priority = 10 - k;
		j.gpus = k == 0 ? 4 : 2; /* up to the offer's own */
		j.min_vram_gb = k == 1 ? 80 : 40;
		j.labels = spec[k][2] ? strdup(spec[k][2]) : NULL;
		put(h, &j);
		job_free(&j);
	}
	o = base;
	o.labels = a;
	o.full_types = full;
	o.nfull_types = 1;
	assert_string_equal(next_ready(h, &o), "fits");
	o.labels = cba; /* covers the job's labels, and more */
	assert_string_equal(next_ready(h, &o), "ab");
	o = base; /* no labels: only jobs that ask for none */
	assert_string_equal(next_ready(h, &o), "full");
	o.vram_gb = 80;
	assert_string_equal(next_ready(h, &o), "80gb");
	o.gpus = 4;
	assert_string_equal(next_ready(h, &o), "4gpus");
	o.gpus = 1;
	assert_string_equal(next_ready(h, &o), "none");
	json_decref(a);
	json_decref(cba);
}

/* ---- the lease past a backlog it cannot take ---- */

/* The reference: every queued job, read by a list, and the first in the
 * lease order that the offer fits, by a plain loop over them all. */
struct first_fit {
	const struct lease_offer *o;
	struct lease_key best;
	int found;
};

static int labels_fit(const char *labels, const json_t *offer)
{
	json_t *want = labels ? json_loads(labels, 0, NULL) : NULL;
	size_t i, k;
	json_t *l, *have;
	int fits = 1;

	json_array_foreach(want, i, l) {
		int has = 0;
		json_array_foreach(offer, k, have)
			has |= json_equal(l, have);
		fits &= has;
	}
	json_decref(want);
	return fits;
}

static int fits_offer(const struct lease_offer *o, const struct job *j)
{
	if (j->gpus > o->gpus || j->min_vram_gb > o->vram_gb || !labels_fit(j->labels, o->labels))
		return 0;
	for (int i = 0; i < o->nfull_types; i++)
		if (strcmp(o->full_types[i], j->type) == 0)
			return 0;
	for (int i = 0; i < o->nteams; i++)
		if (strcmp(o->teams[i], j->team) == 0 && o->team_rooms[i] < (j->gpus > 1 ? j->gpus : 1))
			return 0;
	return 1;
}

static int first_fit_row(void *arg, const struct job *j)
{
	struct first_fit *f = arg;
	struct lease_key k = {.lane_rank = j->lane_rank, .priority = j->priority, .seq = j->seq, .id = j->id};

	if (fits_offer(f->o, j) && (!f->found || lease_before(&k, &f->best))) {
		f->best = k;
		f->found = 1;
	}
	return 0;
}

struct first_fit_walk {
	struct first_fit *f;
	int rows;
};

static int first_fit_count(void *arg, const struct job *j)
{
	struct first_fit_walk *w = arg;

	w->rows++;
	return first_fit_row(w->f, j);
}

static int64_t first_fit(struct harness_store *h, const struct lease_offer *o)
{
	struct first_fit f = {o, {0}, 0};
	struct first_fit_walk w = {&f, 0};
	struct job_filter flt = {.state = JOB_QUEUED, .limit = 1000};

	STORE_OK(h, store_job_list(h->st, &flt, first_fit_count, &w));
	assert_true(w.rows < flt.limit); /* one page held them all */
	return f.found ? f.best.id : 0;
}

/* Leases as the queue does and checks the store's choice against the
 * reference: the job's id, or 0 for none. */
static int64_t lease_checked(struct harness_store *h, const struct lease_offer *o, const char *what)
{
	int64_t want = first_fit(h, o);
	struct job j;
	int rc = store_job_next_ready(h->st, o, &j);

	if (rc == STORE_NOT_FOUND) {
		if (want)
			fail_msg("%s: the store found no job, the first that fits is %lld", what, (long long)want);
		return 0;
	}
	STORE_OK(h, rc);
	if (j.id != want)
		fail_msg("%s: the store gave job %lld (%s), the first that fits is %lld", what, (long long)j.id,
			 j.worker, (long long)want);
	j.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &j));
	job_free(&j);
	return want;
}

/* A queued job of the lease order's keys and the offer's filters. */
static void put_class(struct harness_store *h, const char *name, const char *type, const char *team, int gpus,
		      int lane_rank, int priority, const char *labels)
{
	struct job j = job_of(name, lane_rank ? "batch" : "standard", type, team, 1);

	j.gpus = gpus;
	j.lane_rank = lane_rank;
	j.priority = priority;
	j.labels = labels ? strdup(labels) : NULL;
	STORE_OK(h, store_job_insert(h->st, &j));
	job_free(&j);
}

/* Far more jobs than the lease's window ahead of the few the offer fits,
 * each passed over for one reason: the lease still takes them in the
 * lease order, first the one at the head of its class, then one behind
 * a class head whose labels the offer lacks. */
static void next_ready_past_a_backlog_it_cannot_take(void **state)
{
	struct harness_store *h = *state;
	json_t *gpu_a = json_pack("[s]", "a");
	const char *full[] = {"infer"}, *teams[] = {"poor"};
	const int64_t rooms[] = {0};
	struct lease_offer o = {.gpus = 1, .vram_gb = 80, .labels = gpu_a, .full_types = full, .nfull_types = 1,
				.teams = teams, .team_rooms = rooms, .nteams = 1};
	const char *want[] = {"hi-late", "rank0-lo", "a-behind-b", "rank1-hi", "none"};

	begin(h);
	for (int k = 0; k < 3 * 40; k++) {
		const char *why = k % 3 == 0 ? "2gpus" : k % 3 == 1 ? "refused" : "poor";
		put_class(h, harness_fmt("%s%d", why, k), k % 3 == 1 ? "infer" : "train", k % 3 == 2 ? "poor" : "t",
			  k % 3 == 0 ? 2 : 1, 0, 50, NULL);
	}
	/* A class whose head asks for a label the offer lacks, then one it has. */
	put_class(h, "b-head", "train", "t", 1, 0, 5, "[\"b\"]");
	put_class(h, "a-behind-b", "train", "t", 1, 0, 5, "[\"a\"]");
	put_class(h, "rank1-hi", "train", "t", 1, 1, 100, NULL);
	put_class(h, "rank0-lo", "train", "u", 1, 0, 10, NULL);
	put_class(h, "hi-late", "train", "u", 1, 0, 40, NULL);
	commit(h);
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		int64_t id;
		begin(h);
		id = lease_checked(h, &o, want[k]);
		commit(h);
		if (id) {
			struct job j = get(h, id);
			assert_string_equal(j.worker, want[k]);
			job_free(&j);
		} else {
			assert_string_equal("none", want[k]);
		}
	}
	/* An offer that fits no class leases nothing, nor does it read. */
	o.gpus = 0;
	assert_string_equal(next_ready(h, &o), "none");
	assert_int(store_offer_may_fit(h->st, &o), 0);
	o.gpus = 2;
	assert_int(store_offer_may_fit(h->st, &o), 1);
	json_decref(gpu_a);
}

/* Many random jobs and offers, leased several to a batch: each lease is
 * the first queued job in the lease order that the offer fits, as a
 * plain loop over every queued job finds it. */
static void next_ready_is_the_first_that_fits(void **state)
{
	struct harness_store *h = *state;
	const char *types[] = {"train", "infer", "embed"}, *teams[] = {"t", "u", "v"};
	const char *labels[] = {NULL, "[\"a\"]", "[\"b\"]", "[\"a\",\"b\"]"};
	json_t *offer_labels[] = {NULL, json_pack("[s]", "a"), json_pack("[ss]", "b", "a")};
	unsigned seed = 26;
	int leased = 0;

	begin(h);
	for (int k = 0; k < 600; k++) {
		/* Mostly big jobs ahead, so that the window rarely holds one that fits. */
		int big = rand_r(&seed) % 5 != 0;
		struct job j = job_of(harness_fmt("r%d", k), "standard", types[rand_r(&seed) % 3],
				      teams[rand_r(&seed) % 3], 1);
		j.gpus = big ? 4 + rand_r(&seed) % 4 : rand_r(&seed) % 3;
		j.min_vram_gb = (rand_r(&seed) % 3) * 40;
		j.lane_rank = rand_r(&seed) % 3;
		j.priority = big ? 100 : rand_r(&seed) % 3 - 1;
		j.seq = rand_r(&seed) % 50;
		const char *l = labels[rand_r(&seed) % 4];
		j.labels = l ? strdup(l) : NULL;
		STORE_OK(h, store_job_insert(h->st, &j));
		job_free(&j);
	}
	commit(h);
	for (int b = 0; b < 60; b++) {
		begin(h);
		for (int k = 0; k < 3; k++) {
			const char *full[1] = {types[rand_r(&seed) % 3]};
			const char *room_teams[1] = {teams[rand_r(&seed) % 3]};
			const int64_t room[1] = {rand_r(&seed) % 3};
			struct lease_offer o = {.gpus = 1 + rand_r(&seed) % 3, .vram_gb = (rand_r(&seed) % 3) * 40,
						.labels = offer_labels[rand_r(&seed) % 3]};
			if (rand_r(&seed) % 2) {
				o.full_types = full;
				o.nfull_types = 1;
			}
			if (rand_r(&seed) % 2) {
				o.teams = room_teams;
				o.team_rooms = room;
				o.nteams = 1;
			}
			leased += lease_checked(h, &o, harness_fmt("batch %d lease %d", b, k)) != 0;
		}
		commit(h);
	}
	assert_true(leased > 20); /* the offers did lease, past the big jobs */
	for (int k = 0; k < 3; k++)
		json_decref(offer_labels[k]);
}

/* ---- lists and the queue's timers ---- */

static void job_list_filters_and_pages(void **state)
{
	struct harness_store *h = *state;
	struct job j[] = {job_of("a", "express", "train", "t1", 1), job_of("b", "batch", "train", "t2", 1),
			  job_of("c", "express", "infer", "t2", 1), job_of("d", "batch", "infer", "t1", 1),
			  job_of("e", "express", "train", "t1", 1)};
	struct job_filter all = {.state = -1, .limit = 100}, flt;

	for (int k = 0; k < 5; k++)
		put(h, &j[k]);
	move(h, j[1].id, JOB_LEASED);
	move(h, j[4].id, JOB_LEASED);
	assert_string_equal(list(h, all), "a | b | c | d | e");
	flt = all, flt.state = JOB_LEASED;
	assert_string_equal(list(h, flt), "b | e");
	flt = all, flt.lane = "express";
	assert_string_equal(list(h, flt), "a | c | e");
	flt = all, flt.team = "t2";
	assert_string_equal(list(h, flt), "b | c");
	flt = all, flt.type = "infer";
	assert_string_equal(list(h, flt), "c | d");
	flt = all, flt.state = JOB_QUEUED, flt.lane = "express", flt.type = "train", flt.team = "t1";
	assert_string_equal(list(h, flt), "a");
	flt = all, flt.after_id = j[2].id;
	assert_string_equal(list(h, flt), "d | e");

	/* Pages of two, each after the last id of the one before. */
	flt = all, flt.limit = 2;
	assert_string_equal(list(h, flt), "a | b");
	flt.after_id = j[1].id;
	assert_string_equal(list(h, flt), "c | d");
	flt.after_id = j[3].id;
	assert_string_equal(list(h, flt), "e");
}

/* Delayed jobs due at their run_at, leases expired at their expiry, both
 * at now inclusive; no other state is ever due. */
/* The jobs leased on one instance, smallest id first, with the GPUs each
 * holds (what it asks, at least one): not those leased elsewhere or by a
 * hand-started worker (instance 0), nor those no longer leased there. */
static void jobs_leased_on_an_instance(void **state)
{
	struct harness_store *h = *state;
	static const struct {
		const char *name;
		enum job_state s;
		int64_t instance;
	} rows[] = {{"a", JOB_LEASED, 7}, {"b", JOB_LEASED, 8}, {"c", JOB_LEASED, 0}, {"d", JOB_SUCCEEDED, 7},
		    {"e", JOB_LEASED, 7}, {"f", JOB_QUEUED, 7}};
	struct job_on on[8];
	int64_t ids[8];
	int n = -1;

	for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
		struct job j = named(rows[k].name);
		j.state = rows[k].s;
		j.instance = rows[k].instance;
		j.gpus = (int)k; /* a asks 0 GPUs: it holds 1 */
		put(h, &j);
	}
	STORE_OK(h, store_job_leased_on(h->st, 7, on, 8, &n));
	assert_int(n, 2);
	assert_true(on[0].id < on[1].id);
	assert_int(on[0].gpus, 1);
	assert_int(on[1].gpus, 4);
	ids[0] = on[0].id;
	ids[1] = on[1].id;
	assert_string_equal(names(h, ids, n), "a | e");
	STORE_OK(h, store_job_leased_on(h->st, 7, on, 1, &n)); /* up to max */
	assert_int(n, 1);
	assert_int(on[0].id, ids[0]);
	STORE_OK(h, store_job_leased_on(h->st, 9, on, 8, &n));
	assert_int(n, 0);
}

static void job_due_at_now(void **state)
{
	struct harness_store *h = *state;
	int64_t ids[8];
	int n = -1;

	put_in(h, "d100", JOB_DELAYED, 100, 0);
	put_in(h, "d200", JOB_DELAYED, 200, 0);
	put_in(h, "d201", JOB_DELAYED, 201, 0);
	put_in(h, "l150", JOB_LEASED, 0, 150);
	put_in(h, "l400", JOB_LEASED, 0, 400);
	put_in(h, "queued", JOB_QUEUED, 50, 50);
	put_in(h, "done", JOB_SUCCEEDED, 50, 50);
	put_in(h, "dead", JOB_DEAD, 50, 50);
	STORE_OK(h, store_job_due(h->st, 99, ids, 8, &n));
	assert_int(n, 0);
	STORE_OK(h, store_job_due(h->st, 200, ids, 8, &n));
	assert_int(n, 3);
	assert_string_equal(names(h, ids, n), "d100 | d200 | l150");
	STORE_OK(h, store_job_due(h->st, 1000, ids, 2, &n)); /* up to max */
	assert_int(n, 2);
	assert_true(ids[0] != ids[1]);
	assert_contains("d100 d200 d201 l150 l400", names(h, ids, 1));
	assert_contains("d100 d200 d201 l150 l400", names(h, ids + 1, 1));
}

static void next_deadline_of_delays_and_leases(void **state)
{
	struct harness_store *h = *state;
	int64_t at = -1, lease;

	STORE_OK(h, store_next_deadline(h->st, &at));
	assert_int(at, 0);
	put_in(h, "queued", JOB_QUEUED, 10, 10);
	put_in(h, "done", JOB_SUCCEEDED, 10, 10);
	STORE_OK(h, store_next_deadline(h->st, &at));
	assert_int(at, 0);
	put_in(h, "d300", JOB_DELAYED, 300, 0);
	lease = put_in(h, "l150", JOB_LEASED, 0, 150);
	STORE_OK(h, store_next_deadline(h->st, &at));
	assert_int(at, 150);
	move(h, lease, JOB_SUCCEEDED);
	STORE_OK(h, store_next_deadline(h->st, &at));
	assert_int(at, 300);
}

/* ---- what the scaler reads ---- */

static void demand_groups_queued_work(void **state)
{
	struct harness_store *h = *state;
	struct {
		const char *lane, *type;
		int gpus, vram;
		int64_t items, est_s, created_ms;
		enum job_state state;
	} spec[] = {
		{"standard", "train", 1, 0, 10, 60, 500, JOB_QUEUED},
		{"standard", "train", 1, 0, 5, 0, 300, JOB_QUEUED},
		{"standard", "train", 1, 0, 7, 30, 400, JOB_QUEUED},
		{"standard", "train", 1, 40, 1, 0, 100, JOB_QUEUED},
		{"standard", "train", 2, 0, 1, 0, 100, JOB_QUEUED},
		{"batch", "train", 1, 0, 1, 0, 100, JOB_QUEUED},
		{"standard", "infer", 1, 0, 1, 0, 100, JOB_QUEUED},
		{"standard", "train", 1, 0, 1000, 1000, 1, JOB_DELAYED},
		{"standard", "train", 1, 0, 1000, 1000, 1, JOB_LEASED},
	};
	struct harness_rows r = {0};

	for (size_t k = 0; k < sizeof spec / sizeof *spec; k++) {
		struct job j = job_of("x", spec[k].lane, spec[k].type, "t", spec[k].created_ms);
		j.gpus = spec[k].gpus;
		j.min_vram_gb = spec[k].vram;
		j.items = spec[k].items;
		j.est_s = spec[k].est_s;
		j.state = spec[k].state;
		put(h, &j);
	}
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1),
			    "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=100"
			    " | 1x0 standard infer: jobs=1 items=1 no_est=1 est=0 oldest=100"
			    " | 1x0 standard train: jobs=3 items=22 no_est=1 est=90 oldest=300"
			    " | 1x40 standard train: jobs=1 items=1 no_est=1 est=0 oldest=100"
			    " | 2x0 standard train: jobs=1 items=1 no_est=1 est=0 oldest=100");
}

static int see_diff(void *arg, const struct job_count *kept, const struct job_count *counted)
{
	return harness_row(arg, "%s %s: kept %lld counted %lld", job_state_name(kept->state), kept->lane,
			   (long long)kept->n, (long long)counted->n);
}

/* The oldest of a class as its jobs come and go: kept while younger ones
 * leave, found again (a seek) when the oldest leaves, and back when a
 * batch that leased it rolls back; the tallies equal a recount. */
static void demand_follows_the_oldest_and_agrees_with_a_recount(void **state)
{
	struct harness_store *h = *state;
	struct job a = job_of("a", "standard", "train", "t", 100), b = job_of("b", "standard", "train", "t", 200),
		   c = job_of("c", "standard", "train", "t", 300), d = job_of("d", "batch", "train", "t", 50);
	struct harness_rows r = {0};
	int64_t keys = -1;

	put(h, &a);
	put(h, &b);
	put(h, &c);
	put(h, &d);
	r.n = 0;
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1), "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=50"
						       " | 1x0 standard train: jobs=3 items=3 no_est=3 est=0 oldest=100");
	move(h, c.id, JOB_LEASED); /* a younger one leaves: the oldest stays */
	move(h, a.id, JOB_LEASED); /* the oldest leaves */
	r.n = 0;
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1), "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=50"
						       " | 1x0 standard train: jobs=1 items=1 no_est=1 est=0 oldest=200");
	begin(h);
	b = get(h, b.id);
	b.state = JOB_LEASED;
	STORE_OK(h, store_job_update(h->st, &b));
	r.n = 0;
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1), "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=50");
	STORE_OK(h, store_rollback(h->st));
	job_free(&b);
	r.n = 0;
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1), "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=50"
						       " | 1x0 standard train: jobs=1 items=1 no_est=1 est=0 oldest=200");
	begin(h);
	r.n = 0;
	STORE_OK(h, store_check(h->st, see_diff, &r, &keys));
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(harness_rows_text(&r, 1), "");
	assert_int(keys, 3); /* queued standard, queued batch, leased standard */
	harness_store_reopen(h);
	begin(h);
	r.n = 0;
	STORE_OK(h, store_check(h->st, see_diff, &r, &keys));
	STORE_OK(h, store_rollback(h->st));
	assert_string_equal(harness_rows_text(&r, 1), "");
	r.n = 0;
	STORE_OK(h, store_demand(h->st, see_demand, &r));
	assert_string_equal(harness_rows_text(&r, 1), "1x0 batch train: jobs=1 items=1 no_est=1 est=0 oldest=50"
						       " | 1x0 standard train: jobs=1 items=1 no_est=1 est=0 oldest=200");
}

/* Submits, newest first: all of them, and those since a time with what
 * they need. Every state counts. */
static void recent_submits_and_arrivals(void **state)
{
	struct harness_store *h = *state;
	struct harness_rows r = {0};

	for (int k = 1; k <= 4; k++) {
		struct job j = job_of("x", k % 2 ? "express" : "batch", k % 2 ? "train" : "infer", "t", k * 10);
		j.gpus = k;
		j.min_vram_gb = 8 * k;
		j.est_s = k == 2 ? 0 : 60 * k;
		j.state = k == 3 ? JOB_SUCCEEDED : JOB_QUEUED;
		put(h, &j);
	}
	STORE_OK(h, store_recent_submits(h->st, 3, see_time, &r));
	assert_string_equal(harness_rows_text(&r, 0), "40 | 30 | 20");
	r = (struct harness_rows){0};
	STORE_OK(h, store_arrivals(h->st, 20, 10, see_arrival, &r));
	assert_string_equal(harness_rows_text(&r, 0), "40 4x32 batch infer est=240"
						      " | 30 3x24 express train est=180"
						      " | 20 2x16 batch infer est=0");
	r = (struct harness_rows){0};
	STORE_OK(h, store_arrivals(h->st, 0, 2, see_arrival, &r));
	assert_string_equal(harness_rows_text(&r, 0),
			    "40 4x32 batch infer est=240 | 30 3x24 express train est=180");
	r = (struct harness_rows){0};
	STORE_OK(h, store_arrivals(h->st, 41, 10, see_arrival, &r));
	assert_int(r.n, 0);
}

/* Newest by when they ended, not by id. */
static void recent_durations_of_succeeded_jobs(void **state)
{
	struct harness_store *h = *state;
	struct harness_rows r = {0};

	put_run(h, "a", JOB_SUCCEEDED, 1000, 1500);
	put_run(h, "b", JOB_SUCCEEDED, 100, 2000);
	put_run(h, "c", JOB_SUCCEEDED, 1000, 1100);
	put_run(h, "failed", JOB_FAILED, 100, 9000);
	put_run(h, "dead", JOB_DEAD, 100, 9000);
	put_run(h, "leased", JOB_LEASED, 100, 0);
	STORE_OK(h, store_recent_durations(h->st, 10, see_duration, &r));
	assert_string_equal(harness_rows_text(&r, 0), "b 1900 | a 500 | c 100");
	r = (struct harness_rows){0};
	STORE_OK(h, store_recent_durations(h->st, 2, see_duration, &r));
	assert_string_equal(harness_rows_text(&r, 0), "b 1900 | a 500");
}

static int see_dead(void *arg, const struct dead_letters *d)
{
	return harness_row(arg, "%s: %lld jobs %lld-%lld last=%s (%s) $%g", d->lane, (long long)d->jobs,
			   (long long)d->first_ms, (long long)d->last_ms, d->last_job ? "job" : "-",
			   d->last_error ? d->last_error : "-", d->cost);
}

/* The dead-lettered jobs since a time, per lane: how many, the first and
 * the last (its error), what their runs cost. */
static void dead_letters_per_lane_since(void **state)
{
	struct harness_store *h = *state;
	struct harness_rows r = {0};
	struct job a = job_of("a", "standard", "x", "t", 1), b = job_of("b", "standard", "x", "t", 1),
		   c = job_of("c", "batch", "x", "t", 1), old = job_of("old", "batch", "x", "t", 1),
		   failed = job_of("f", "batch", "x", "t", 1);
	struct job *all[] = {&a, &b, &c, &old, &failed};
	int64_t ends[] = {2000, 3000, 2500, 500, 2600};

	for (int k = 0; k < 5; k++) {
		all[k]->state = k == 4 ? JOB_FAILED : JOB_DEAD;
		all[k]->finished_ms = ends[k];
		all[k]->cost = 0.5;
		all[k]->error = strdup(k == 1 ? "lease expired on worker w" : "exit 1");
		put(h, all[k]);
		job_free(all[k]);
	}
	STORE_OK(h, store_dead_letters(h->st, 1000, see_dead, &r));
	assert_string_equal(harness_rows_text(&r, 0), "batch: 1 jobs 2500-2500 last=job (exit 1) $0.5"
						      " | standard: 2 jobs 2000-3000 last=job (lease expired on worker w) $1");
	r = (struct harness_rows){0};
	STORE_OK(h, store_dead_letters(h->st, 3001, see_dead, &r));
	assert_string_equal(harness_rows_text(&r, 0), "");
}

/* ---- a job's attempts ---- */

static int see_attempt(void *arg, const struct attempt *a)
{
	return harness_row(arg, "%lld#%d i%lld %s/%s %s %lld-%lld %s exit=%d items=%lld cp=%s why=%s",
			   (long long)a->job, a->attempt, (long long)a->instance, a->offer, market_name(a->market),
			   a->worker, (long long)a->started_ms, (long long)a->ended_ms, a->outcome, a->exit,
			   (long long)a->items_done, a->checkpoint ? a->checkpoint : "-", a->reason ? a->reason : "-");
}

/* An attempt is made whole at its lease; its end writes only the end's
 * columns, over whatever the end's row says of the rest. Each job's are
 * its own, oldest first, and outlive a reopen; a rollback undoes them. */
static void attempts_begin_end_and_walk(void **state)
{
	struct harness_store *h = *state;
	struct attempt a = {.job = 7, .attempt = 1, .instance = 3, .offer = "g5", .market = MARKET_SPOT,
			    .worker = "i-3", .started_ms = 100, .outcome = "running", .exit = -1};
	struct harness_rows r = {0};

	begin(h);
	STORE_OK(h, store_attempt_put(h->st, &a));
	a = (struct attempt){.job = 7, .attempt = 1, .offer = "ignored", .worker = "ignored", .started_ms = 1,
			     .ended_ms = 200, .outcome = "failed", .exit = 3, .items_done = 4,
			     .checkpoint = "tok", .reason = "exit status 3"};
	STORE_OK(h, store_attempt_put(h->st, &a));
	a = (struct attempt){.job = 7, .attempt = 2, .worker = "manual-1", .started_ms = 300, .outcome = "running",
			     .exit = -1, .checkpoint = "tok"};
	STORE_OK(h, store_attempt_put(h->st, &a));
	a = (struct attempt){.job = 8, .attempt = 1, .worker = "w", .started_ms = 5, .outcome = "running", .exit = -1};
	STORE_OK(h, store_attempt_put(h->st, &a));
	commit(h);
	begin(h);
	a = (struct attempt){.job = 8, .attempt = 2, .worker = "w", .outcome = "running", .exit = -1};
	STORE_OK(h, store_attempt_put(h->st, &a));
	STORE_OK(h, store_rollback(h->st));
	harness_store_reopen(h);
	STORE_OK(h, store_attempts(h->st, 8, see_attempt, &r));
	assert_string_equal(harness_rows_text(&r, 0), "8#1 i0 /on-demand w 5-0 running exit=-1 items=0 cp=- why=-");
	r = (struct harness_rows){0};
	STORE_OK(h, store_attempts(h->st, 7, see_attempt, &r));
	assert_string_equal(harness_rows_text(&r, 0),
			    "7#1 i3 g5/spot i-3 100-200 failed exit=3 items=4 cp=tok why=exit status 3 | "
			    "7#2 i0 /on-demand manual-1 300-0 running exit=-1 items=0 cp=tok why=-");
	assert_walk_stops(r, store_attempts(h->st, 7, see_attempt, &r));
}

/* ---- walks ---- */

/* Every walk over jobs, of two rows or more: a callback's nonzero return
 * stops it and is what it returns. */
static void callback_stops_every_job_walk(void **state)
{
	struct harness_store *h = *state;
	struct job_filter all = {.state = -1, .limit = 100};
	struct job dead[2] = {job_of("e", "standard", "x", "t", 1), job_of("f", "batch", "x", "t", 1)};
	struct harness_rows r;

	put_run(h, "a", JOB_SUCCEEDED, 1, 2);
	put_run(h, "b", JOB_SUCCEEDED, 1, 3);
	put_run(h, "c", JOB_QUEUED, 0, 0);
	put_run(h, "d", JOB_QUEUED, 0, 0);
	assert_walk_stops(r, store_job_list(h->st, &all, see_job, &r));
	assert_walk_stops(r, store_job_counts(h->st, see_count, &r));
	assert_walk_stops(r, store_demand(h->st, see_demand, &r));
	assert_walk_stops(r, store_recent_submits(h->st, 10, see_time, &r));
	assert_walk_stops(r, store_recent_durations(h->st, 10, see_duration, &r));
	assert_walk_stops(r, store_arrivals(h->st, 0, 10, see_arrival, &r));
	for (int k = 0; k < 2; k++) {
		dead[k].state = JOB_DEAD;
		put(h, &dead[k]);
	}
	assert_walk_stops(r, store_dead_letters(h->st, 0, see_dead, &r));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, harness_store_setup, harness_store_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(commit_is_durable),
		T(rollback_undoes_the_batch),
		T(savepoint_rollback_undoes_only_its_step),
		T(release_keeps_the_step_in_the_batch),
		T(counts_per_key_follow_commit_and_rollback),
		T(changes_grow_with_every_job_write),
		T(ids_are_positive_and_increasing),
		T(job_round_trips_every_field),
		T(missing_job_is_not_found),
		T(update_of_a_missing_job_fails),
		T(get_by_team_and_key),
		T(next_ready_order),
		T(next_ready_is_the_policy_order),
		T(next_ready_filters),
		T(next_ready_past_a_backlog_it_cannot_take),
		T(next_ready_is_the_first_that_fits),
		T(job_list_filters_and_pages),
		T(jobs_leased_on_an_instance),
		T(job_due_at_now),
		T(next_deadline_of_delays_and_leases),
		T(demand_groups_queued_work),
		T(demand_follows_the_oldest_and_agrees_with_a_recount),
		T(recent_submits_and_arrivals),
		T(recent_durations_of_succeeded_jobs),
		T(dead_letters_per_lane_since),
		T(callback_stops_every_job_walk),
		T(attempts_begin_end_and_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
