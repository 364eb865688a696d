/* The exec provider's two halves on a real event loop with real programs
 * (small shell scripts in a temp dir): exec_run.c, which runs a program
 * per call, and exec.c, which reads the contract's replies. What serve
 * makes of them end to end is tests/integration/test_exec_provider.c;
 * here every way a program can answer badly is tried once, and each must
 * come back as an error that names the problem. */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "common/offer.h"
#include "harness.h"
#include "provider/exec_run.h"
#include "provider/provider.h"

/* ---- running programs ---- */

struct ran {
	int n;
	int order[8];
	struct exec_result r[8];
	char out[8][512];
};

struct slot {
	struct ran *ran;
	int id;
};

static void on_ran(void *arg, const struct exec_result *r)
{
	struct slot *s = arg;
	struct ran *ran = s->ran;

	ran->order[ran->n] = s->id;
	ran->r[s->id] = *r;
	ran->r[s->id].out = NULL;
	snprintf(ran->out[s->id], sizeof ran->out[s->id], "%s", r->out ? r->out : "");
	ran->n++;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/* Runs the loop until *n reaches want; fails after 20 s. */
static void loop_until(struct event_base *base, const int *n, int want)
{
	int late = 0;
	struct event *deadline = evtimer_new(base, on_deadline, &late);
	struct timeval tv = {20, 0};

	evtimer_add(deadline, &tv);
	while (*n < want && !late)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(deadline);
	if (*n < want)
		fail_msg("%d of %d runs ended within 20 s", *n, want);
}

/* An executable script in the test's temp dir. */
static const char *script(const char *name, const char *body)
{
	static char paths[8][4200];
	static int next;
	char *path = paths[next++ % 8];

	snprintf(path, sizeof paths[0], "%s/%s", harness_tmpdir(), name);
	harness_write_file(path, harness_fmt("#!/bin/sh\n%s\n", body));
	chmod(path, 0755);
	return path;
}

static void output_status_and_last_error_line(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 10000, 4);
	struct ran ran = {0};
	struct slot s = {&ran, 0};

	(void)state;
	assert_int(exec_run(x, script("talk", "cat; echo \"arg $1\"; echo first >&2; printf 'last words\\n\\n' >&2; exit 3"),
			    "launch", "hello\n", on_ran, &s),
		   0);
	loop_until(base, &ran.n, 1);
	assert_string_equal(ran.out[0], "hello\narg launch\n");
	assert_int(ran.r[0].status, 3);
	assert_false(ran.r[0].timed_out);
	assert_string_equal(ran.r[0].err_line, "last words");
	exec_runner_free(x);
	event_base_free(base);
}

/* Past the timeout the whole process group goes, a program's own
 * children with it. */
static void timeout_kills_the_group(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 300, 4);
	struct ran ran = {0};
	struct slot s = {&ran, 0};
	const char *pidfile = harness_fmt("%s/child.pid", harness_tmpdir());
	char body[5000], *text;
	pid_t child;

	(void)state;
	snprintf(body, sizeof body, "sleep 100 & echo $! > %s; sleep 100", pidfile);
	assert_int(exec_run(x, script("hang", body), "list", "", on_ran, &s), 0);
	loop_until(base, &ran.n, 1);
	assert_true(ran.r[0].timed_out);
	assert_int(ran.r[0].status, 128 + SIGTERM);
	text = harness_read_file(pidfile, NULL);
	assert_non_null(text);
	child = (pid_t)atoi(text);
	free(text);
	for (int64_t until = harness_now_ms() + 5000; harness_alive(child, NULL) && harness_now_ms() < until;)
		harness_sleep_ms(20);
	assert_false(harness_alive(child, NULL));
	exec_runner_free(x);
	event_base_free(base);
}

static void output_past_its_limit(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 10000, 4);
	struct ran ran = {0};
	struct slot s = {&ran, 0};

	(void)state;
	assert_int(exec_run(x, script("flood", "head -c 3000000 /dev/zero"), "list", "", on_ran, &s), 0);
	loop_until(base, &ran.n, 1);
	assert_true(ran.r[0].out_too_long);
	assert_int(ran.r[0].status, 0);
	exec_runner_free(x);
	event_base_free(base);
}

/* At most `concurrency` at once; the others wait, and start in order. */
static void calls_wait_their_turn(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 10000, 1);
	struct ran ran = {0};
	struct slot s[3] = {{&ran, 0}, {&ran, 1}, {&ran, 2}};
	const char *dir = harness_tmpdir();
	char body[9000], *overlaps;

	(void)state;
	snprintf(body, sizeof body, "mkdir %s/busy || echo overlap >> %s/overlaps; sleep 0.2; rmdir %s/busy", dir, dir, dir);
	for (int k = 0; k < 3; k++)
		assert_int(exec_run(x, script("turn", body), "launch", "", on_ran, &s[k]), 0);
	loop_until(base, &ran.n, 3);
	for (int k = 0; k < 3; k++) {
		assert_int(ran.order[k], k);
		assert_int(ran.r[k].status, 0);
	}
	overlaps = harness_read_file(harness_fmt("%s/overlaps", dir), NULL);
	assert_null(overlaps);
	exec_runner_free(x);
	event_base_free(base);
}

