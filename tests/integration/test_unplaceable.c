/* Refuse what can never run, end to end with a real `ebb serve` and its
 * store: where the config has offers, a submit whose GPUs or memory per
 * GPU no offer and no registered worker has is refused 422 unplaceable
 * with the reason (single, and each job of an array), unless it allows
 * it (allow_unplaceable, `ebb submit --allow-unplaceable`); a worker
 * registered with enough makes it placeable; without offers nothing is
 * refused (workers started by hand run what they can). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "common/config.h"
#include "store/store.h"

#define OFFERS "[offer.g5]\ngpus = 1\nvram_gb = 24\nprice_ondemand = 1.0\n" \
	       "[offer.a4]\ngpus = 4\nvram_gb = 16\nprice_ondemand = 3.0\n"
#define VRAM_80 "no offer has 80 GB of GPU memory per GPU: the largest is g5 with 24"

static void assert_refused(json_t *r, const char *field, const char *reason)
{
	assert_string_equal(JSTR(r, "error.code"), "unplaceable");
	assert_string_equal(JSTR(r, "error.field"), field);
	assert_contains(JSTR(r, "error.message"), reason);
}

static void test_submit_refused_with_the_reason(void **state)
{
	struct harness_server *s = harness_serve(OFFERS, 0);
	struct harness_run run;
	json_t *r, *j;

	(void)state;
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"min_vram_gb\": 80}", 422);
	assert_refused(r, "min_vram_gb", VRAM_80);
	json_decref(r);
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"gpus\": 8}", 422);
	assert_refused(r, "gpus", "no offer has 8 GPUs: the most is a4 with 4");
	json_decref(r);
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"gpus\": 4, \"min_vram_gb\": 24}", 422);
	assert_refused(r, "min_vram_gb", "no offer has 4 GPUs of 24 GB of GPU memory each");
	json_decref(r);
	assert_int(harness_stat(s, "states.queued"), 0);

	/* What an offer holds is queued; so is what the submit allows. */
	harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 4, \"min_vram_gb\": 16}");
	r = harness_call_ok(s, "POST", "/v1/jobs",
			    "{\"command\": [\"true\"], \"min_vram_gb\": 80, \"allow_unplaceable\": true}", 201);
	assert_string_equal(JSTR(r, "state"), "queued");
	json_decref(r);
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"allow_unplaceable\": 1}", 400);
	assert_string_equal(JSTR(r, "error.field"), "allow_unplaceable");
	json_decref(r);

	/* An array: the refused job answers its error, the others are queued. */
	r = harness_call_ok(s, "POST", "/v1/jobs",
			    "[{\"command\": [\"true\"]}, {\"command\": [\"true\"], \"min_vram_gb\": 80},"
			    " {\"command\": [\"true\"], \"min_vram_gb\": 80, \"allow_unplaceable\": true}]", 200);
	j = json_array_get(harness_jget(r, "jobs"), 1);
	assert_int(JINT(j, "status"), 422);
	assert_refused(j, "min_vram_gb", VRAM_80);
	assert_int(JINT(json_array_get(harness_jget(r, "jobs"), 0), "status"), 201);
	assert_int(JINT(json_array_get(harness_jget(r, "jobs"), 2), "status"), 201);
	json_decref(r);

	/* The command line: the reason, exit 1; --allow-unplaceable queues it. */
	harness_ebb(&run, s, "submit", "--vram", "80", "--", "true", NULL);
	assert_int(run.status, 1);
	assert_contains(run.err, VRAM_80);
	harness_run_free(&run);
	harness_ebb(&run, s, "submit", "--vram", "80", "--allow-unplaceable", "--", "true", NULL);
	assert_int(run.status, 0);
	harness_run_free(&run);
	/* With --jobs, the flag is every line's default. */
	harness_write_file(harness_fmt("%s/jobs", s->dir), "{\"command\": [\"true\"], \"gpus\": 8}\n");
	harness_ebb(&run, s, "submit", "--jobs", harness_fmt("%s/jobs", s->dir), NULL);
	assert_int(run.status, 1);
	assert_contains(run.err, "no offer has 8 GPUs: the most is a4 with 4");
	harness_run_free(&run);
	harness_ebb(&run, s, "submit", "--allow-unplaceable", "--jobs", harness_fmt("%s/jobs", s->dir), NULL);
	assert_int(run.status, 0);
	harness_run_free(&run);
	assert_int(harness_stat(s, "states.queued"), 6);
}

/* An instance's worker registered with 2 GPUs of 80 GB (its row as
 * register leaves it, written while serve is stopped): what no offer
 * holds but it does is queued; what it does not hold either is refused. */
static void test_a_registered_worker_makes_it_placeable(void **state)
{
	struct harness_server *s = harness_serve(OFFERS, 0);
	struct config cfg = {0};
	struct instance inst = {0};
	struct store *st;
	json_t *r;

	(void)state;
	assert_int(harness_server_stop(s), 0);
	config_defaults(&cfg, &(struct conf_plugins){store_plugins, NULL});
	st = harness_store_open(&cfg, s->data);
	snprintf(inst.offer, sizeof inst.offer, "g5");
	inst.state = INST_IDLE;
	inst.gpus = 2;
	inst.vram_gb = 80;
	assert_int(store_begin(st), 0);
	assert_int(store_instance_insert(st, &inst), 0);
	assert_int(store_commit(st), 0);
	store_close(st);
	harness_server_start(s);

	harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 2, \"min_vram_gb\": 80}");
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"gpus\": 3, \"min_vram_gb\": 80}", 422);
	assert_refused(r, "min_vram_gb", VRAM_80);
	json_decref(r);
	config_free(&cfg);
}

