/* The queue on a real SQLite file with a virtual clock: ordering, delays,
 * fenced leases and their expiry, retries with backoff, the dead-letter
 * path, idempotency, limits, fit, cancellation, checkpoints. Time moves by
 * clock_advance, never by sleeping. Each step runs in its own transaction,
 * as the server's batches do. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/log.h"
#include "serve/queue.h"

#define T0 1700000000000LL /* the virtual clock's start, ms */

struct fx {
	struct config cfg;
	struct clock clock;
	struct store *store;
	struct queue q;
	const char *dir;
};

static struct fx *open_fx(void)
{
	struct fx *f = calloc(1, sizeof *f);

	config_defaults(&f->cfg, &(struct conf_plugins){store_plugins, NULL});
	clock_init_virtual(&f->clock, T0);
	f->dir = harness_tmpdir();
	f->store = harness_store_open(&f->cfg, f->dir);
	queue_init(&f->q, f->store, &f->cfg, &f->clock, 42);
	return f;
}

static int setup(void **state)
{
	log_set_level(LOG_WARN); /* every lease is logged at info */
	*state = open_fx();
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f) {
		store_close(f->store);
		config_free(&f->cfg);
		free(f);
	}
	return harness_cleanup(NULL);
}

/* The queue's functions leave their writes in the open batch. */
static void begin(struct fx *f)
{
	if (store_begin(f->store) != 0)
		fail_msg("begin: %s", store_error(f->store));
}

static void commit(struct fx *f)
{
	if (store_commit(f->store) != 0)
		fail_msg("commit: %s", store_error(f->store));
}

static void set(struct fx *f, const char *section, const char *key, const char *value)
{
	char err[512];

	if (config_set(&f->cfg, section, key, value, err, sizeof err) != 0)
		fail_msg("config_set: %s", err);
}

/* A job request as api_submit builds one. */
static struct job request(const char *lane, int priority)
{
	struct job j = {0};

	snprintf(j.type, sizeof j.type, "default");
	snprintf(j.lane, sizeof j.lane, "%s", lane);
	snprintf(j.team, sizeof j.team, "default");
	j.priority = priority;
	j.command = strdup("[\"true\"]");
	j.gpus = 1;
	j.items = 10;
	j.timeout_s = 3600;
	j.max_attempts = 3;
	return j;
}

/* Submits j (consumed); the stored job's id. */
static int64_t submit_job(struct fx *f, struct job *j, int64_t delay_ms)
{
	struct ebb_error err;
	int existed = -1;
	int64_t id;

	begin(f);
	if (queue_submit(&f->q, j, delay_ms, &existed, &err) != 0)
		fail_msg("queue_submit: %d %s", err.status, err.message);
	commit(f);
	assert_int(existed, 0);
	id = j->id;
	job_free(j);
	return id;
}

static int64_t submit(struct fx *f, const char *lane, int priority)
{
	struct job j = request(lane, priority);

	return submit_job(f, &j, 0);
}

static int64_t submit_typed(struct fx *f, const char *type)
{
	struct job j = request("standard", 0);

	snprintf(j.type, sizeof j.type, "%s", type);
	return submit_job(f, &j, 0);
}


static struct lease_offer offer(int gpus, int vram_gb)
{
	struct lease_offer o = {.gpus = gpus, .vram_gb = vram_gb};
	return o;
}

/* queue_lease in its own transaction, for jobs of only's types (NULL:
 * any): 1 with the job, 0 if none fits. */
static int lease_only(struct fx *f, const struct lease_offer *o, const struct lease_types *only, int64_t lease_ms,
		      struct job *out)
{
	struct lease_types any = {.n = 0};
	struct ebb_error err;
	int rc;

	memset(out, 0, sizeof *out);
	begin(f);
	rc = queue_lease(&f->q, o, only ? only : &any, "w1", 0, lease_ms, out, &err);
	commit(f);
	if (rc < 0)
		fail_msg("queue_lease: %d %s", err.status, err.message);
	return rc;
}

