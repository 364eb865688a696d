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
 * - A whole-GPU job leased onto a shared GPU's room (a race between
 *   serves, played by a stand-in for serve) is not run with no GPU: the
 *   worker's next lease request leaves it out of `running`.
 *
 * The worker runs in real time; every wait polls with a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "receiver.h"

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

/* The requests r has had so far whose line starts with prefix, and the
 * index of the nth of them (from 1; 0: none wanted) in *at (-1: not yet). */
static int requests_to(struct receiver *r, const char *prefix, int nth, int *at)
{
	int n = 0, count = receiver_count(r);

	*at = -1;
	for (int i = 0; i < count; i++) {
		char *line = receiver_line(r, i);
		if (line && strncmp(line, prefix, strlen(prefix)) == 0 && ++n == nth)
			*at = i;
		free(line);
	}
	return n;
}

static void test_whole_gpu_job_on_shared_room_is_given_back(void **state)
{
	struct receiver *r = receiver_start();
	const char *dir = harness_tmpdir(), *log = harness_fmt("%s/worker.log", dir);
	char base[64], *text;
	int at = -1;
	json_t *body;
	pid_t pid;

	(void)state;
	snprintf(base, sizeof base, "%.*s", (int)(strlen(receiver_url(r)) - strlen("/hook")), receiver_url(r));
	receiver_script(r, "POST /v1/workers/register", 200,
			"{\"heartbeat_s\": 60, \"gpu_shares\": {\"small\": {\"gpu_share\": 0.5, \"vram_gb\": 10}}}");
	/* A half-share job that runs until the test ends it, then a whole-GPU
	 * job onto the half left, then no reply (a long-poll). */
	receiver_script(r, "POST /v1/lease", 200,
			harness_fmt("{\"job\": {\"id\": 1, \"state\": \"leased\", \"type\": \"small\", \"gpus\": 1,"
				    " \"attempts\": 1, \"timeout_s\": 600, \"lease\": {\"token\": 1}, \"command\": [\"sh\", \"-c\","
				    " \"echo $CUDA_VISIBLE_DEVICES > %s/seen.1; until [ -e %s/end ]; do sleep 0.05; done\"]}}",
				    dir, dir));
	receiver_script(r, "POST /v1/lease", 200,
			harness_fmt("{\"job\": {\"id\": 2, \"state\": \"leased\", \"type\": \"big\", \"gpus\": 1,"
				    " \"attempts\": 1, \"timeout_s\": 600, \"lease\": {\"token\": 1}, \"command\": [\"sh\", \"-c\","
				    " \"echo \\\"[$CUDA_VISIBLE_DEVICES]\\\" > %s/seen.2\"]}}",
				    dir));
	receiver_script(r, "POST /v1/lease", 0, "");
	receiver_script(r, "GET /v1/jobs/", 0, "");
	receiver_script(r, "POST /v1/jobs/", 200, "{}");

	if ((pid = fork()) < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("CUDA_VISIBLE_DEVICES", "7", 1);
		execl(harness_ebb_bin(), "ebb", "worker", "--server", base, "--name", "hand", "--gpus", "1", "--vram",
		      "24", "--grace", "200ms", (char *)NULL);
		_exit(127);
	}
	for (int64_t until = harness_now_ms() + 30000; requests_to(r, "POST /v1/lease ", 3, &at) < 3;) {
		if (harness_now_ms() > until) {
			text = harness_read_file(log, NULL);
			fail_msg("the worker has not asked for a third lease; its log:\n%s", text ? text : "");
		}
		harness_sleep_ms(50);
	}
	body = receiver_body(r, at);
	text = json_dumps(json_object_get(body, "running"), JSON_COMPACT);
	/* The half-share job runs on the GPU; the whole one is not among
	 * the jobs the worker runs, so serve takes it back. */
	if (!text || strcmp(text, "[1]") != 0) {
		char *worker_log = harness_read_file(log, NULL);
		fail_msg("the lease request after the whole-GPU job names running %s, not [1]; the worker's log:\n%s",
			 text ? text : "(none)", worker_log ? worker_log : "");
	}
	free(text);
	json_decref(body);
	assert_int_equal(requests_to(r, "POST /v1/jobs/2/", 0, &(int){0}), 0);
	assert_int_equal(access(harness_fmt("%s/seen.2", dir), F_OK), -1);
	assert_true(harness_file_lines(log, "job given back: no GPU free for it") >= 1);
	text = harness_read_file(harness_fmt("%s/seen.1", dir), NULL);
	assert_non_null(text);
	assert_string_equal(text, "7\n");
	free(text);

	harness_write_file(harness_fmt("%s/end", dir), "");
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	receiver_stop(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_two_halves_share_one_gpu, harness_cleanup),
		cmocka_unit_test_teardown(test_vram_keeps_shares_apart, harness_cleanup),
		cmocka_unit_test_teardown(test_halves_pay_half_and_the_bill_adds_up, harness_cleanup),
		cmocka_unit_test_teardown(test_whole_gpu_job_on_shared_room_is_given_back, harness_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
