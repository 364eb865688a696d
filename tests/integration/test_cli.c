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
	harness_ebb(&r, NULL, "frobnicate", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "unknown command 'frobnicate'");
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

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		harness_ebb(&r, NULL, bad[k][0], bad[k][1], bad[k][2], NULL);
		assert_int(r.status, 2);
		assert_string_equal(r.out, "");
		assert_string_equal(r.err, harness_fmt("%s\nsee 'ebb %s --help'\n", bad[k][3], bad[k][0]));
		harness_run_free(&r);
	}
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
		cmocka_unit_test(bad_config),
		cmocka_unit_test(config_example),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
