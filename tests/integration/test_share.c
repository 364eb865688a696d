/* GPUs shared by small services, end to end: a real `ebb serve` whose
 * config gives two types gpu_share = 1/2, and a real `ebb worker --gpus 1`
 * started by hand on GPU 7 (its CUDA_VISIBLE_DEVICES).
 *
 * - A job of each type runs at once on the one GPU, both told
 *   CUDA_VISIBLE_DEVICES=7: each writes that it started and then waits for
 *   a file the test writes only once both have, so neither can end first.
 * - A third half-share job waits while the GPU is full, and takes the half
 *   the first one leaves when it ends.
 * - A plain 1-GPU job submitted before that third one does not go onto the
 *   half-used GPU (it would have been leased first: the lease order is
 *   the order of submission): it runs once both halves are free.
 * - On an instance the scaler launched, two halves each pay half the GPU's
 *   price while they run, and the report's total is the instance's bill,
 *   to the cent.
 *
 * The worker runs in real time; every wait polls with a deadline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* A job of type that writes the GPUs it sees to dir/started.ID (written
 * aside, then renamed: whole when found), then waits for dir/end.ID or
 * dir/end (all). */
static int64_t submit_typed(struct harness_server *s, const char *dir, const char *type)
{
	return harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"echo $CUDA_VISIBLE_DEVICES > %s/seen.$EBB_JOB_ID;"
					     " mv %s/seen.$EBB_JOB_ID %s/started.$EBB_JOB_ID;"
					     " until [ -e %s/end ] || [ -e %s/end.$EBB_JOB_ID ]; do sleep 0.05; done\"],"
					     " \"type\": \"%s\", \"est_s\": 30}",
					     dir, dir, dir, dir, dir, type));
}

static int started(const char *dir, int64_t id)
{
	return access(harness_fmt("%s/started.%lld", dir, (long long)id), F_OK) == 0;
}

/* The CUDA_VISIBLE_DEVICES job id saw, in buf. */
static const char *seen(const char *dir, int64_t id, char *buf, size_t size)
{
	char *text = harness_read_file(harness_fmt("%s/started.%lld", dir, (long long)id), NULL);

	snprintf(buf, size, "%s", text ? text : "(unread)");
	buf[strcspn(buf, "\n")] = '\0';
	free(text);
	return buf;
}

static void test_two_halves_share_one_gpu(void **state)
{
	struct harness_server *s = harness_serve("[type.embed]\ngpu_share = 1/2\nvram_gb = 10\n"
						 "[type.asr]\ngpu_share = 0.5\nvram_gb = 10\n",
						 0);
	const char *dir = harness_tmpdir();
	char a[32], b[32], c[32], p[32];
	int64_t embed, asr, plain, third;
	pid_t pid;

	(void)state;
	embed = submit_typed(s, dir, "embed");
	asr = submit_typed(s, dir, "asr");
	plain = submit_typed(s, dir, "default");
	third = submit_typed(s, dir, "embed");
	pid = harness_hand_worker(s, harness_fmt("%s/worker.log", dir), "7", "--gpus", "1", "--vram", "24", NULL);

	WAIT_FOR(s, 30000, started(dir, embed) && started(dir, asr), "the two half-share jobs have not both started");
	if (strcmp(seen(dir, embed, a, sizeof a), "7") != 0 || strcmp(seen(dir, asr, b, sizeof b), "7") != 0)
		harness_fail_with_log(s, "the halves saw CUDA_VISIBLE_DEVICES '%s' and '%s', not both 7", a, b);
	assert_true(harness_job_is(s, embed, "leased") && harness_job_is(s, asr, "leased"));
	/* The GPU is full: neither the plain job nor the third half runs. */
	assert_true(harness_job_is(s, plain, "queued") && harness_job_is(s, third, "queued"));

	/* One half ends: the third takes it, the plain job ahead of it does not. */
	harness_write_file(harness_fmt("%s/end.%lld", dir, (long long)embed), "");
	WAIT_FOR(s, 30000, started(dir, third), "the third half-share job has not started once a half was free");
	assert_true(harness_job_is(s, embed, "succeeded"));
	if (strcmp(seen(dir, third, c, sizeof c), "7") != 0)
		harness_fail_with_log(s, "the third half saw CUDA_VISIBLE_DEVICES '%s', not 7", c);
	if (started(dir, plain) || !harness_job_is(s, plain, "queued"))
		harness_fail_with_log(s, "the plain 1-GPU job went onto the half-used GPU");

	/* Both halves end: the GPU is whole again, and the plain job takes it. */
	harness_write_file(harness_fmt("%s/end.%lld", dir, (long long)asr), "");
	harness_write_file(harness_fmt("%s/end.%lld", dir, (long long)third), "");
	WAIT_FOR(s, 30000, started(dir, plain), "the plain job has not started once the GPU was whole again");
	assert_true(harness_job_is(s, asr, "succeeded") && harness_job_is(s, third, "succeeded"));
	if (strcmp(seen(dir, plain, p, sizeof p), "7") != 0)
		harness_fail_with_log(s, "the plain job saw CUDA_VISIBLE_DEVICES '%s', not 7", p);
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_job_is(s, plain, "succeeded"), "the plain job did not succeed");
	assert_true(WIFEXITED(harness_stop_hand_worker(s, pid, 15000)));
	assert_int(harness_server_stop(s), 0);
}

