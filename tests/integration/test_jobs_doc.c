/* docs/JOBS.md's example jobs do what the page says, as it shows them:
 * each is cut from the page, run by a real `ebb worker` against a real
 * serve, stopped half-way (the worker's SIGTERM: the job checkpoints and
 * is interrupted) and run again by another worker, which must start at
 * the checkpoint (EBB_CHECKPOINT) and end the job with all its items,
 * each item done once, and its result (the items it did). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

#define ITEMS 100

/* The page's fenced block that starts with "```LANG\n" and then first
 * line, into a new file at path, executable. Fails when the page has no
 * such block, or more than one. */
static void example(const char *lang, const char *first, const char *path)
{
	const char *src = getenv("EBB_SRC");
	char *page = harness_read_file(harness_fmt("%s/docs/JOBS.md", src ? src : "."), NULL);
	const char *open = harness_fmt("```%s\n%s\n", lang, first), *body, *end, *text;

	if (!page)
		fail_msg("docs/JOBS.md not found (EBB_SRC is the source tree; make test sets it)");
	if (!(body = strstr(page, open)))
		fail_msg("docs/JOBS.md has no example starting %s", open);
	if (strstr(body + 1, open))
		fail_msg("docs/JOBS.md has two examples starting %s", open);
	body += strlen("```") + strlen(lang) + 1;
	if (!(end = strstr(body, "\n```\n")))
		fail_msg("docs/JOBS.md: the example starting %s never ends", open);
	text = harness_fmt("%.*s\n", (int)(end - body), body);
	harness_write_file(path, text);
	if (chmod(path, 0755) != 0)
		fail_msg("chmod %s", path);
	free(page);
}

/* What the file of items holds is "item 0" to "item ITEMS-1", each once,
 * in order: the second run started where the first one's checkpoint said. */
static void assert_each_item_once(const char *out)
{
	char *text = harness_read_file(out, NULL), *line, *save = NULL;
	int n = 0;

	if (!text)
		fail_msg("the job wrote no %s", out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		if (strcmp(line, harness_fmt("item %d", n)) != 0)
			fail_msg("%s: line %d is '%s', expected 'item %d'", out, n + 1, line, n);
	}
	assert_int(n, ITEMS);
	free(text);
}

static int64_t job_int(struct harness_server *s, int64_t id, const char *path)
{
	json_t *j = harness_get_job(s, id);
	int64_t v = JINT(j, path);

	json_decref(j);
	return v;
}

/* Submits body, lets a worker run the job until serve has a checkpoint,
 * stops that worker, then lets another run the job to its end. */
static void run_stop_resume(struct harness_server *s, const char *dir, const char *body, const char *out)
{
	int64_t id = harness_submit(s, body), stopped_at;
	pid_t pid = harness_hand_worker(s, harness_fmt("%s/worker1.log", dir), NULL, NULL);
	int st;
	json_t *j;

	/* Progress and checkpoints reach serve while the job runs. */
	WAIT_FOR(s, 30000, job_int(s, id, "items_done") >= 10, "job %lld made no checkpoint within 30 s",
		 (long long)id);
	st = harness_stop_hand_worker(s, pid, 15000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "queued");
	assert_int(JINT(j, "interruptions"), 1);
	stopped_at = JINT(j, "items_done");
	if (stopped_at >= ITEMS)
		fail_msg("the job ended before its worker was stopped: no resume to see (the machine is too slow?)");
	/* Its last checkpoint, on SIGTERM, is where it stopped. */
	assert_string_equal(JSTR(j, "checkpoint"), harness_fmt("%lld", (long long)stopped_at));
	json_decref(j);
	assert_int(harness_file_lines(out, NULL), stopped_at);

	pid = harness_hand_worker(s, harness_fmt("%s/worker2.log", dir), NULL, NULL);
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed within 60 s",
		 (long long)id);
	harness_stop_hand_worker(s, pid, 15000);
	j = harness_get_job(s, id);
	assert_int(JINT(j, "items_done"), ITEMS);
	assert_int(JINT(j, "attempts"), 1); /* the interrupted run did not count */
	assert_int(JINT(j, "items_lost"), 0);
	assert_string_equal(JSTR(j, "checkpoint"), harness_fmt("%d", ITEMS));
	assert_int(JINT(j, "result.items"), ITEMS);
	json_decref(j);
	assert_each_item_once(out);
}

static void shell_example(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	const char *dir = harness_tmpdir();
	char script[4200], out[4200];

	(void)state;
	snprintf(script, sizeof script, "%s/count.sh", dir);
	snprintf(out, sizeof out, "%s/count.txt", dir);
	example("sh", "#!/bin/sh", script);
	run_stop_resume(s, dir, harness_fmt("{\"command\":[\"%s\",\"%s\"],\"items\":%d}", script, out, ITEMS), out);
	harness_server_free(s);
}

static void python_example(void **state)
{
	struct harness_server *s;
	const char *dir = harness_tmpdir();
	char script[4200], out[4200];
	struct harness_run r;

	(void)state;
	if (harness_exec(&r, (const char *const[]){"python3", "-c", "pass", NULL}, NULL, NULL) != 0) {
		harness_run_free(&r);
		print_message("python3 cannot be run here: the Python example is not run\n");
		skip();
	}
	harness_run_free(&r);
	s = harness_serve(NULL, 0);
	snprintf(script, sizeof script, "%s/count.py", dir);
	snprintf(out, sizeof out, "%s/count.txt", dir);
	example("python", "#!/usr/bin/env python3", script);
	run_stop_resume(s, dir,
			harness_fmt("{\"command\":[\"%s\"],\"payload\":{\"out\":\"%s\"},\"items\":%d}", script, out, ITEMS),
			out);
	harness_server_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shell_example),
		cmocka_unit_test(python_example),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