static int lease_with(struct fx *f, const struct lease_offer *o, int64_t lease_ms, struct job *out)
{
	return lease_only(f, o, NULL, lease_ms, out);
}

/* A lease for a warm handler's types takes the next job in lease order
 * only when it is of one of them: it never passes over another's job. */
static void lease_for_warm_types(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	struct lease_types embed = {.names = {"transcode", "embed"}, .n = 2}, whisper = {.names = {"whisper"}, .n = 1};
	struct job j;
	int64_t first = submit_typed(f, "embed"), second = submit_typed(f, "whisper");

	assert_int(lease_only(f, &o, &whisper, 60000, &j), 0);
	assert_int(lease_only(f, &o, &embed, 60000, &j), 1);
	assert_int(j.id, first);
	job_free(&j);
	assert_int(lease_only(f, &o, &embed, 60000, &j), 0);
	assert_int(lease_only(f, &o, &whisper, 60000, &j), 1);
	assert_int(j.id, second);
	job_free(&j);
}

/* The id of the next lease, 0 if none; the lease is held for 60 s. */
static int64_t lease_id(struct fx *f)
{
	struct lease_offer o = offer(1, 0);
	struct job j;
	int64_t id = 0;

	if (lease_with(f, &o, 60000, &j) == 1)
		id = j.id;
	job_free(&j);
	return id;
}

static struct job get(struct fx *f, int64_t id)
{
	struct ebb_error err;
	struct job j;

	if (queue_get(&f->q, id, NULL, &j, &err) != 0)
		fail_msg("queue_get %lld: %d %s", (long long)id, err.status, err.message);
	return j;
}

static enum job_state state_of(struct fx *f, int64_t id)
{
	struct job j = get(f, id);
	enum job_state s = j.state;

	job_free(&j);
	return s;
}

#define assert_state(f, id, want) \
	assert_string_equal(job_state_name(state_of((f), (id))), job_state_name(want))

static void advance(struct fx *f, int64_t ms)
{
	struct ebb_error err;

	clock_advance(&f->clock, ms);
	begin(f);
	if (queue_process_due(&f->q, &err) != 0)
		fail_msg("queue_process_due: %s", err.message);
	commit(f);
}

static int64_t count(struct fx *f, enum job_state s)
{
	return store_count_in_state(f->store, s);
}

/* ---- ordering ---- */

static void lanes_then_priority_then_fifo(void **state)
{
	struct fx *f = *state;
	int64_t batch = submit(f, "batch", 1000);
	int64_t std_low = submit(f, "standard", 0);
	int64_t std_high1 = submit(f, "standard", 5);
	int64_t express = submit(f, "express", -1000);
	int64_t std_high2 = submit(f, "standard", 5);
	int64_t std_low2 = submit(f, "standard", 0);

	assert_int(count(f, JOB_QUEUED), 6);
	assert_int(lease_id(f), express);
	assert_int(lease_id(f), std_high1);
	assert_int(lease_id(f), std_high2);
	assert_int(lease_id(f), std_low);
	assert_int(lease_id(f), std_low2);
	assert_int(lease_id(f), batch);
	assert_int(lease_id(f), 0);
	assert_int(count(f, JOB_LEASED), 6);
	assert_int(count(f, JOB_QUEUED), 0);
}

static void submit_fills_in(void **state)
{
	struct fx *f = *state;
	int64_t id = submit(f, "batch", 0);
	struct job j = get(f, id);

	assert_true(id > 0);
	assert_string_equal(job_state_name(j.state), "queued");
	assert_int(j.lane_rank, 2);
	assert_int(j.created_ms, T0);
	assert_int(j.run_at_ms, T0);
	assert_int(j.attempts, 0);
	assert_int(j.lease_token, 0);
	assert_string_equal(j.command, "[\"true\"]");
	job_free(&j);
	assert_int(f->q.ready_changed, 1);
}

/* ---- delays ---- */

