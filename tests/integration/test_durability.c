/* What serve acknowledged survives kill -9: 1,000 jobs in every state come
 * back after a restart exactly as they were, and jobs acknowledged while
 * the process was killed mid-stream are all there; a SIGTERM mid-stream
 * stops it cleanly, under a load that never pauses. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NJOBS 1000
#define NTHREADS 4

struct expect {
	int64_t id;
	const char *state;
	int64_t token; /* leased jobs: their lease token */
};

static struct expect jobs[NJOBS];

/* The job's argument, by which it is known after the restart. */
static const char *label(int i, char buf[32])
{
	snprintf(buf, 32, "job-%d", i);
	return buf;
}

/* Submits jobs[from..to) on its own connection, each acknowledged. */
struct submitter {
	pthread_t thread;
	struct client client;
	int from, to, failed;
};

static void *submit_range(void *arg)
{
	struct submitter *s = arg;

	char buf[32];

	for (int i = s->from; i < s->to && !s->failed; i++) {
		json_t *body = json_pack("{s:[s,s], s:s, s:i}", "command", "echo", label(i, buf), "type",
					 i % 2 ? "odd" : "even", "priority", i % 7), *r = NULL;
		int st;
		if (i % 20 == 0) /* a few wait for later */
			json_object_set_new(body, "delay_s", json_integer(3600));
		st = client_call(&s->client, "POST", "/v1/jobs", body, &r);
		json_decref(body);
		if (st != 201 || !json_is_integer(json_object_get(r, "id"))) {
			s->failed = st;
		} else {
			jobs[i].id = json_integer_value(json_object_get(r, "id"));
			jobs[i].state = i % 20 == 0 ? "delayed" : "queued";
		}
		json_decref(r);
	}
	return NULL;
}

/* POSTs as the server's token; the reply, which must have status want. */
static json_t *post(struct harness_server *s, const char *path, const char *body, int want)
{
	json_t *r = NULL;
	int st = harness_call(s, "POST", path, body, &r);

	if (st != want) {
		char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
		fail_msg("POST %s: status %d, expected %d: %s", path, st, want, text ? text : "");
	}
	return r;
}

static int find(int64_t id)
{
	for (int i = 0; i < NJOBS; i++) {
		if (jobs[i].id == id)
			return i;
	}
	return -1;
}

/* Compares what the server now says with jobs[]: the stats and every page
 * of the list. */
static void check_all(struct harness_server *s)
{
	static const char *const states[] = {"queued", "delayed", "leased", "succeeded", "failed",
					     "cancelled", NULL};
	int64_t after = 0;
	int seen = 0;
	json_t *r = NULL;
	char buf[32];

	assert_int(harness_call(s, "GET", "/v1/stats", NULL, &r), 200);
	for (int k = 0; states[k]; k++) {
		int want = 0;
		for (int i = 0; i < NJOBS; i++)
			want += strcmp(jobs[i].state, states[k]) == 0;
		if (JINT(r, harness_fmt("states.%s", states[k])) != want)
			print_error("state %s\n", states[k]);
		assert_int(JINT(r, harness_fmt("states.%s", states[k])), want);
	}
	json_decref(r);

	for (;;) {
		size_t n;
		json_t *list;
		assert_int(harness_call(s, "GET", harness_fmt("/v1/jobs?limit=300&after=%lld", (long long)after),
					NULL, &r), 200);
		list = json_object_get(r, "jobs");
		n = json_array_size(list);
		for (size_t k = 0; k < n; k++) {
			json_t *j = json_array_get(list, k);
			int64_t id = JINT(j, "id");
			int i = find(id);
			if (i < 0)
				fail_msg("job %lld was never acknowledged", (long long)id);
			if (strcmp(JSTR(j, "state"), jobs[i].state) != 0)
				print_error("job %lld\n", (long long)id);
			assert_string_equal(JSTR(j, "state"), jobs[i].state);
			if (jobs[i].token)
				assert_int(JINT(j, "lease.token"), jobs[i].token);
			assert_string_equal(JSTR(j, "command.1"), label(i, buf));
			assert_true(id > after);
			after = id;
			seen++;
		}
		if (json_is_null(json_object_get(r, "next_after"))) {
			json_decref(r);
			break;
		}
		assert_int(JINT(r, "next_after"), after);
		json_decref(r);
	}
	assert_int(seen, NJOBS);
}