/* Is EbbJobsUnplaceable firing, its summary with has in it? */
static int unplaceable_firing(struct harness_server *s, const char *has)
{
	json_t *r = harness_get(s, "/v1/alerts"), *a;
	int found = 0;
	size_t i;

	json_array_foreach(json_object_get(r, "alerts"), i, a) {
		found |= strcmp(JSTR(a, "name"), "EbbJobsUnplaceable") == 0 && strcmp(JSTR(a, "state"), "firing") == 0 &&
			 strstr(JSTR(a, "summary"), has) != NULL;
	}
	json_decref(r);
	return found;
}

/* A job an offer held is queued; serve restarts with a config that no
 * longer has the offer: the queued job is flagged at once, an alert with
 * the reason. A job submitted with allow_unplaceable is flagged too; the
 * alert resolves once nothing unplaceable is queued. */
static void test_a_config_change_flags_queued_jobs(void **state)
{
	struct harness_server *s = harness_serve(OFFERS "[offer.big]\ngpus = 1\nvram_gb = 80\nprice_ondemand = 9.0\n", 0);
	char *conf, *cut;
	int64_t id;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"], \"min_vram_gb\": 80}");
	assert_false(unplaceable_firing(s, ""));
	assert_int(harness_server_stop(s), 0);
	conf = harness_read_file(s->conf, NULL);
	assert_non_null(cut = strstr(conf, "[offer.big]"));
	*cut = '\0';
	harness_write_file(s->conf, conf);
	free(conf);
	harness_server_start(s);
	WAIT_FOR(s, 30000, unplaceable_firing(s, "lane standard: 1 queued jobs nothing can run: " VRAM_80),
		 "EbbJobsUnplaceable did not fire within 30 s");
	/* Another, allowed in: counted with it. */
	harness_submit(s, "{\"command\": [\"true\"], \"min_vram_gb\": 80, \"allow_unplaceable\": true}");
	WAIT_FOR(s, 30000, unplaceable_firing(s, ": 2 queued jobs"),
		 "EbbJobsUnplaceable did not count the second job within 30 s");
	/* Cancelled, nothing unplaceable is queued: resolved. */
	for (int k = 0; k < 2; k++)
		json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/cancel", (long long)id + k), NULL, 200));
	WAIT_FOR(s, 30000, !unplaceable_firing(s, ""), "EbbJobsUnplaceable did not resolve within 30 s");
}

/* The decisions of kind unplaceable whose reason has has. */
static int unplaceable_decisions(struct harness_server *s, const char *has)
{
	json_t *r = harness_get(s, "/v1/decisions?limit=1000"), *d;
	int n = 0;
	size_t i;

	json_array_foreach(json_object_get(r, "decisions"), i, d) {
		n += strcmp(JSTR(d, "kind"), "unplaceable") == 0 && strstr(JSTR(d, "reason"), has) != NULL;
	}
	json_decref(r);
	return n;
}

/* With a scaler, the restart's first run records a decision for the
 * queued class nothing can run now, once: a later run that finds a
 * second such class records that one alone. max_instances = 0: nothing
 * launches, so the jobs stay queued. */
static void test_a_config_change_is_a_decision(void **state)
{
	struct harness_server *s = harness_serve(OFFERS "[offer.big]\ngpus = 1\nvram_gb = 80\nprice_ondemand = 9.0\n"
						 "[provider]\nkind = local\n[local]\ngpus = 0\n"
						 "[scaler]\ninterval = 200ms\nmax_instances = 0\n",
						 0);
	char *conf, *cut, *rest;

	(void)state;
	harness_own_workers(s);
	harness_submit(s, "{\"command\": [\"true\"], \"min_vram_gb\": 80}");
	assert_int(unplaceable_decisions(s, ""), 0);
	assert_int(harness_server_stop(s), 0);
	conf = harness_read_file(s->conf, NULL);
	assert_non_null(cut = strstr(conf, "[offer.big]"));
	assert_non_null(rest = strstr(cut, "[provider]"));
	memmove(cut, rest, strlen(rest) + 1);
	harness_write_file(s->conf, conf);
	free(conf);
	harness_server_start(s);
	WAIT_FOR(s, 30000, unplaceable_decisions(s, "lane standard: queued jobs of 1 GPU(s) with 80 GB each"
						 " that nothing can run: " VRAM_80) == 1,
		 "no unplaceable decision within 30 s of the restart");
	harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 2, \"min_vram_gb\": 80, \"allow_unplaceable\": true}");
	WAIT_FOR(s, 30000, unplaceable_decisions(s, "of 2 GPU(s) with 80 GB each") == 1,
		 "no unplaceable decision for the second class within 30 s");
	assert_int(unplaceable_decisions(s, "of 1 GPU(s) with 80 GB each"), 1);
}

/* Without offers in the config, nothing is refused. */
static void test_no_offers_refuse_nothing(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);

	(void)state;
	harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 64, \"min_vram_gb\": 4096}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_submit_refused_with_the_reason, harness_cleanup),
		cmocka_unit_test_teardown(test_a_registered_worker_makes_it_placeable, harness_cleanup),
		cmocka_unit_test_teardown(test_a_config_change_flags_queued_jobs, harness_cleanup),
		cmocka_unit_test_teardown(test_a_config_change_is_a_decision, harness_cleanup),
		cmocka_unit_test_teardown(test_no_offers_refuse_nothing, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