static void delay_promoted_when_due(void **state)
{
	struct fx *f = *state;
	struct job j = request("standard", 0);
	int64_t id, at = 0;

	f->q.ready_changed = 0;
	id = submit_job(f, &j, 5000);
	assert_state(f, id, JOB_DELAYED);
	assert_int(f->q.ready_changed, 0); /* nothing to lease yet */
	assert_int(queue_next_deadline(&f->q, &at), 0);
	assert_int(at, T0 + 5000);
	assert_int(lease_id(f), 0);
	advance(f, 4999);
	assert_state(f, id, JOB_DELAYED);
	assert_int(lease_id(f), 0);
	advance(f, 1);
	assert_state(f, id, JOB_QUEUED);
	assert_int(f->q.ready_changed, 1);
	assert_int(lease_id(f), id);
}

static void run_at(void **state)
{
	struct fx *f = *state;
	struct job later = request("standard", 0), past = request("standard", 0);
	int64_t a, b;

	later.run_at_ms = T0 + 60000;
	past.run_at_ms = T0 - 60000;
	a = submit_job(f, &later, 0);
	b = submit_job(f, &past, 0);
	assert_state(f, a, JOB_DELAYED);
	assert_state(f, b, JOB_QUEUED);
	advance(f, 59999);
	assert_state(f, a, JOB_DELAYED);
	advance(f, 1);
	assert_state(f, a, JOB_QUEUED);
}

/* queue_process_due works in rounds of 256: all 300 due jobs move. */
static void many_due_at_once(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 300; i++) {
		struct job j = request("standard", 0);
		submit_job(f, &j, 1000 + i);
	}
	assert_int(count(f, JOB_DELAYED), 300);
	advance(f, 2000);
	assert_int(count(f, JOB_DELAYED), 0);
	assert_int(count(f, JOB_QUEUED), 300);
}

/* ---- leases ---- */

static void lease_gives_token(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	int64_t id = submit(f, "standard", 0), at = 0;
	struct job j;
	struct ebb_error err;

	assert_int(lease_with(f, &o, 30000, &j), 1);
	assert_int(j.id, id);
	assert_string_equal(job_state_name(j.state), "leased");
	assert_int(j.lease_token, 1);
	assert_int(j.attempts, 1);
	assert_int(j.lease_expires_ms, T0 + 30000);
	assert_string_equal(j.worker, "w1");
	job_free(&j);
	assert_int(queue_next_deadline(&f->q, &at), 0);
	assert_int(at, T0 + 30000);

	/* A heartbeat moves the expiry to now + the lease's length. */
	clock_advance(&f->clock, 20000);
	begin(f);
	assert_int(queue_heartbeat(&f->q, id, 1, &j, &err), 0);
	commit(f);
	assert_int(j.lease_expires_ms, T0 + 50000);
	job_free(&j);
	advance(f, 29999); /* past the first expiry, not the new one */
	assert_state(f, id, JOB_LEASED);

	begin(f);
	assert_int(queue_heartbeat(&f->q, id, 2, &j, &err), -1);
	commit(f);
	assert_int(err.status, 409);
	assert_string_equal(err.code, "stale_lease");
	assert_string_equal(err.field, "lease_token");
}