static void thousand_jobs_survive_kill(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct submitter sub[NTHREADS];
	int leased = 0, done = 0, failed = 0, cancelled = 0;
	int64_t t0 = harness_now_ms();

	(void)state;
	memset(jobs, 0, sizeof jobs);
	for (int t = 0; t < NTHREADS; t++) {
		memset(&sub[t], 0, sizeof sub[t]);
		sub[t].from = t * NJOBS / NTHREADS;
		sub[t].to = (t + 1) * NJOBS / NTHREADS;
		if (client_init(&sub[t].client, s->url, "", "") != 0)
			fail_msg("client_init: %s", sub[t].client.err);
		pthread_create(&sub[t].thread, NULL, submit_range, &sub[t]);
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(sub[t].thread, NULL);
		client_free(&sub[t].client);
		if (sub[t].failed)
			fail_msg("a submit was not acknowledged with 201 (status %d)", sub[t].failed);
	}
	print_message("%d submits in %lld ms\n", NJOBS, (long long)(harness_now_ms() - t0));

	/* 200 leases; of those 60 complete, 20 fail for good; 100 cancels. */
	for (int n = 0; n < 200; n++) {
		json_t *r = post(s, "/v1/lease", "{\"worker\": \"w1\", \"lease_s\": 3600}", 200);
		int i = find(JINT(r, "job.id"));
		assert_true(i >= 0);
		jobs[i].state = "leased";
		jobs[i].token = JINT(r, "job.lease.token");
		json_decref(r);
		leased++;
	}
	for (int i = 0; i < NJOBS && (done < 60 || failed < 20); i++) {
		if (strcmp(jobs[i].state, "leased") != 0)
			continue;
		if (done < 60) {
			json_decref(post(s, harness_fmt("/v1/jobs/%lld/complete", (long long)jobs[i].id),
					 harness_fmt("{\"lease_token\": %lld, \"result\": {\"n\": %d}}",
						     (long long)jobs[i].token, i), 200));
			jobs[i].state = "succeeded";
			done++;
		} else {
			json_decref(post(s, harness_fmt("/v1/jobs/%lld/fail", (long long)jobs[i].id),
					 harness_fmt("{\"lease_token\": %lld, \"retry\": false}",
						     (long long)jobs[i].token), 200));
			jobs[i].state = "failed";
			failed++;
		}
		jobs[i].token = 0;
	}
	for (int i = NJOBS - 1; i >= 0 && cancelled < 100; i--) {
		if (strcmp(jobs[i].state, "queued") != 0 && strcmp(jobs[i].state, "delayed") != 0)
			continue;
		json_decref(post(s, harness_fmt("/v1/jobs/%lld/cancel", (long long)jobs[i].id), NULL, 200));
		jobs[i].state = "cancelled";
		cancelled++;
	}
	assert_int(leased, 200);
	assert_int(done, 60);
	assert_int(failed, 20);
	assert_int(cancelled, 100);
	check_all(s);

	harness_server_kill(s);
	harness_server_start(s);
	check_all(s);
	assert_int(harness_server_stop(s), 0);

	/* And once more after a clean stop. */
	harness_server_start(s);
	check_all(s);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* Submits until told to stop or the server is gone; every 201 is kept. */
struct stream {
	pthread_t thread;
	struct client client;
	int64_t acked[100000];
	atomic_int nacked, stop;
};

static void *submit_stream(void *arg)
{
	struct stream *st = arg;
	json_t *body = json_pack("{s:[s]}", "command", "true");

	while (!st->stop && st->nacked < 100000) {
		json_t *r = NULL;
		int code = client_call(&st->client, "POST", "/v1/jobs", body, &r);
		if (code == 201 && json_is_integer(json_object_get(r, "id")))
			st->acked[st->nacked++] = json_integer_value(json_object_get(r, "id"));
		json_decref(r);
		if (code < 0)
			break; /* killed */
	}
	json_decref(body);
	return NULL;
}

static void killed_mid_stream(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct stream *st[2];
	int64_t until = harness_now_ms() + 10000, total = 0;
	json_t *r = NULL;

	(void)state;
	for (int t = 0; t < 2; t++) {
		st[t] = calloc(1, sizeof *st[t]);
		if (client_init(&st[t]->client, s->url, "", "") != 0)
			fail_msg("client_init: %s", st[t]->client.err);
		pthread_create(&st[t]->thread, NULL, submit_stream, st[t]);
	}
	/* Kill while both are busy submitting. */
	while (st[0]->nacked + st[1]->nacked < 200 && harness_now_ms() < until)
		harness_sleep_ms(2);
	harness_server_kill(s);
	for (int t = 0; t < 2; t++) {
		st[t]->stop = 1;
		pthread_join(st[t]->thread, NULL);
		client_free(&st[t]->client);
	}
	assert_true(st[0]->nacked + st[1]->nacked >= 200);

	harness_server_start(s);
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < st[t]->nacked; i++) {
			int code = harness_call(s, "GET", harness_fmt("/v1/jobs/%lld", (long long)st[t]->acked[i]),
						NULL, &r);
			if (code != 200)
				print_error("acknowledged job %lld is lost\n", (long long)st[t]->acked[i]);
			assert_int(code, 200);
			assert_string_equal(JSTR(r, "state"), "queued");
			json_decref(r);
		}
		total += st[t]->nacked;
		free(st[t]);
	}
	/* Nothing more than was sent: at most one unacknowledged per thread. */
	assert_int(harness_call(s, "GET", "/v1/stats", NULL, &r), 200);
	assert_between(JINT(r, "states.queued"), total, total + 2);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