/* A program that is not there, and one that never reads the megabyte it
 * was given: each ends, neither hangs serve. */
static void missing_program_and_unread_input(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 10000, 4);
	struct ran ran = {0};
	struct slot s[2] = {{&ran, 0}, {&ran, 1}};
	char *big = malloc(1 << 20);

	(void)state;
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	assert_int(exec_run(x, "/nonexistent/provider", "launch", "{}", on_ran, &s[0]), 0);
	assert_int(exec_run(x, script("deaf", "exit 0"), "launch", big, on_ran, &s[1]), 0);
	free(big);
	loop_until(base, &ran.n, 2);
	assert_int(ran.r[0].status, 127);
	assert_contains(ran.r[0].err_line, "/nonexistent/provider: cannot run");
	assert_int(ran.r[1].status, 0);
	exec_runner_free(x);
	event_base_free(base);
}

/* Freeing the runner kills what runs and drops what waits, each told. */
static void free_cancels_everything(void **state)
{
	struct event_base *base = event_base_new();
	struct exec_runner *x = exec_runner_new(base, 60000, 1);
	struct ran ran = {0};
	struct slot s[2] = {{&ran, 0}, {&ran, 1}};
	const char *pidfile = harness_fmt("%s/sleeper.pid", harness_tmpdir());
	char body[5000], *text = NULL;
	pid_t pid;

	(void)state;
	snprintf(body, sizeof body, "echo $$ > %s; exec sleep 100", pidfile);
	assert_int(exec_run(x, script("sleeper", body), "list", "", on_ran, &s[0]), 0);
	assert_int(exec_run(x, script("sleeper", body), "list", "", on_ran, &s[1]), 0);
	for (int64_t until = harness_now_ms() + 10000; !(text = harness_read_file(pidfile, NULL)) && harness_now_ms() < until;)
		event_base_loop(base, EVLOOP_NONBLOCK), harness_sleep_ms(20);
	assert_non_null(text);
	pid = (pid_t)atoi(text);
	free(text);
	exec_runner_free(x);
	assert_int(ran.n, 2);
	assert_true(ran.r[0].cancelled && ran.r[1].cancelled);
	assert_false(harness_alive(pid, NULL));
	event_base_free(base);
}

/* ---- the contract's replies ---- */

struct provider_fx {
	struct config cfg;
	struct event_base *base;
	struct offer offers[4];
	struct provider *p;
	const char *reply, *status; /* files the program answers from */
};

/* A provider whose program prints the file reply and exits with the
 * number in the file status. */
static struct provider_fx *provider_fx_new(void)
{
	struct provider_fx *f = calloc(1, sizeof *f);
	const char *dir = harness_tmpdir();
	char err[1024], body[9000];
	struct provider_env env;

	f->reply = harness_fmt("%s/reply", dir);
	f->reply = strdup(f->reply);
	f->status = strdup(harness_fmt("%s/status", dir));
	snprintf(body, sizeof body, "cat > /dev/null; cat %s; exit $(cat %s)", f->reply, f->status);
	harness_write_file(harness_fmt("%s/ebb.conf", dir),
			   harness_fmt("[provider]\nkind = exec\n[exec]\ncommand = %s\ntimeout = 5s\n"
				       "[offer.a]\nprice_ondemand = 1\n",
				       script("answer", body)));
	if (config_load(&f->cfg, &cmd_plugins, harness_fmt("%s/ebb.conf", dir), err, sizeof err) != 0)
		fail_msg("config: %s", err);
	f->base = event_base_new();
	env = (struct provider_env){.cfg = &f->cfg, .base = f->base, .offers = f->offers,
				    .noffers = offers_from_config(&f->cfg, f->offers, 4),
				    .server_url = "http://127.0.0.1:7070"};
	if (!(f->p = provider_open(&env, err, sizeof err)))
		fail_msg("provider_open: %s", err);
	return f;
}

static void provider_fx_free(struct provider_fx *f)
{
	provider_close(f->p);
	event_base_free(f->base);
	config_free(&f->cfg);
	free((char *)f->reply);
	free((char *)f->status);
	free(f);
}

struct launched {
	int n;
	struct launch_result r;
};

static void on_launch(void *arg, int64_t instance, const struct launch_result *r)
{
	struct launched *l = arg;

	(void)instance;
	l->r = *r;
	l->n++;
}

/* The launch's result when the program prints reply and exits status. */
static struct launch_result launch_with(struct provider_fx *f, const char *reply, int status)
{
	struct instance inst = {.id = 7, .market = MARKET_ONDEMAND, .gpus = 1};
	struct launched l = {0};

	snprintf(inst.offer, sizeof inst.offer, "a");
	harness_write_file(f->reply, reply);
	harness_write_file(f->status, harness_fmt("%d", status));
	provider_launch(f->p, &inst, "t0ken", on_launch, &l);
	assert_int(l.n, 0); /* never from inside the call */
	loop_until(f->base, &l.n, 1);
	return l.r;
}