static void expired_lease_requeued(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	int64_t id = submit(f, "standard", 0);
	struct ebb_error err;
	struct job j;

	assert_int(lease_with(f, &o, 30000, &j), 1);
	job_free(&j);
	advance(f, 29999);
	assert_state(f, id, JOB_LEASED);
	advance(f, 1);
	j = get(f, id);
	assert_string_equal(job_state_name(j.state), "queued");
	assert_int(j.attempts, 1); /* the lost attempt counts */
	assert_contains(j.error, "lease expired");
	job_free(&j);

	/* The old holder is fenced off: heartbeat, complete, fail, checkpoint. */
	begin(f);
	assert_int(queue_heartbeat(&f->q, id, 1, &j, &err), -1);
	assert_int(err.status, 409);
	assert_int(queue_complete(&f->q, id, 1, -1, NULL, &j, &err), -1);
	assert_int(err.status, 409);
	assert_string_equal(err.code, "stale_lease");
	assert_int(queue_fail(&f->q, id, 1, "x", 1, -1, &j, &err), -1);
	assert_int(err.status, 409);
	assert_int(queue_checkpoint(&f->q, id, 1, "c", 1, &j, &err), -1);
	assert_int(err.status, 409);
	commit(f);

	assert_int(lease_with(f, &o, 30000, &j), 1);
	assert_int(j.lease_token, 2);
	assert_int(j.attempts, 2);
	job_free(&j);

	/* Leased again: the first token is still stale, the new one works. */
	begin(f);
	assert_int(queue_complete(&f->q, id, 1, -1, NULL, &j, &err), -1);
	assert_int(err.status, 409);
	assert_contains(err.message, "leased again (token 2)");
	assert_int(queue_complete(&f->q, id, 2, -1, "{\"ok\":true}", &j, &err), 0);
	commit(f);
	assert_string_equal(job_state_name(j.state), "succeeded");
	assert_int(j.items_done, 10); /* all items when the worker does not say */
	assert_int(j.finished_ms, T0 + 30000);
	assert_string_equal(j.result, "{\"ok\":true}");
	job_free(&j);
	assert_int(count(f, JOB_SUCCEEDED), 1);
}

/* ---- retries ---- */

static void backoff_bounds(void **state)
{
	struct fx *f = *state;
	int64_t first = -1;
	int varied = 0;

	set(f, "queue", "retry_base", "1s");
	set(f, "queue", "retry_max", "10s");
	for (int attempts = 1; attempts <= 8; attempts++) {
		int64_t d = 1000LL << (attempts - 1);
		if (d > 10000)
			d = 10000;
		for (int i = 0; i < 200; i++) {
			int64_t b = queue_backoff_ms(&f->q, attempts);
			assert_between(b, d / 2, d);
			if (attempts == 1 && first < 0)
				first = b;
			else if (attempts == 1 && b != first)
				varied = 1;
		}
	}
	assert_true(varied); /* there is jitter */
	set(f, "queue", "retry_base", "0s");
	assert_int(queue_backoff_ms(&f->q, 3), 0);
}

static void fail_retries_with_backoff(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	struct job j = request("standard", 0);
	struct ebb_error err;
	int64_t id, token;

	set(f, "queue", "retry_base", "2s");
	set(f, "queue", "retry_max", "5s");
	j.max_attempts = 5;
	id = submit_job(f, &j, 0);
	for (int attempt = 1; attempt <= 4; attempt++) {
		int64_t d = 2000LL << (attempt - 1), now = clock_now(&f->clock);
		if (d > 5000)
			d = 5000;
		assert_int(lease_with(f, &o, 60000, &j), 1);
		assert_int(j.attempts, attempt);
		token = j.lease_token;
		job_free(&j);
		begin(f);
		assert_int(queue_fail(&f->q, id, token, "oom", 1, -1, &j, &err), 0);
		commit(f);
		assert_string_equal(job_state_name(j.state), "delayed");
		assert_string_equal(j.error, "oom");
		assert_between(j.run_at_ms - now, d / 2, d);
		/* Not before its time. */
		advance(f, j.run_at_ms - now - 1);
		assert_state(f, id, JOB_DELAYED);
		assert_int(lease_id(f), 0);
		advance(f, 1);
		assert_state(f, id, JOB_QUEUED);
		job_free(&j);
	}
}

static void dead_after_max_attempts(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	struct job j = request("standard", 0);
	struct ebb_error err;
	int64_t id, token;

	id = submit_job(f, &j, 0);
	for (int attempt = 1; attempt <= 3; attempt++) {
		assert_int(lease_with(f, &o, 60000, &j), 1);
		token = j.lease_token;
		job_free(&j);
		begin(f);
		assert_int(queue_fail(&f->q, id, token, harness_fmt("boom %d", attempt), 1, -1, &j, &err), 0);
		commit(f);
		if (attempt < 3) {
			assert_string_equal(job_state_name(j.state), "delayed");
			advance(f, j.run_at_ms - clock_now(&f->clock));
		}
		job_free(&j);
	}
	j = get(f, id);
	assert_string_equal(job_state_name(j.state), "dead");
	assert_int(j.attempts, 3);
	assert_string_equal(j.error, "boom 3");
	assert_int(j.finished_ms, clock_now(&f->clock));
	job_free(&j);
	assert_int(count(f, JOB_DEAD), 1);
	assert_int(lease_id(f), 0);
	advance(f, 3600000);
	assert_state(f, id, JOB_DEAD);
}

