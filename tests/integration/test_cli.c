/* The ebb CLI as a user runs it, against a real serve: what it prints, its
 * exit codes, and one line on stderr for every error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct harness_server *srv;

static int start(void **state)
{
	(void)state;
	srv = harness_serve(NULL, 0);
	return 0;
}

static int stop(void **state)
{
	(void)state;
	return harness_cleanup(NULL);
}

/* A failed command: its status, nothing on stdout, and one line naming
 * the cause on stderr; a usage error (2) adds one line, where to look, and
 * not the whole help. */
static void assert_failed(struct harness_run *r, int status, const char *cmd, const char *cause)
{
	const char *nl = strchr(r->err, '\n');

	if (r->status != status)
		print_error("stderr: %s\n", r->err);
	assert_int(r->status, status);
	assert_string_equal(r->out, "");
	assert_true(strncmp(r->err, harness_fmt("ebb %s: ", cmd), strlen(harness_fmt("ebb %s: ", cmd))) == 0);
	assert_contains(r->err, cause);
	assert_non_null(nl);
	if (status == 1)
		assert_true(nl[1] == '\0');
	else
		assert_string_equal(nl + 1, harness_fmt("see 'ebb %s --help'\n", cmd));
}

static int64_t submit(const char *word)
{
	struct harness_run r;
	int64_t id;

	harness_ebb(&r, srv, "submit", "--", "echo", word, NULL);
	if (r.status != 0)
		fail_msg("ebb submit: status %d: %s", r.status, r.err);
	id = strtoll(r.out, NULL, 10);
	assert_true(id > 0);
	assert_string_equal(r.out, harness_fmt("%lld\n", (long long)id)); /* the id, for scripts */
	harness_run_free(&r);
	return id;
}