/* Memory is a guard too: two halves whose vram_gb add up past the
 * worker's --vram-gb do not share its GPU; the second runs once the first
 * ends. */
static void test_vram_keeps_shares_apart(void **state)
{
	struct harness_server *s = harness_serve("[type.big]\ngpu_share = 1/2\nvram_gb = 16\n", 0);
	const char *dir = harness_tmpdir();
	int64_t first, second;
	pid_t pid;

	(void)state;
	first = submit_typed(s, dir, "big");
	second = submit_typed(s, dir, "big");
	pid = harness_hand_worker(s, harness_fmt("%s/worker.log", dir), "0", "--gpus", "1", "--vram", "24", NULL);
	WAIT_FOR(s, 30000, started(dir, first), "the first job has not started");
	assert_true(harness_job_is(s, second, "queued"));
	harness_write_file(harness_fmt("%s/end.%lld", dir, (long long)first), "");
	WAIT_FOR(s, 30000, started(dir, second), "the second job has not started once the first ended");
	assert_true(harness_job_is(s, first, "succeeded"));
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_job_is(s, second, "succeeded"), "the second job did not succeed");
	assert_true(WIFEXITED(harness_stop_hand_worker(s, pid, 15000)));
	assert_int(harness_server_stop(s), 0);
}

/* A 1-GPU instance launched by the scaler (local provider) at $3.6/h runs
 * two half-share jobs at once: each costs half the price for its run
 * ($0.0005 a second), by hand; the report's total is the bill. */
static void test_halves_pay_half_and_the_bill_adds_up(void **state)
{
	struct harness_server *s = harness_serve("[provider]\nkind = local\norphan_timeout = 20s\n"
						 "[local]\ngpus = 0\n"
						 "[offer.one]\ngpus = 1\nprice_ondemand = 3.6\nbilling = per-second\n"
						 "billing_minimum = 1s\n"
						 "[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 1s\n"
						 "[type.embed]\ngpu_share = 1/2\n",
						 0);
	const char *dir = harness_tmpdir();
	int64_t ids[2];
	double jobs_cost = 0;
	json_t *f, *i, *r;

	(void)state;
	harness_own_workers(s);
	ids[0] = submit_typed(s, dir, "embed");
	ids[1] = submit_typed(s, dir, "embed");
	WAIT_FOR(s, 30000, started(dir, ids[0]) && started(dir, ids[1]), "the two halves have not both started");
	assert_int(harness_live_instances(s, NULL), 1);
	harness_write_file(harness_fmt("%s/end", dir), "");
	WAIT_FOR(s, 20000, harness_job_is(s, ids[0], "succeeded") && harness_job_is(s, ids[1], "succeeded"),
		 "the two halves did not both succeed");
	WAIT_FOR(s, 20000, harness_live_instances(s, NULL) == 0, "the instance is still up after its jobs");

	f = harness_get(s, "/v1/fleet?all=1");
	i = json_array_get(harness_jget(f, "instances"), 0);
	assert_int(json_array_size(harness_jget(f, "instances")), 1);
	r = harness_get(s, "/v1/report?by=type");
	if (fabs(JNUM(r, "total.cost_usd") - JNUM(i, "cost_usd")) > 0.005 ||
	    fabs(JNUM(r, "total.seconds.billed") - JNUM(i, "billed_s")) > 0.0005)
		harness_fail_with_log(s, "report: $%.6f for %.3f s; the instance was billed $%.6f for %.3f s",
				      JNUM(r, "total.cost_usd"), JNUM(r, "total.seconds.billed"), JNUM(i, "cost_usd"),
				      JNUM(i, "billed_s"));
	for (int k = 0; k < 2; k++) {
		json_t *j = harness_get_job(s, ids[k]);
		double ran_s = JNUM(j, "finished_at") - JNUM(j, "started_at"), want = ran_s * 3.6 / 3600 / 2;
		jobs_cost += JNUM(j, "cost_usd");
		if (fabs(JNUM(j, "cost_usd") - want) > 1e-5)
			harness_fail_with_log(s, "job %lld ran %.3f s on half a GPU: cost $%.6f, expected $%.6f",
					      (long long)ids[k], ran_s, JNUM(j, "cost_usd"), want);
		json_decref(j);
	}
	if (jobs_cost > JNUM(r, "total.cost_usd") + 1e-9)
		harness_fail_with_log(s, "the halves' $%.6f is over the total $%.6f", jobs_cost, JNUM(r, "total.cost_usd"));
	json_decref(r);
	json_decref(f);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_two_halves_share_one_gpu, harness_cleanup),
		cmocka_unit_test_teardown(test_vram_keeps_shares_apart, harness_cleanup),
		cmocka_unit_test_teardown(test_halves_pay_half_and_the_bill_adds_up, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
