/* A data directory out of space: serve's data on a small tmpfs the test
 * mounts and fills. Writes get 507 storage_full, naming the problem, and
 * nothing is kept of them; reads go on; what serve acknowledged before is
 * all there; once space is freed, serve takes writes again by itself, and
 * a kill -9 after it loses nothing; and the scaler asks the provider for
 * no launch whose record could not be saved. Mounting needs root
 * (CAP_SYS_ADMIN): without it the test skips, saying so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MAX_ACKED 20000

static char mnt[4200];
static int mounted;

/* Lazily: a serve still running (a test that failed) may hold its files.
 * Before the harness removes the temp dir, which holds the mount point. */
static int unmount(void **state)
{
	if (mounted && umount2(mnt, MNT_DETACH) == 0)
		mounted = 0;
	return harness_cleanup(state);
}

/* Fills the file system of dir: a file written until ENOSPC. */
static void fill(const char *path)
{
	static char chunk[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = write(fd, chunk, sizeof chunk)) > 0)
		;
	assert_int(errno, ENOSPC);
	close(fd);
}

/* A submit with its label as argument and idempotency key: its status,
 * and its id in *id when acknowledged. */
static int submit(struct harness_server *s, int i, int64_t *id, json_t **reply)
{
	int st = harness_call(s, "POST", "/v1/jobs",
			      harness_fmt("{\"command\": [\"echo\", \"job-%d\"], \"idempotency_key\": \"k-%d\"}", i, i),
			      reply);

	if (st == 201)
		*id = JINT(*reply, "id");
	return st;
}

/* A 4 MiB tmpfs at mnt, in the test's temp dir; skips without root. */
static void mount_small(void)
{
	harness_sqlite_only("the store on the full file system is SQLite's file; PostgreSQL's disk is its server's");
	snprintf(mnt, sizeof mnt, "%s/mnt", harness_tmpdir());
	assert_int(mkdir(mnt, 0700), 0);
	if (mount("ebb-test", mnt, "tmpfs", 0, "size=4m") != 0) {
		print_message("cannot mount a tmpfs (%s): needs root; skipped\n", strerror(errno));
		skip();
	}
	mounted = 1;
}

static void check_acked(struct harness_server *s, const int64_t *acked, int n)
{
	for (int i = 0; i < n; i++) {
		json_t *r = harness_get_job(s, acked[i]);
		assert_string_equal(JSTR(r, "command.1"), harness_fmt("job-%d", i));
		json_decref(r);
	}
}

static void writes_refused_until_space_returns(void **state)
{
	static int64_t acked[MAX_ACKED];
	struct harness_server *s;
	char filler[4300], done[64];
	json_t *r = NULL;
	int n = 0, st = 201;
	int64_t id = 0, leased, token;

	mount_small();
	s = harness_serve(harness_fmt("[server]\ndata_dir = %s/data\n", mnt), 0);
	for (; n < 20; n++)
		assert_int(submit(s, n, &acked[n], &r), 201), json_decref(r);
	/* One job leased before the disk fills: its end is written after. */
	r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 0}", 200);
	leased = JINT(r, "job.id");
	token = JINT(r, "job.lease.token");
	json_decref(r);
	snprintf(done, sizeof done, "{\"lease_token\": %lld}", (long long)token);

	snprintf(filler, sizeof filler, "%s/filler", mnt);
	fill(filler);
	/* SQLite may still have room in its log: writes go on until it
	 * must grow, each acknowledged one kept. */
	while (n < MAX_ACKED && (st = submit(s, n, &id, &r)) == 201) {
		acked[n++] = id;
		json_decref(r);
	}
	assert_error(st, r, 507, "storage_full", NULL);
	assert_contains(JSTR(r, "error.message"), "out of space");
	json_decref(r);
	/* Every write is refused the same way, a worker's too; reads go on. */
	st = harness_call(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)leased), done, &r);
	assert_error(st, r, 507, "storage_full", NULL);
	json_decref(r);
	assert_true(harness_job_is(s, leased, "leased"));
	check_acked(s, acked, n);

	/* Space returns: no restart, the next write is taken. */
	assert_int(unlink(filler), 0);
	assert_int(submit(s, n, &acked[n], &r), 201);
	json_decref(r);
	n++;
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)leased), done, 200));
	assert_true(harness_job_is(s, leased, "succeeded"));
	/* Nothing of the refused writes was kept. */
	assert_int(harness_stat(s, "states.queued") + harness_stat(s, "states.succeeded"), n);

	harness_server_kill(s);
	harness_server_start(s);
	check_acked(s, acked, n);
	assert_true(harness_job_is(s, leased, "succeeded"));
	assert_int(harness_server_stop(s), 0);
	unmount(state);
}

static int log_says(struct harness_server *s, const char *what)
{
	char *log = harness_read_file(s->log, NULL);
	int found = log && strstr(log, what);

	free(log);
	return found;
}

/* The scaler's launch is decided while the disk is full: its record's
 * commit fails, and no worker may start (one did, and the next launch took
 * its instance id again: two workers as one instance ran a job twice at
 * once, in the soak). Once space returns, the work is launched for and
 * done. The scaler runs on the test clock's time (ten minutes apart), so that
 * it decides only when the test moves the clock. */
static void a_launch_waits_for_its_record(void **state)
{
	struct harness_server *s;
	char filler[4300];
	pid_t pids[8];
	json_t *r = NULL;
	int64_t job;

	(void)state;
	mount_small();
	s = harness_serve(harness_fmt("[server]\ndata_dir = %s/data\n"
				      "[provider]\nkind = local\n[local]\ngpus = 0,1\n"
				      "[scaler]\ninterval = 10m\n",
				      mnt),
			  HARNESS_TEST_CLOCK);
	harness_own_workers(s);
	r = harness_call_ok(s, "POST", "/v1/jobs", "{\"command\": [\"true\"]}", 201);
	job = JINT(r, "id");
	json_decref(r);

	snprintf(filler, sizeof filler, "%s/filler", mnt);
	fill(filler);
	/* SQLite may still have room in its log: fill it with submits. */
	while (harness_call(s, "POST", "/v1/jobs", "{\"command\": [\"true\"], \"delay_s\": 86400}", &r) == 201)
		json_decref(r);
	json_decref(r);
	harness_advance(s, 600 * 1000);
	WAIT_FOR(s, 15000, log_says(s, "launch not made: its record was not saved"),
		 "the scaler's launch on a full disk was not dropped");
	assert_int(harness_worker_pids(s->url, 0, pids, 8), 0);
	assert_true(harness_job_is(s, job, "queued"));

	assert_int(unlink(filler), 0);
	harness_advance(s, 600 * 1000);
	WAIT_FOR(s, 30000, harness_job_is(s, job, "succeeded"), "job %lld not run once space returned",
		 (long long)job);
	assert_int(harness_server_stop(s), 0);
	unmount(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(writes_refused_until_space_returns, unmount),
		cmocka_unit_test_teardown(a_launch_waits_for_its_record, unmount),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