/* Lost leases count as attempts too: the last one buries the job. */
static void dead_after_expiries(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	struct job j = request("standard", 0);
	int64_t id;

	j.max_attempts = 2;
	id = submit_job(f, &j, 0);
	for (int i = 0; i < 2; i++) {
		assert_int(lease_with(f, &o, 10000, &j), 1);
		job_free(&j);
		advance(f, 10000);
	}
	j = get(f, id);
	assert_string_equal(job_state_name(j.state), "dead");
	assert_int(j.attempts, 2);
	assert_contains(j.error, "lease expired on worker w1");
	job_free(&j);
}

static void fail_without_retry(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	struct ebb_error err;
	int64_t id = submit(f, "standard", 0);
	struct job j;

	assert_int(lease_with(f, &o, 60000, &j), 1);
	job_free(&j);
	begin(f);
	assert_int(queue_fail(&f->q, id, 1, "bad input", 0, -1, &j, &err), 0);
	commit(f);
	assert_string_equal(job_state_name(j.state), "failed");
	assert_int(j.attempts, 1); /* two left, none used */
	assert_string_equal(j.error, "bad input");
	job_free(&j);
	advance(f, 3600000);
	assert_state(f, id, JOB_FAILED);
}

/* ---- submit rules ---- */

static int submit_keyed(struct fx *f, const char *team, const char *key, int64_t hash,
			int64_t *id, int *existed, struct ebb_error *err)
{
	struct job j = request("standard", 0);
	int rc;

	snprintf(j.team, sizeof j.team, "%s", team);
	j.idem_key = strdup(key);
	j.idem_hash = hash;
	begin(f);
	rc = queue_submit(&f->q, &j, 0, existed, err);
	commit(f);
	*id = j.id;
	job_free(&j);
	return rc;
}

static void idempotency_key(void **state)
{
	struct fx *f = *state;
	struct ebb_error err;
	int64_t first, again, other;
	int existed;

	assert_int(submit_keyed(f, "ml", "nightly-1", 111, &first, &existed, &err), 0);
	assert_int(existed, 0);
	assert_int(submit_keyed(f, "ml", "nightly-1", 111, &again, &existed, &err), 0);
	assert_int(existed, 1);
	assert_int(again, first);
	assert_int(count(f, JOB_QUEUED), 1);

	assert_int(submit_keyed(f, "ml", "nightly-1", 222, &again, &existed, &err), -1);
	assert_int(err.status, 409);
	assert_string_equal(err.code, "idempotency_conflict");
	assert_string_equal(err.field, "idempotency_key");
	assert_contains(err.message, harness_fmt("job %lld", (long long)first));

	/* Keys belong to a team. */
	assert_int(submit_keyed(f, "vision", "nightly-1", 222, &other, &existed, &err), 0);
	assert_int(existed, 0);
	assert_true(other != first);
	assert_int(count(f, JOB_QUEUED), 2);
}

static void max_queued(void **state)
{
	struct fx *f = *state;
	struct job j;
	struct ebb_error err;
	int existed;

	set(f, "queue", "max_queued", "5");
	for (int i = 0; i < 3; i++)
		submit(f, "standard", 0);
	for (int i = 0; i < 2; i++) {
		j = request("standard", 0);
		submit_job(f, &j, 60000); /* delayed ones count too */
	}
	j = request("standard", 0);
	begin(f);
	assert_int(queue_submit(&f->q, &j, 0, &existed, &err), -1);
	commit(f);
	job_free(&j);
	assert_int(err.status, 429);
	assert_string_equal(err.code, "queue_full");
	assert_int(count(f, JOB_QUEUED) + count(f, JOB_DELAYED), 5);

	/* A leased job no longer waits: there is room for one more. */
	assert_true(lease_id(f) > 0);
	submit(f, "standard", 0);
}