/* SIGTERM while sixteen clients submit as fast as they can: serve stops
 * within the harness's patience (a flush that took every request as it
 * came would never let the signal through), cleanly, and every job it
 * acknowledged is there after a restart. */
static void stopped_mid_stream(void **state)
{
	enum { NSTREAMS = 16 };
	struct harness_server *s = harness_serve(NULL, 0);
	struct stream *st[NSTREAMS];
	int64_t until = harness_now_ms() + 20000, acked = 0;

	(void)state;
	for (int t = 0; t < NSTREAMS; t++) {
		st[t] = calloc(1, sizeof *st[t]);
		if (client_init(&st[t]->client, s->url, "", "") != 0)
			fail_msg("client_init: %s", st[t]->client.err);
		pthread_create(&st[t]->thread, NULL, submit_stream, st[t]);
	}
	do {
		harness_sleep_ms(5);
		acked = 0;
		for (int t = 0; t < NSTREAMS; t++)
			acked += st[t]->nacked;
	} while (acked < 1000 && harness_now_ms() < until);
	assert_int(harness_server_stop(s), 0);
	for (int t = 0; t < NSTREAMS; t++) {
		st[t]->stop = 1;
		pthread_join(st[t]->thread, NULL);
		client_free(&st[t]->client);
	}
	harness_server_start(s);
	for (int t = 0; t < NSTREAMS; t++) {
		for (int i = 0; i < st[t]->nacked; i++)
			assert_true(harness_job_is(s, st[t]->acked[i], "queued"));
		free(st[t]);
	}
	assert_int(harness_server_stop(s), 0);
	harness_server_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(thousand_jobs_survive_kill, harness_cleanup),
		cmocka_unit_test_teardown(killed_mid_stream, harness_cleanup),
		cmocka_unit_test_teardown(stopped_mid_stream, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