static void submit_and_show_json(void **state)
{
	struct harness_run r;
	json_t *v;
	int64_t id;

	(void)state;
	harness_ebb(&r, srv, "submit", "--json", "--", "echo", "hi", NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.err, "");
	v = harness_json(r.out);
	id = JINT(v, "id");
	assert_string_equal(JSTR(v, "state"), "queued");
	assert_string_equal(JSTR(v, "command.0"), "echo");
	assert_string_equal(JSTR(v, "command.1"), "hi");
	json_decref(v);
	harness_run_free(&r);

	harness_ebb(&r, srv, "jobs", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_int(JINT(v, "jobs.0.id"), id);
	assert_string_equal(JSTR(v, "jobs.0.state"), "queued");
	json_decref(v);
	harness_run_free(&r);

	harness_ebb(&r, srv, "job", harness_fmt("%lld", (long long)id), "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_int(JINT(v, "id"), id);
	assert_string_equal(JSTR(v, "state"), "queued");
	json_decref(v);
	harness_run_free(&r);
}

static void tables_for_people(void **state)
{
	int64_t id = submit("two words");
	struct harness_run r;

	(void)state;
	harness_ebb(&r, srv, "jobs", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "ID");
	assert_contains(r.out, "STATE");
	assert_contains(r.out, "echo 'two words'"); /* argv as a shell reads it back */
	harness_run_free(&r);
	harness_ebb(&r, srv, "job", harness_fmt("%lld", (long long)id), NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "queued");
	assert_contains(r.out, harness_fmt("%lld", (long long)id));
	harness_run_free(&r);
}

static void submit_options(void **state)
{
	struct harness_run r;
	json_t *v;

	(void)state;
	harness_ebb(&r, srv, "submit", "--json", "--lane", "express", "--priority", "5", "--gpus", "2",
		    "--vram", "40", "--items", "100", "--type", "train", "--delay", "10m",
		    "--max-attempts", "4", "--timeout", "2h", "--est", "15m", "--idempotency-key", "k-1",
		    "--payload", "{\"lr\": 0.1}", "--", "python", "train.py", NULL);
	if (r.status != 0)
		print_error("stderr: %s\n", r.err);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_string_equal(JSTR(v, "lane"), "express");
	assert_int(JINT(v, "priority"), 5);
	assert_int(JINT(v, "gpus"), 2);
	assert_int(JINT(v, "min_vram_gb"), 40);
	assert_int(JINT(v, "items"), 100);
	assert_string_equal(JSTR(v, "type"), "train");
	assert_string_equal(JSTR(v, "state"), "delayed");
	assert_int(JINT(v, "max_attempts"), 4);
	assert_int(JINT(v, "timeout_s"), 7200);
	assert_int(JINT(v, "est_s"), 900);
	assert_string_equal(JSTR(v, "idempotency_key"), "k-1");
	assert_true(json_real_value(harness_jget(v, "payload.lr")) == 0.1);
	assert_string_equal(JSTR(v, "command.1"), "train.py");
	harness_run_free(&r);
	harness_ebb(&r, srv, "job", harness_fmt("%lld", (long long)JINT(v, "id")), NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "estimate:        15m");
	assert_contains(r.out, "timeout:         2h");
	json_decref(v);
	harness_run_free(&r);
}

static void submit_refused(void **state)
{
	struct harness_run r;
	json_t *v = NULL;
	int64_t before;

	(void)state;
	assert_int(harness_call(srv, "GET", "/v1/stats", NULL, &v), 200);
	before = JINT(v, "states.queued");
	json_decref(v);

	/* Caught before the call, naming the flag. */
	harness_ebb(&r, srv, "submit", "--priority", "5000", "--", "true", NULL);
	assert_failed(&r, 2, "submit", "--priority");
	harness_run_free(&r);
	harness_ebb(&r, srv, "submit", "--delay", "1500ms", "--", "true", NULL);
	assert_failed(&r, 2, "submit", "--delay");
	harness_run_free(&r);
	harness_ebb(&r, srv, "submit", "--payload", "{oops", NULL);
	assert_failed(&r, 2, "submit", "--payload");
	harness_run_free(&r);
	/* Refused by the server, its reason in one line. */
	harness_ebb(&r, srv, "submit", "--lane", "warp", "--", "true", NULL);
	assert_failed(&r, 1, "submit", "lane");
	harness_run_free(&r);

	assert_int(harness_call(srv, "GET", "/v1/stats", NULL, &v), 200);
	assert_int(JINT(v, "states.queued"), before);
	json_decref(v);
}

static void cancel(void **state)
{
	int64_t id = submit("x");
	const char *ids = harness_fmt("%lld", (long long)id);
	struct harness_run r;
	json_t *v = NULL;

	(void)state;
	harness_ebb(&r, srv, "cancel", ids, NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, ids);
	harness_run_free(&r);
	assert_int(harness_call(srv, "GET", harness_fmt("/v1/jobs/%s", ids), NULL, &v), 200);
	assert_string_equal(JSTR(v, "state"), "cancelled");
	json_decref(v);

	harness_ebb(&r, srv, "cancel", ids, NULL);
	assert_failed(&r, 1, "cancel", "already_finished");
	harness_run_free(&r);
}

static void errors(void **state)
{
	struct harness_run r;

	(void)state;
	harness_ebb(&r, srv, "job", "999999", NULL);
	assert_failed(&r, 1, "job", "no job 999999");
	harness_run_free(&r);
	harness_ebb(&r, srv, "cancel", "999999", NULL);
	assert_failed(&r, 1, "cancel", "404");
	harness_run_free(&r);
	harness_ebb(&r, srv, "job", "abc", NULL);
	assert_failed(&r, 2, "job", "not a job id");
	harness_run_free(&r);
	harness_ebb(&r, srv, "job", NULL);
	assert_failed(&r, 2, "job", "which job");
	harness_run_free(&r);
	/* running is leased to people (test_attempts); a state that is no
	 * state is refused. */
	harness_ebb(&r, srv, "jobs", "--state", "runing", NULL);
	assert_int(r.status == 1 || r.status == 2, 1);
	assert_contains(r.err, "state");
	harness_run_free(&r);
	harness_ebb(&r, srv, "jobs", "--bogus", NULL);
	assert_failed(&r, 2, "jobs", "--bogus");
	harness_run_free(&r);
	/* Under ASan, also that nothing is left allocated on the way out. */
	harness_ebb(&r, srv, "submit", "--jobs", "/nonexistent/jobs.jsonl", NULL);
	assert_failed(&r, 2, "submit", "--jobs /nonexistent/jobs.jsonl: ");
	harness_run_free(&r);
	/* -s overrides EBB_SERVER: nothing listens on port 1. */
	harness_ebb(&r, srv, "jobs", "-s", "127.0.0.1:1", NULL);
	assert_failed(&r, 1, "jobs", "cannot reach http://127.0.0.1:1");
	harness_run_free(&r);
}

/* A worker whose lease request serve refuses (a 4xx: a bad name or label,
 * a token that may not lease) exits with the reason, instead of asking
 * again every 5 s forever. */
static void worker_refused(void **state)
{
	struct harness_run r;

	(void)state;
	harness_ebb(&r, srv, "worker", "--name", "no spaces", NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "lease refused: 400 bad_value: worker: expected a name");
	harness_run_free(&r);
	harness_ebb(&r, srv, "worker", "--labels", "cuda12,a b", NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "lease refused: 400 bad_value: labels[1]");
	harness_run_free(&r);
}

static void tokens(void **state)
{
	struct harness_server *s = harness_serve("[token.ml]\nsecret = ml-submit-secret-0001\nrole = submit\n"
						 "team = ml\n", HARNESS_TOKENS);
	struct harness_run r;
	json_t *v;

	(void)state;
	/* EBB_TOKEN is the admin's; --token overrides it. */
	harness_ebb(&r, s, "submit", "--json", "--token", "ml-submit-secret-0001", "--", "true", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_string_equal(JSTR(v, "team"), "ml");
	json_decref(v);
	harness_run_free(&r);
	harness_ebb(&r, s, "jobs", "--token", "wrong-token-wrong-token", NULL);
	assert_failed(&r, 1, "jobs", "401");
	harness_run_free(&r);
	harness_ebb(&r, s, "jobs", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_string_equal(JSTR(v, "jobs.0.team"), "ml");
	json_decref(v);
	harness_run_free(&r);
	assert_int(harness_server_stop(s), 0);

	/* The server is gone. */
	harness_ebb(&r, s, "jobs", NULL);
	assert_failed(&r, 1, "jobs", "cannot reach");
	harness_run_free(&r);
	harness_server_free(s);
}

static void version_and_help(void **state)
{
	struct harness_run r;
	json_t *v;

	(void)state;
	harness_ebb(&r, NULL, "version", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "ebb ");
	assert_true(strchr("0123456789", r.out[4]) != NULL);
	harness_run_free(&r);
	harness_ebb(&r, NULL, "--version", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "ebb ");
	harness_run_free(&r);
	harness_ebb(&r, NULL, "help", NULL);
	assert_int(r.status, 0);
	for (const char *const *c = (const char *const[]){"serve", "submit", "jobs", "job", "cancel",
							  "config", "version", NULL};
	     *c; c++)
		assert_contains(r.out, harness_fmt("  %s ", *c));
	harness_run_free(&r);
	harness_ebb(&r, NULL, NULL);
	assert_int(r.status, 2);
	harness_run_free(&r);
	harness_ebb(&r, NULL, "version", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	harness_run_free(&r);
	harness_ebb(&r, NULL, "version", NULL);
	assert_string_equal(r.out, harness_fmt("ebb %s\n", JSTR(v, "version")));
	json_decref(v);
	harness_run_free(&r);
	/* An unknown command: one line, the nearest command when one is
	 * close, and where to look. */
	harness_ebb(&r, NULL, "frobnicate", NULL);
	assert_int(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "ebb: unknown command 'frobnicate'\nsee 'ebb help'\n");
	harness_run_free(&r);
	harness_ebb(&r, NULL, "sbumit", "--", "true", NULL);
	assert_int(r.status, 2);
	assert_string_equal(r.err, "ebb: unknown command 'sbumit'; did you mean 'submit'?\nsee 'ebb help'\n");
	harness_run_free(&r);
	harness_ebb(&r, NULL, "help", "jbos", NULL);
	assert_int(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "ebb help: unknown command 'jbos'; did you mean 'jobs'?\nsee 'ebb help'\n");
	harness_run_free(&r);
	/* Every command's options are read by one parser, its errors worded alike. */
	harness_ebb(&r, NULL, "worker", "--wait", NULL);
	assert_failed(&r, 2, "worker", "unknown option '--wait'");
	harness_run_free(&r);
}

/* --help and `ebb help COMMAND` print the same help, on stdout; a usage
 * error names what was wrong in one line and where to look in another. */
static void help_and_usage_errors(void **state)
{
	static const char *const bad[][4] = {
		{"jobs", "--limit", "0", "ebb jobs: --limit: expected an integer from 1 to 1000, got '0'"},
		{"jobs", "--l", "5", "ebb jobs: ambiguous option '--l': --lane, --limit?"},
		{"fleet", "--json=1", NULL, "ebb fleet: option '--json' takes no value"},
		{"decisions", "--limit", NULL, "ebb decisions: option '--limit' needs a value"},
		{"status", "-x", NULL, "ebb status: unknown option '-x'"},
		{"teams", "extra", NULL, "ebb teams: unexpected argument 'extra'"},
		{"worker", "--grace", "soon", "ebb worker: --grace: expected a duration such as 30s or 5m, got 'soon'"},
		{"worker", "--gpus", "-1", "ebb worker: --gpus: expected an integer from 0 to 4096, got '-1'"},
		{"team", "set", "a", "ebb team: --budget is required"},
		{"store", "copy", "--from=x", "ebb store: --from: expected sqlite:DIR, got 'x'"},
		{"serve", "--config", NULL, "ebb serve: option '--config' needs a value"},
		{"submit", "--prioirty", "3", "ebb submit: unknown option '--prioirty'; did you mean '--priority'?"},
		{"jobs", "--jsno", NULL, "ebb jobs: unknown option '--jsno'; did you mean '--json'?"},
		{"worker", "--idle-timout", "5m", "ebb worker: unknown option '--idle-timout'; did you mean '--idle-timeout'?"},
	};
	struct harness_run help, r;

	(void)state;
	harness_ebb(&help, NULL, "submit", "--help", NULL);
	assert_int(help.status, 0);
	assert_string_equal(help.err, "");
	assert_true(strstr(help.out, "usage: ebb submit [OPTIONS] [-- COMMAND ARGS...]\n") == help.out);
	assert_contains(help.out, "\n  --priority N          -1000 to 1000, higher first within a lane (default 0)\n");
	assert_contains(help.out, "\n  -h, --help            print this help\n");
	harness_ebb(&r, NULL, "help", "submit", NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.out, help.out);
	harness_run_free(&r);
	harness_run_free(&help);
	harness_ebb(&r, NULL, "help", "frobnicate", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "unknown command 'frobnicate'");
	harness_run_free(&r);
	harness_ebb(&r, NULL, "help", "submit", "jobs", NULL);
	assert_int(r.status, 2);
	assert_string_equal(r.err, "ebb help: unexpected argument 'jobs'\nsee 'ebb help --help'\n");
	harness_run_free(&r);

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		harness_ebb(&r, NULL, bad[k][0], bad[k][1], bad[k][2], NULL);
		assert_int(r.status, 2);
		assert_string_equal(r.out, "");
		assert_string_equal(r.err, harness_fmt("%s\nsee 'ebb %s --help'\n", bad[k][3], bad[k][0]));
		harness_run_free(&r);
	}
}

/* ebb submit --jobs FILE --json: a line of JSON for each job, refused or
 * not, in the file's order, as the file it reads. */
static void submit_jobs_json_lines(void **state)
{
	const char *file = harness_fmt("%s/jobs.jsonl", harness_tmpdir());
	struct harness_run r;
	char *line, *save = NULL;
	int n = 0;

	(void)state;
	harness_write_file(file, "{\"command\": [\"true\"]}\n{\"command\": []}\n{\"command\": [\"true\"], \"payload\": 1}\n");
	harness_ebb(&r, srv, "submit", "--jobs", file, "--json", NULL);
	assert_int(r.status, 1); /* one refused */
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		json_t *v = harness_json(line);
		if (n == 1)
			assert_non_null(harness_jget(v, "error.message"));
		else
			assert_true(JINT(v, "id") > 0);
		json_decref(v);
	}
	assert_int(n, 3);
	harness_run_free(&r);
}

/* Every command that offers --json prints JSON with it, found from the
 * commands' own help, so that a new command with --json is checked here
 * or says where it is. "ID" stands for a job's id. */
static void json_everywhere(void **state)
{
	static const char *const runs[][4] = {
		{"submit", "--", "true"}, {"jobs"}, {"job", "ID"}, {"logs", "ID"}, {"workers"}, {"cancel", "ID"}, {"fleet"},
		{"decisions"}, {"alerts"}, {"teams"}, {"report"}, {"offers"}, {"status"}, {"version"},
	};
	/* Checked by the tests that have what they need: teams, a trace, an
	 * instance (drain and reclaim print through cli_by_id, as cancel does),
	 * a failed job (requeue: test_attempts). */
	static const char *const elsewhere[] = {"team", "sim", "tune", "drain", "reclaim", "requeue", NULL};
	struct harness_run help, r;
	char *line, *save = NULL;
	int checked = 0;

	(void)state;
	harness_ebb(&help, NULL, "help", NULL);
	assert_int(help.status, 0);
	for (line = strtok_r(help.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char cmd[32];
		const char *const *run = NULL;
		const char *args[4] = {NULL};
		int known = 0;

		if (sscanf(line, "  %31[a-z] ", cmd) != 1)
			continue;
		harness_ebb(&r, NULL, cmd, "--help", NULL);
		known = strstr(r.out, "\n  --json ") == NULL;
		harness_run_free(&r);
		for (const char *const *e = elsewhere; *e && !known; e++)
			known = strcmp(*e, cmd) == 0;
		for (size_t k = 0; k < sizeof runs / sizeof runs[0] && !known; k++) {
			if (strcmp(runs[k][0], cmd) == 0)
				run = runs[k];
		}
		if (known)
			continue;
		if (!run)
			fail_msg("ebb %s offers --json: run it in json_everywhere, or say in elsewhere which test does", cmd);
		for (int i = 1; i < 4 && run[i]; i++)
			args[i - 1] = strcmp(run[i], "ID") == 0 ? harness_fmt("%lld", (long long)submit("x")) : run[i];
		/* --json first: before a "--" that ends the options. */
		harness_ebb(&r, srv, cmd, "--json", args[0], args[1], args[2], NULL);
		if (r.status != 0)
			fail_msg("ebb %s --json: status %d: %s", cmd, r.status, r.err);
		json_decref(harness_json(r.out));
		harness_run_free(&r);
		checked++;
	}
	harness_run_free(&help);
	assert_int(checked, sizeof runs / sizeof runs[0]);
}

static void bad_config(void **state)
{
	const char *dir = harness_tmpdir();
	char bad[4200], good[4200];
	struct harness_run r;

	(void)state;
	snprintf(bad, sizeof bad, "%s/bad.conf", dir);
	snprintf(good, sizeof good, "%s/good.conf", dir);
	harness_write_file(bad, "[server]\nlisten = 127.0.0.1:0\n\n[queue]\nmax_attempts = 3\nbogus = 1\n");
	harness_write_file(good, harness_fmt("[server]\nlisten = 127.0.0.1:0\ndata_dir = %s/data\n", dir));

	harness_ebb(&r, NULL, "serve", "-c", bad, NULL);
	assert_failed(&r, 1, "serve", harness_fmt("%s:6: [queue] bogus: unknown key", bad));
	harness_run_free(&r);
	harness_ebb(&r, NULL, "config", "-c", bad, NULL);
	assert_failed(&r, 1, "config", harness_fmt("%s:6: [queue] bogus: unknown key", bad));
	harness_run_free(&r);
	/* A key or a section a letter off: serve and config name the one meant. */
	harness_write_file(bad, "[server]\nlisten = 127.0.0.1:0\n[scaler]\ninterva = 5s\n");
	harness_ebb(&r, NULL, "serve", "-c", bad, NULL);
	assert_failed(&r, 1, "serve", harness_fmt("%s:4: [scaler] interva: unknown key; did you mean 'interval'?\n", bad));
	harness_run_free(&r);
	harness_ebb(&r, NULL, "config", "-c", bad, NULL);
	assert_failed(&r, 1, "config", harness_fmt("%s:4: [scaler] interva: unknown key; did you mean 'interval'?\n", bad));
	harness_run_free(&r);
	harness_write_file(bad, "[server]\nlisten = 127.0.0.1:0\n[qeueu]\nmax_attempts = 3\n");
	harness_ebb(&r, NULL, "config", "-c", bad, NULL);
	assert_failed(&r, 1, "config", harness_fmt("%s:4: [qeueu]: unknown section; did you mean [queue]?\n", bad));
	harness_run_free(&r);
	harness_ebb(&r, NULL, "serve", "-c", harness_fmt("%s/missing.conf", dir), NULL);
	assert_failed(&r, 1, "serve", "cannot open");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "config", "-c", good, NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "[server]\nlisten = 127.0.0.1:0\n");
	assert_contains(r.out, "max_attempts = 3\n");
	harness_run_free(&r);
}

/* `ebb config --example` is the shipped file. */
static void config_example(void **state)
{
	const char *src = getenv("EBB_SRC");
	char *shipped = harness_read_file(harness_fmt("%s/ebb.conf.example", src && *src ? src : "."), NULL);
	struct harness_run r;

	(void)state;
	if (!shipped)
		fail_msg("ebb.conf.example not found (EBB_SRC is the source tree)");
	harness_ebb(&r, NULL, "config", "--example", NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.out, shipped);
	harness_run_free(&r);
	free(shipped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(submit_and_show_json),
		cmocka_unit_test(tables_for_people),
		cmocka_unit_test(submit_options),
		cmocka_unit_test(submit_refused),
		cmocka_unit_test(cancel),
		cmocka_unit_test(errors),
		cmocka_unit_test(worker_refused),
		cmocka_unit_test(tokens),
		cmocka_unit_test(version_and_help),
		cmocka_unit_test(help_and_usage_errors),
		cmocka_unit_test(json_everywhere),
		cmocka_unit_test(submit_jobs_json_lines),
		cmocka_unit_test(bad_config),
		cmocka_unit_test(config_example),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