/* ---- what a worker gets ---- */

static void type_max_running(void **state)
{
	struct fx *f = *state;
	int64_t gpu[3], cpu, token;
	struct ebb_error err;
	struct job j;

	set(f, "type.gpu", "max_running", "2");
	for (int i = 0; i < 3; i++) {
		j = request("standard", 0);
		snprintf(j.type, sizeof j.type, "gpu");
		gpu[i] = submit_job(f, &j, 0);
	}
	j = request("standard", 0);
	snprintf(j.type, sizeof j.type, "cpu");
	cpu = submit_job(f, &j, 0);

	assert_int(lease_id(f), gpu[0]);
	assert_int(lease_id(f), gpu[1]);
	assert_int(lease_id(f), cpu); /* gpu[2] waits for a slot */
	assert_int(lease_id(f), 0);

	j = get(f, gpu[0]);
	token = j.lease_token;
	job_free(&j);
	begin(f);
	assert_int(queue_complete(&f->q, gpu[0], token, -1, NULL, &j, &err), 0);
	commit(f);
	job_free(&j);
	assert_int(f->q.ready_changed, 1);
	assert_int(lease_id(f), gpu[2]);
}

static void fit(void **state)
{
	struct fx *f = *state;
	struct job j = request("standard", 0);
	struct lease_offer o;
	json_t *labels;
	int64_t id, plain;

	j.gpus = 2;
	j.min_vram_gb = 40;
	j.labels = strdup("[\"a100\",\"nvlink\"]");
	id = submit_job(f, &j, 0);

	o = offer(1, 80);
	assert_int(lease_with(f, &o, 60000, &j), 0); /* too few GPUs */
	o = offer(2, 24);
	assert_int(lease_with(f, &o, 60000, &j), 0); /* too little memory */
	o = offer(2, 80);
	assert_int(lease_with(f, &o, 60000, &j), 0); /* no labels */
	labels = json_pack("[s]", "a100");
	o.labels = labels;
	assert_int(lease_with(f, &o, 60000, &j), 0); /* one label of two */
	json_decref(labels);

	/* A job without labels fits a worker with some; so does the first. */
	plain = submit(f, "batch", 0);
	labels = json_pack("[s,s,s]", "fast", "nvlink", "a100");
	o = offer(4, 80);
	o.labels = labels;
	assert_int(lease_with(f, &o, 60000, &j), 1);
	assert_int(j.id, id);
	job_free(&j);
	assert_int(lease_with(f, &o, 60000, &j), 1);
	assert_int(j.id, plain);
	job_free(&j);
	json_decref(labels);
}

/* ---- cancel ---- */

static void cancel(void **state)
{
	struct fx *f = *state;
	struct ebb_error err;
	struct job j, delayed = request("standard", 0);
	int64_t leased = submit(f, "standard", 0), queued, later;

	assert_int(lease_id(f), leased);
	queued = submit(f, "standard", 0);
	later = submit_job(f, &delayed, 5000);
	f->q.ready_changed = 0;
	begin(f);
	assert_int(queue_cancel(&f->q, queued, NULL, &j, &err), 0);
	assert_string_equal(job_state_name(j.state), "cancelled");
	assert_int(j.finished_ms, T0);
	job_free(&j);

	assert_int(queue_cancel(&f->q, leased, NULL, &j, &err), 0);
	assert_string_equal(job_state_name(j.state), "cancelled");
	job_free(&j);
	assert_int(f->q.ready_changed, 1); /* its type's slot is free */
	/* The worker that held it finds out at its next heartbeat. */
	assert_int(queue_heartbeat(&f->q, leased, 1, &j, &err), -1);
	assert_int(err.status, 409);
	assert_string_equal(err.code, "stale_lease");
	assert_contains(err.message, "cancelled");

	assert_int(queue_cancel(&f->q, later, NULL, &j, &err), 0);
	job_free(&j);

	/* Finished jobs stay as they ended. */
	assert_int(queue_cancel(&f->q, queued, NULL, &j, &err), -1);
	assert_int(err.status, 409);
	assert_string_equal(err.code, "already_finished");
	commit(f);

	/* A cancelled delayed job is not promoted when its time comes. */
	advance(f, 10000);
	assert_state(f, later, JOB_CANCELLED);
	assert_int(count(f, JOB_CANCELLED), 3);
	assert_int(count(f, JOB_QUEUED) + count(f, JOB_DELAYED) + count(f, JOB_LEASED), 0);
}