static void launch_replies(void **state)
{
	struct provider_fx *f = provider_fx_new();
	struct launch_result r;
	char big[6000];

	(void)state;
	r = launch_with(f, "{\"version\": 1, \"ref\": \"i-0abc\", \"data\": {\"zone\": \"us-east-1a\"}}", 0);
	assert_true(r.ok);
	assert_string_equal(r.ref, "i-0abc");
	assert_string_equal(r.data, "{\"zone\":\"us-east-1a\"}");

	r = launch_with(f, "", 75);
	assert_true(!r.ok && r.no_capacity);

	struct {
		const char *reply;
		int status;
		const char *why;
	} bad[] = {
		{"{\"version\": 1, \"ref\": \"i-1\"}", 1, "launch: exit 1"},
		{"not json at all", 0, "standard output is not a JSON object"},
		{"[1, 2]", 0, "standard output is not a JSON object"},
		{"{\"version\": 2, \"ref\": \"i-1\"}", 0, "expected \"version\": 1"},
		{"{\"ref\": \"i-1\"}", 0, "expected \"version\": 1"},
		{"{\"version\": 1}", 0, "expected \"ref\": a string of 1 to 255 bytes"},
		{"{\"version\": 1, \"ref\": \"\"}", 0, "expected \"ref\": a string of 1 to 255 bytes"},
		{"{\"version\": 1, \"ref\": 12}", 0, "expected \"ref\": a string of 1 to 255 bytes"},
		{"{\"version\": 1, \"ref\": \"i-1\", \"data\": [1]}", 0, "\"data\" must be an object"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		r = launch_with(f, bad[k].reply, bad[k].status);
		if (r.ok || r.no_capacity)
			fail_msg("launch took %s (exit %d)", bad[k].reply, bad[k].status);
		assert_contains(r.error, bad[k].why);
	}
	memset(big, 'r', 300);
	big[300] = '\0';
	r = launch_with(f, harness_fmt("{\"version\": 1, \"ref\": \"%s\"}", big), 0);
	assert_contains(r.error, "expected \"ref\": a string of 1 to 255 bytes");
	memset(big, 'd', 5000);
	big[5000] = '\0';
	r = launch_with(f, harness_fmt("{\"version\": 1, \"ref\": \"i-1\", \"data\": {\"x\": \"%s\"}}", big), 0);
	assert_contains(r.error, "\"data\" over 4096 bytes");
	provider_fx_free(f);
}

struct listed {
	int n;
	int items;
	char first[300];
	int64_t first_id;
	int first_terminating;
	char error[700];
};

static void on_list(void *arg, const struct provider_item *items, int n, const char *error)
{
	struct listed *l = arg;

	l->items = n;
	if (n > 0) {
		snprintf(l->first, sizeof l->first, "%s", items[0].ref);
		l->first_id = items[0].instance;
		l->first_terminating = items[0].terminating;
	}
	snprintf(l->error, sizeof l->error, "%s", error ? error : "");
	l->n++;
}

static struct listed list_with(struct provider_fx *f, const char *reply, int status)
{
	struct listed l = {0};

	harness_write_file(f->reply, reply);
	harness_write_file(f->status, harness_fmt("%d", status));
	provider_list(f->p, on_list, &l);
	loop_until(f->base, &l.n, 1);
	return l;
}

static void list_replies(void **state)
{
	struct provider_fx *f = provider_fx_new();
	struct listed l;

	(void)state;
	l = list_with(f, "{\"version\": 1, \"instances\": [{\"ref\": \"i-9\", \"instance\": 9, \"state\": \"terminating\"},"
			 " {\"ref\": \"i-x\", \"state\": \"running\"}]}", 0);
	assert_string_equal(l.error, "");
	assert_int(l.items, 2);
	assert_string_equal(l.first, "i-9");
	assert_int(l.first_id, 9);
	assert_true(l.first_terminating);

	struct {
		const char *reply;
		int status;
		const char *why;
	} bad[] = {
		{"", 1, "list: exit 1"},
		{"{\"version\": 1}", 0, "expected \"instances\": an array"},
		{"{\"version\": 1, \"instances\": [3]}", 0, "each instance is an object"},
		{"{\"version\": 1, \"instances\": [{\"instance\": 3}]}", 0, "each instance needs a \"ref\""},
		{"{\"version\": 1, \"instances\": [{\"ref\": \"i\", \"instance\": \"3\"}]}", 0, "an integer \"instance\""},
		{"<html>", 0, "standard output is not a JSON object"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		l = list_with(f, bad[k].reply, bad[k].status);
		assert_int(l.items, 0);
		assert_contains(l.error, bad[k].why);
	}
	provider_fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_status_and_last_error_line),
		cmocka_unit_test(timeout_kills_the_group),
		cmocka_unit_test(output_past_its_limit),
		cmocka_unit_test(calls_wait_their_turn),
		cmocka_unit_test(missing_program_and_unread_input),
		cmocka_unit_test(free_cancels_everything),
		cmocka_unit_test(launch_replies),
		cmocka_unit_test(list_replies),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