static void team_scope(void **state)
{
	struct fx *f = *state;
	struct job j = request("standard", 0);
	struct ebb_error err;
	int64_t id;

	snprintf(j.team, sizeof j.team, "ml");
	id = submit_job(f, &j, 0);
	assert_int(queue_get(&f->q, id, "vision", &j, &err), -1);
	assert_int(err.status, 404);
	assert_string_equal(err.code, "not_found");
	begin(f);
	assert_int(queue_cancel(&f->q, id, "vision", &j, &err), -1);
	commit(f);
	assert_int(err.status, 404);
	assert_state(f, id, JOB_QUEUED);
	assert_int(queue_get(&f->q, id, "ml", &j, &err), 0);
	job_free(&j);
	assert_int(queue_get(&f->q, id + 1000, NULL, &j, &err), -1);
	assert_int(err.status, 404);
}

/* ---- checkpoints and lost replies ---- */

static void checkpoint_survives_expiry(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	int64_t id = submit(f, "standard", 0);
	struct ebb_error err;
	struct job j;

	assert_int(lease_with(f, &o, 30000, &j), 1);
	job_free(&j);
	clock_advance(&f->clock, 20000);
	begin(f);
	assert_int(queue_checkpoint(&f->q, id, 1, "epoch=3", 6, &j, &err), 0);
	commit(f);
	assert_int(j.lease_expires_ms, T0 + 50000); /* a checkpoint is a heartbeat */
	job_free(&j);
	advance(f, 30000);
	assert_state(f, id, JOB_QUEUED);

	assert_int(lease_with(f, &o, 30000, &j), 1);
	assert_int(j.id, id);
	assert_int(j.lease_token, 2);
	assert_string_equal(j.checkpoint, "epoch=3");
	assert_int(j.items_done, 6);
	job_free(&j);
}

static void unlease_does_not_count(void **state)
{
	struct fx *f = *state;
	struct lease_offer o = offer(1, 0);
	int64_t id = submit(f, "standard", 0);
	struct ebb_error err;
	struct job j;

	assert_int(lease_with(f, &o, 30000, &j), 1);
	job_free(&j);
	f->q.ready_changed = 0;
	begin(f);
	assert_int(queue_unlease(&f->q, id, 1, &err), 0);
	assert_int(queue_unlease(&f->q, id, 1, &err), -1); /* no longer leased */
	assert_int(err.status, 409);
	commit(f);
	assert_int(f->q.ready_changed, 1);
	j = get(f, id);
	assert_string_equal(job_state_name(j.state), "queued");
	assert_int(j.attempts, 0);
	job_free(&j);
	assert_int(lease_with(f, &o, 30000, &j), 1);
	assert_int(j.attempts, 1);
	assert_int(j.lease_token, 2); /* tokens never go back */
	job_free(&j);
}

/* ---- the store under it ---- */

static void rollback_leaves_no_trace(void **state)
{
	struct fx *f = *state;
	struct job j = request("standard", 0);
	struct ebb_error err;
	int existed;

	struct job out;

	begin(f);
	assert_int(queue_submit(&f->q, &j, 0, &existed, &err), 0);
	assert_int(store_rollback(f->store), 0);
	assert_int(queue_get(&f->q, j.id, NULL, &out, &err), -1);
	assert_int(err.status, 404);
	job_free(&j);
	assert_int(count(f, JOB_QUEUED), 0);
}

static void reopened_store_keeps_jobs(void **state)
{
	struct fx *f = *state;
	int64_t id = submit(f, "express", 7), token;
	struct job j;

	assert_int(lease_id(f), id);
	j = get(f, id);
	token = j.lease_token;
	job_free(&j);
	store_close(f->store);
	f->store = harness_store_open(&f->cfg, f->dir);
	queue_init(&f->q, f->store, &f->cfg, &f->clock, 1);
	j = get(f, id);
	assert_string_equal(job_state_name(j.state), "leased");
	assert_int(j.lease_token, token);
	assert_int(j.priority, 7);
	assert_string_equal(j.lane, "express");
	job_free(&j);
	assert_int(count(f, JOB_LEASED), 1);
}

/* A job leased on an instance at the clock's time now. */
static struct job lease_on(struct fx *f, int64_t instance)
{
	struct lease_offer o = offer(1, 0);
	struct ebb_error err;
	struct job j;

	begin(f);
	if (queue_lease(&f->q, &o, &(struct lease_types){.n = 0}, "w1", instance, 60000, &j, &err) != 1)
		fail_msg("queue_lease: %d %s", err.status, err.message);
	commit(f);
	return j;
}

static void decide(struct fx *f, const char *kind, int64_t instance, const char *reason)
{
	struct decision d = {.at_ms = clock_now(&f->clock), .kind = kind, .offer = "", .instance = instance,
			     .reason = reason};

	begin(f);
	if (store_decision_insert(f->store, &d) != 0)
		fail_msg("store_decision_insert: %s", store_error(f->store));
	commit(f);
}

/* A serve restarted while preempted jobs stop at their checkpoints reads
 * the preemptions back from the decisions: a "preempt" on an instance
 * names its lease begun last by then (on instance 7, the second of two);
 * one older than every lease there (instance 9), or on an instance with
 * none running, names nothing; the restored ones are not counted again. */
static void preemptions_restored(void **state)
{
	struct fx *f = *state;
	struct job first, second, later;

	submit(f, "standard", 0);
	submit(f, "standard", 0);
	submit(f, "standard", 0);
	first = lease_on(f, 7);
	clock_advance(&f->clock, 1000);
	second = lease_on(f, 7);
	decide(f, "launch", 7, "not a preemption");
	decide(f, "preempt", 7, "team a is owed 1 GPU");
	decide(f, "preempt", 8, "no lease there");
	decide(f, "preempt", 9, "before the lease");
	clock_advance(&f->clock, 1000);
	later = lease_on(f, 9);

	assert_int(preempt_restore(&f->q.preempts, f->store), 0);
	assert_int(f->q.preempts.n, 1);
	assert_null(preempt_reason(&f->q.preempts, first.id, first.lease_token));
	assert_string_equal(preempt_reason(&f->q.preempts, second.id, second.lease_token), "team a is owed 1 GPU");
	assert_null(preempt_reason(&f->q.preempts, later.id, later.lease_token));
	assert_int(f->q.preempts.nteams, 0);
	job_free(&first);
	job_free(&second);
	job_free(&later);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(lanes_then_priority_then_fifo),
		T(submit_fills_in),
		T(lease_for_warm_types),
		T(delay_promoted_when_due),
		T(run_at),
		T(many_due_at_once),
		T(lease_gives_token),
		T(expired_lease_requeued),
		T(backoff_bounds),
		T(fail_retries_with_backoff),
		T(dead_after_max_attempts),
		T(dead_after_expiries),
		T(fail_without_retry),
		T(idempotency_key),
		T(max_queued),
		T(type_max_running),
		T(fit),
		T(cancel),
		T(team_scope),
		T(checkpoint_survives_expiry),
		T(unlease_does_not_count),
		T(rollback_leaves_no_trace),
		T(reopened_store_keeps_jobs),
		T(preemptions_restored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
