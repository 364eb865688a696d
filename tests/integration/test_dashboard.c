/* The dashboard at / in headless Chromium (Debian's chromium, driven over
 * its DevTools protocol through a pipe: cdp.h), against a real serve whose
 * local instances ran real jobs: the page asks for the token once, shows
 * the numbers the API shows, follows the queue when it changes, shows
 * each instance's resident handlers with their setup times, fits a phone's
 * width, and reports no error (console, exceptions, a refused or
 * missing resource); its jobs view lists jobs in each state with their
 * progress, cost and wait, filters them, pages them, and shows one job's
 * fields, its attempts, and its log as it comes. EBB_SCREENSHOT=FILE keeps a
 * screenshot of it (docs/dashboard.png is one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cdp.h"
#include "harness.h"

static struct cdp browser;

static int teardown(void **state)
{
	cdp_stop(&browser);
	return harness_cleanup(state);
}

/* The text of the first element matching a CSS selector ("" if none). */
static const char *text_of(struct cdp *c, const char *selector, char *buf, size_t size)
{
	json_t *quoted = json_string(selector);
	char *q = json_dumps(quoted, JSON_ENCODE_ANY), expr[1024];

	snprintf(expr, sizeof expr, "(document.querySelector(%s) || {textContent: ''}).textContent", q);
	cdp_eval_text(c, expr, buf, size);
	free(q);
	json_decref(quoted);
	return buf;
}

/* Waits until the page's text at selector is want. */
static void wait_text(struct harness_server *s, struct cdp *c, const char *selector, const char *want)
{
	char got[400];

	WAIT_FOR(s, 15000, strcmp(text_of(c, selector, got, sizeof got), want) == 0, "the page shows '%s' at %s, not '%s'",
		 got, selector, want);
}

static const char *lane_cell(const char *lane, int column)
{
	return harness_fmt("#lanes tr[data-lane=\"%s\"] td:nth-child(%d)", lane, column);
}

/* A base64 text decoded into out (at least 3/4 of its length): its length. */
static size_t base64_decode(const char *in, unsigned char *out)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned bits = 0;
	int nbits = 0;
	size_t n = 0;

	for (; *in && *in != '='; in++) {
		const char *d = strchr(digits, *in);
		if (!d)
			continue;
		bits = (bits << 6) | (unsigned)(d - digits);
		if ((nbits += 6) >= 8) {
			out[n++] = (unsigned char)(bits >> (nbits - 8));
			nbits -= 8;
		}
	}
	return n;
}

/* A PNG of the whole page into path. */
static void screenshot(struct cdp *c, const char *path)
{
	json_t *r = cdp_call(c, "Page.captureScreenshot", "{\"format\":\"png\",\"captureBeyondViewport\":true}");
	const char *data = json_string_value(json_object_get(r, "data"));
	unsigned char *png = malloc(strlen(data));
	size_t n = base64_decode(data, png);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_true(n > 8 && memcmp(png, "\x89PNG", 4) == 0);
	assert_int(fwrite(png, 1, n, f), n);
	fclose(f);
	free(png);
	json_decref(r);
}

static void no_errors(const struct cdp *c)
{
	for (int i = 0; i < c->nerrors; i++)
		print_error("%s\n", c->errors[i]);
	assert_int(c->nerrors, 0);
}

/* The page asks for the token: HARNESS_ADMIN is typed into it, and the
 * view (its id) shows. */
static void give_token(struct harness_server *s, struct cdp *c, const char *view)
{
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('login').hidden"),
		 "the page does not ask for the token");
	json_decref(cdp_eval(c, harness_fmt("document.getElementById('token').value = '%s';"
					    " document.getElementById('login').requestSubmit(); true",
					    HARNESS_ADMIN)));
	WAIT_FOR(s, 15000, !cdp_eval_true(c, harness_fmt("document.getElementById('%s').hidden", view)),
		 "%s does not show after the token", view);
}

static void the_page_against_the_api(void **state)
{
	struct harness_server *s = harness_serve(
		"[provider]\nkind = local\norphan_timeout = 20s\n[local]\ngpus = 0\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.06\nbilling_minimum = 0s\n"
		"[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 10m\n"
		"[team.ml]\nquota_gpus = 1\nmonthly_budget = 100\n",
		HARNESS_TOKENS);
	struct cdp *c = &browser;
	const char *shot = getenv("EBB_SCREENSHOT");
	char buf[400], want[400];
	json_t *r;

	(void)state;
	harness_own_workers(s);
	/* Real jobs of two teams on a real instance, then one that runs long
	 * and two that wait behind it. */
	for (int k = 0; k < 3; k++)
		harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.2\"], \"items\": 10, \"team\": \"ml\"}");
	harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.2\"], \"items\": 5, \"team\": \"cv\"}");
	WAIT_FOR(s, 30000, harness_stat(s, "states.succeeded") == 4, "the jobs did not run");
	for (int k = 0; k < 3; k++)
		harness_submit(s, "{\"command\": [\"sleep\", \"60\"], \"team\": \"ml\"}");
	WAIT_FOR(s, 30000, harness_stat(s, "states.leased") == 1, "the long job was not leased");

	cdp_start(c, harness_tmpdir());
	cdp_navigate(c, harness_fmt("%s/", s->url));
	/* The API asks for a token: the page asks for it, once. */
	give_token(s, c, "board");

	/* The numbers the API shows. */
	wait_text(s, c, lane_cell("standard", 2), "2");
	assert_int(harness_stat(s, "lanes.standard.queued"), 2);
	wait_text(s, c, lane_cell("standard", 4), "1");
	assert_int(harness_stat(s, "lanes.standard.leased"), 1);
	wait_text(s, c, "#fleet-sum", "1 live: 1 busy, 0 idle");
	assert_int(harness_live_instances(s, NULL), 1);
	wait_text(s, c, "#fleet tr[data-offer=\"a10\"][data-market=\"on-demand\"] td:nth-child(6)", "1");
	wait_text(s, c, "#spend-now", "$3.06/h");
	r = harness_get(s, "/v1/alerts");
	snprintf(want, sizeof want, "%zu", json_array_size(json_object_get(r, "alerts")));
	json_decref(r);
	wait_text(s, c, "#alerts-count", want);
	r = harness_get(s, "/v1/decisions?limit=1");
	assert_contains(text_of(c, "#decisions li", buf, sizeof buf), JSTR(r, "decisions.0.reason"));
	json_decref(r);
	wait_text(s, c, "#teams tr[data-team=\"ml\"] td:nth-child(2)", "2");
	wait_text(s, c, "#teams tr[data-team=\"cv\"] td:nth-child(2)", "0");
	/* ml has a section: its GPUs against its quota, its month against its
	 * budget, as GET /v1/teams has them; cv has none. */
	wait_text(s, c, "#teams tr[data-team=\"ml\"] td:nth-child(7)", "1 of 1");
	assert_true(strncmp(text_of(c, "#teams tr[data-team=\"ml\"] td:nth-child(8)", buf, sizeof buf), "$", 1) == 0);
	assert_contains(buf, " of $100.00");
	wait_text(s, c, "#teams tr[data-team=\"cv\"] td:nth-child(7)", "-");
	/* 35 items done today: the cost per item is the ledger's today. */
	r = harness_get(s, "/v1/dashboard");
	assert_int(JINT(r, "money.today.items"), 35);
	json_decref(r);
	assert_true(strncmp(text_of(c, "#cpi-today", buf, sizeof buf), "$0.0", 4) == 0);
	assert_true(cdp_eval_true(c, "document.querySelectorAll('#chart polyline').length === 3"));

	/* The queue changes: the page follows within its refresh. */
	harness_submit(s, "{\"command\": [\"true\"], \"team\": \"cv\"}");
	wait_text(s, c, lane_cell("standard", 2), "3");
	wait_text(s, c, "#teams tr[data-team=\"cv\"] td:nth-child(2)", "1");

	/* A comparison `ebb tune --history --publish` sent (test_history
	 * sends a real one): its panel shows, hidden until then. */
	assert_true(cdp_eval_true(c, "document.getElementById('tuning-section').hidden"));
	json_decref(harness_call_ok(s, "POST", "/v1/admin/tuning",
				    "{\"comparison\": {\"since\": 1764288000, \"team\": null, \"origin\": 1764288000,"
				    " \"jobs\": 812, \"recommended\": {\"policy\": \"ebb:idle_timeout=120s\","
				    " \"cost_usd\": 41.5, \"wait_p95_s\": 250}, \"running_replayed\": {\"cost_usd\": 52.25,"
				    " \"wait_p95_s\": 130}, \"running_actual\": {\"cost_usd\": null, \"wait_p95_s\": 95}}}",
				    200));
	wait_text(s, c, "#tuning tr[data-settings=\"running-replayed\"] td:nth-child(2)", "$52.25");
	wait_text(s, c, "#tuning tr[data-settings=\"recommended\"] td:nth-child(3)", "4 m 10 s");
	wait_text(s, c, "#tuning tr[data-settings=\"running-actual\"] td:nth-child(2)", "-");
	assert_contains(text_of(c, "#tuning-sum", buf, sizeof buf), "812 jobs finished since 2025-11-28");

	/* Typed once: a new load does not ask again. */
	cdp_navigate(c, harness_fmt("%s/", s->url));
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('board').hidden"),
		 "the page asks for the token again");
	assert_true(cdp_eval_true(c, "document.getElementById('login').hidden"));
	if (shot) {
		json_decref(cdp_call(c, "Emulation.setDeviceMetricsOverride",
				     "{\"width\":1200,\"height\":900,\"deviceScaleFactor\":1,\"mobile\":false}"));
		wait_text(s, c, lane_cell("standard", 2), "3");
		screenshot(c, shot);
	}

	/* A phone's width: nothing wider than the screen, every section on it. */
	json_decref(cdp_call(c, "Emulation.setDeviceMetricsOverride",
			     "{\"width\":375,\"height\":812,\"deviceScaleFactor\":2,\"mobile\":true}"));
	cdp_navigate(c, harness_fmt("%s/", s->url));
	wait_text(s, c, lane_cell("standard", 2), "3");
	assert_true(cdp_eval_true(c, "document.documentElement.scrollWidth <= window.innerWidth"));
	assert_true(cdp_eval_true(c, "[...document.querySelectorAll('main > section')].every(e =>"
					     " e.hidden || e.getBoundingClientRect().right <= window.innerWidth + 1)"));
	screenshot(c, harness_fmt("%s/phone.png", harness_tmpdir()));
	no_errors(c);
}

/* The setup time GET /v1/fleet shows of the first instance's handler,
 * and that instance's id into id; -1 before its handler is ready. */
static double fleet_setup(struct harness_server *s, char *id, size_t size)
{
	json_t *r = harness_get(s, "/v1/fleet");
	double setup = -1;

	if (json_is_number(harness_jget(r, "instances.0.handlers.0.setup_s"))) {
		setup = JNUM(r, "instances.0.handlers.0.setup_s");
		snprintf(id, size, "%lld", (long long)JINT(r, "instances.0.id"));
	}
	json_decref(r);
	return setup;
}

/* A live instance's resident handler: a payload job of type embed runs on
 * a real local instance, whose worker keeps the handler (a setup of 1 s,
 * then ready); the page's instances show it ready, with the setup time
 * GET /v1/fleet has, in that instance's row. */
static void an_instance_s_handler(void **state)
{
	const char *handler = harness_fmt("%s/embed.sh", harness_tmpdir());
	struct harness_server *s;
	struct cdp *c = &browser;
	char buf[400], id[32];
	double setup, shown;
	int64_t job;

	(void)state;
	harness_write_file(handler, "#!/bin/sh\n"
				    "sleep 1\n"
				    "echo ready >&$EBB_CONTROL_FD\n"
				    "while read -r line; do\n"
				    "  case $line in cancel*) continue ;; esac\n"
				    "  echo done >&$EBB_CONTROL_FD\n"
				    "done\n");
	if (chmod(handler, 0755) != 0)
		fail_msg("chmod %s", handler);
	s = harness_serve(harness_fmt("[provider]\nkind = local\n[local]\ngpus = 0\n"
				      "[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 10m\n"
				      "[type.embed]\nhandler = '%s'\n",
				      handler),
			  HARNESS_TOKENS);
	harness_own_workers(s);
	job = harness_submit(s, "{\"type\": \"embed\", \"payload\": {\"text\": \"hello\"}}");
	WAIT_FOR(s, 60000, harness_job_is(s, job, "succeeded"), "the payload job did not succeed");
	/* The worker tells serve of its handler on its next lease request. */
	WAIT_FOR(s, 30000, (setup = fleet_setup(s, id, sizeof id)) >= 0,
		 "GET /v1/fleet does not show the instance's handler ready");
	assert_true(setup >= 1.0);

	cdp_start(c, harness_tmpdir());
	cdp_navigate(c, harness_fmt("%s/", s->url));
	give_token(s, c, "board");
	wait_text(s, c, harness_fmt("#instances tr[data-instance=\"%s\"] td:nth-child(1)", id), id);
	wait_text(s, c, harness_fmt("#instances tr[data-instance=\"%s\"] td:nth-child(4)", id), "idle");
	/* "embed ready (1.0 s)": the setup to a tenth of a second. */
	text_of(c, harness_fmt("#instances tr[data-instance=\"%s\"] td:nth-child(6)", id), buf, sizeof buf);
	if (sscanf(buf, "embed ready (%lf s)", &shown) != 1 || strcmp(buf, harness_fmt("embed ready (%.1f s)", shown)) != 0)
		fail_msg("the instance's handlers show '%s', not 'embed ready (N s)'", buf);
	assert_true(fabs(shown - setup) <= 0.051);
	assert_true(cdp_eval_true(c, "document.querySelectorAll('#instances tbody tr').length === 1"));
	no_errors(c);
}

static const char *job_cell(int64_t id, int column)
{
	return harness_fmt("#jobs tr[data-job=\"%lld\"] td:nth-child(%d)", (long long)id, column);
}

static const char *attempt_cell(int attempt, int column)
{
	return harness_fmt("#attempts tr[data-attempt=\"%d\"] td:nth-child(%d)", attempt, column);
}

/* The log's lines of a stream shown, in order, joined by "|" (the two
 * streams are two pipes: which of two lines close in time the worker
 * reads first is its poll's choice). */
static const char *log_shown(struct cdp *c, const char *stream, char *buf, size_t size)
{
	return cdp_eval_text(
		c, harness_fmt("[...document.querySelectorAll('#log div.%s')].map(d => d.textContent).join('|')", stream),
		buf, size);
}

static const char *field_of(const char *name)
{
	return harness_fmt("#job-fields tr[data-field=\"%s\"] td", name);
}

/* The ids of the jobs listed, as "3,4". */
static const char *listed(struct cdp *c, char *buf, size_t size)
{
	return cdp_eval_text(c, "[...document.querySelectorAll('#jobs tbody tr')].map(r => r.dataset.job).join(',')",
			     buf, size);
}

/* Picks value in the jobs' filter select (state, lane, team), as a click would. */
static void choose(struct cdp *c, const char *filter, const char *value)
{
	json_decref(cdp_eval(c, harness_fmt("(s => { s.value = '%s'; s.dispatchEvent(new Event('change')); return true; })"
					    "(document.getElementById('f-%s'))",
					    value, filter)));
}

/* To another view of the page, as a link would (the same document: no load). */
static void go(struct cdp *c, const char *hash)
{
	json_decref(cdp_eval(c, harness_fmt("location.hash = '%s'; true", hash)));
}

/* Seconds as the page writes a span under an hour: "7 s", "2 m", "2 m 5 s". */
static const char *span_text(double seconds)
{
	int t = (int)floor(seconds);

	if (t < 60)
		return harness_fmt("%d s", t);
	return t % 60 ? harness_fmt("%d m %d s", t / 60, t % 60) : harness_fmt("%d m", t / 60);
}

/* The seconds of a span the page wrote ("7 s", "2 m 5 s"); -1 if it is none. */
static int span_seconds(const char *text)
{
	int m, sec;

	if (sscanf(text, "%d m %d s", &m, &sec) == 2)
		return m * 60 + sec;
	if (sscanf(text, "%d s", &sec) == 1 && strstr(text, " s"))
		return sec;
	return sscanf(text, "%d m", &m) == 1 ? m * 60 : -1;
}

/* The cost the page shows ("$0.0412", "$1.25") is the job's cost_usd, to
 * the page's rounding: two decimals, or three digits under a cent. */
static int cost_shown(const char *text, double cost)
{
	double shown = text[0] == '$' ? strtod(text + 1, NULL) : -1;

	return cost < 0.01 ? fabs(shown - cost) <= cost * 0.006 : fabs(shown - cost) <= 0.005;
}

static int64_t items_done(struct harness_server *s, int64_t id)
{
	json_t *j = harness_get_job(s, id);
	int64_t n = JINT(j, "items_done");

	json_decref(j);
	return n;
}

/* No error but the 404s the test asked for: at URLs that have one of paths. */
static void no_errors_but_404s(const struct cdp *c, const char *const *paths)
{
	int n = 0;

	for (int i = 0; i < c->nerrors; i++) {
		int asked = 0;
		for (const char *const *p = paths; *p && strstr(c->errors[i], "status of 404"); p++)
			asked |= strstr(c->errors[i], *p) != NULL;
		if (asked)
			continue;
		print_error("%s\n", c->errors[i]);
		n++;
	}
	assert_int(n, 0);
}

/* The jobs view against real jobs run by a real worker: one succeeded,
 * one failed, one running with a checkpoint, one queued behind it; the
 * list shows each with its state, lane, team, progress, cost and wait, its
 * filters and pages ask the API for what they say, and a job's page shows
 * its fields. */
static void the_jobs_and_a_job(void **state)
{
	struct harness_server *s = harness_serve(
		"[provider]\nkind = local\norphan_timeout = 20s\n[local]\ngpus = 0\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.06\nbilling_minimum = 0s\n"
		"[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 10m\n"
		"[type.video]\nhandler = false\n",
		HARNESS_TOKENS);
	struct cdp *c = &browser;
	int64_t done, failed, running, queued;
	char buf[400];
	json_t *j;

	(void)state;
	harness_own_workers(s);
	done = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"echo progress 4 >&$EBB_CONTROL_FD\"], \"items\": 4,"
				 " \"team\": \"ml\"}");
	/* Its type's handler exits at once: the job fails, and at its one
	 * attempt it is dead. */
	failed = harness_submit(s, "{\"type\": \"video\", \"payload\": {\"video\": \"v1.mp4\"}, \"team\": \"cv\","
				   " \"max_attempts\": 1}");
	WAIT_FOR(s, 30000, harness_job_is(s, done, "succeeded") && harness_job_is(s, failed, "dead"),
		 "the first jobs did not end");
	running = harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"echo checkpoint c1 3 >&$EBB_CONTROL_FD; sleep 60\"],"
				    " \"items\": 10, \"lane\": \"batch\", \"team\": \"ml\"}");
	WAIT_FOR(s, 30000, items_done(s, running) == 3, "the long job did not checkpoint");
	assert_true(harness_job_is(s, running, "leased"));
	/* Its one GPU is taken: this one waits. */
	queued = harness_submit(s, "{\"command\": [\"sleep\", \"60\"], \"team\": \"cv\"}");

	cdp_start(c, harness_tmpdir());
	cdp_navigate(c, harness_fmt("%s/#jobs", s->url));
	give_token(s, c, "jobs-view");
	wait_text(s, c, job_cell(queued, 2), "queued");
	assert_string_equal(listed(c, buf, sizeof buf),
			    harness_fmt("%lld,%lld,%lld,%lld", (long long)done, (long long)failed, (long long)running,
					(long long)queued));
	wait_text(s, c, job_cell(done, 2), "succeeded");
	wait_text(s, c, job_cell(done, 3), "standard");
	wait_text(s, c, job_cell(done, 4), "ml");
	wait_text(s, c, job_cell(done, 5), "4/4");
	wait_text(s, c, job_cell(failed, 2), "dead");
	wait_text(s, c, job_cell(failed, 4), "cv");
	wait_text(s, c, job_cell(failed, 5), "0/1");
	wait_text(s, c, job_cell(running, 2), "running");
	wait_text(s, c, job_cell(running, 3), "batch");
	wait_text(s, c, job_cell(running, 5), "3/10");
	wait_text(s, c, job_cell(queued, 4), "cv");
	wait_text(s, c, job_cell(queued, 5), "0/1");
	/* The cost of each, as the API has it (the ledger's share of the
	 * instance's time: a running job's grows). */
	j = harness_get_job(s, done);
	assert_true(cost_shown(text_of(c, job_cell(done, 6), buf, sizeof buf), JNUM(j, "cost_usd")));
	/* The wait: from submit to start, or, while queued, to now. */
	wait_text(s, c, job_cell(done, 7), span_text(JNUM(j, "started_at") - JNUM(j, "created_at")));
	json_decref(j);
	wait_text(s, c, job_cell(queued, 6), "$0.00");
	j = harness_get_job(s, queued);
	{
		int shown = span_seconds(text_of(c, job_cell(queued, 7), buf, sizeof buf));
		double waited = (double)time(NULL) - JNUM(j, "created_at");
		/* Written at the last refresh, 5 s ago at most (on a slow machine, more). */
		assert_between(shown, (int)waited - 30, (int)waited + 1);
	}
	json_decref(j);

	/* The filters ask the API: running is the API's leased. */
	choose(c, "state", "running");
	WAIT_FOR(s, 15000, strcmp(listed(c, buf, sizeof buf), harness_fmt("%lld", (long long)running)) == 0,
		 "state running lists %s", buf);
	assert_contains(text_of(c, "#status", buf, sizeof buf), "1 jobs");
	assert_true(cdp_eval_true(c, "location.hash === '#jobs?state=running'"));
	choose(c, "state", "");
	choose(c, "team", "cv");
	WAIT_FOR(s, 15000,
		 strcmp(listed(c, buf, sizeof buf), harness_fmt("%lld,%lld", (long long)failed, (long long)queued)) == 0,
		 "team cv lists %s", buf);
	choose(c, "team", "");
	choose(c, "lane", "batch");
	WAIT_FOR(s, 15000, strcmp(listed(c, buf, sizeof buf), harness_fmt("%lld", (long long)running)) == 0,
		 "lane batch lists %s", buf);
	/* A later page: the ids after one, and a way back to the first. */
	go(c, harness_fmt("#jobs?after=%lld", (long long)failed));
	WAIT_FOR(s, 15000,
		 strcmp(listed(c, buf, sizeof buf), harness_fmt("%lld,%lld", (long long)running, (long long)queued)) == 0,
		 "after %lld lists %s", (long long)failed, buf);
	assert_true(cdp_eval_true(c, "!document.getElementById('jobs-first').hidden"));
	assert_true(cdp_eval_true(c, "document.getElementById('jobs-next').hidden"));

	/* One job's page, from its row. */
	json_decref(cdp_eval(c, harness_fmt("document.querySelector('#jobs tr[data-job=\"%lld\"] a').click(); true",
					    (long long)running)));
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('job-view').hidden"), "no job page");
	wait_text(s, c, "#job-title", harness_fmt("Job %lld", (long long)running));
	wait_text(s, c, field_of("state"), "running");
	wait_text(s, c, field_of("lane"), "batch");
	wait_text(s, c, field_of("team"), "ml");
	wait_text(s, c, field_of("progress"), "3/10");
	wait_text(s, c, field_of("checkpoint"), "c1");
	wait_text(s, c, field_of("command"), "sh -c 'echo checkpoint c1 3 >&$EBB_CONTROL_FD; sleep 60'");
	j = harness_get_job(s, running);
	wait_text(s, c, field_of("worker"), JSTR(j, "lease.worker"));
	/* Its one attempt, running, on that worker; its log, followed. */
	wait_text(s, c, attempt_cell(1, 7), "running");
	wait_text(s, c, attempt_cell(1, 2), JSTR(j, "lease.worker"));
	assert_true(cdp_eval_true(c, "document.querySelectorAll('#attempts tbody tr').length === 1"));
	wait_text(s, c, "#log-note", "Attempt 1: following.");
	json_decref(j);

	/* A failed job's page: why it failed. */
	go(c, harness_fmt("#job/%lld", (long long)failed));
	wait_text(s, c, field_of("state"), "dead");
	wait_text(s, c, field_of("error"), "the handler died: exit status 1");
	wait_text(s, c, field_of("payload"), "{\"video\":\"v1.mp4\"}");
	/* At a phone's width, the list and a page fit. */
	json_decref(cdp_call(c, "Emulation.setDeviceMetricsOverride",
			     "{\"width\":375,\"height\":812,\"deviceScaleFactor\":2,\"mobile\":true}"));
	assert_true(cdp_eval_true(c, "document.documentElement.scrollWidth <= window.innerWidth"));
	go(c, "#jobs");
	wait_text(s, c, job_cell(running, 2), "running");
	assert_true(cdp_eval_true(c, "document.documentElement.scrollWidth <= window.innerWidth"));
	/* One that does not exist. */
	go(c, "#job/999");
	WAIT_FOR(s, 15000, strstr(text_of(c, "#job-missing", buf, sizeof buf), "999") != NULL, "no 'not found' for 999");
	/* The 404s are the missing job's. */
	no_errors_but_404s(c, (const char *const[]){"/v1/jobs/999", NULL});
}

/* A job that fails once and then succeeds, writing lines to stdout and
 * stderr: its page shows both attempts and how each ended, and its log,
 * followed from before it ran, through the failed attempt to the next,
 * whose lines show as they come; an attempt's link shows that attempt's
 * lines. */
static void a_job_s_attempts_and_its_log(void **state)
{
	struct harness_server *s = harness_serve(
		"[provider]\nkind = local\norphan_timeout = 20s\n[local]\ngpus = 0\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.06\nbilling_minimum = 0s\n"
		"[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 10m\n"
		"[queue]\nretry_base = 1s\n",
		HARNESS_TOKENS);
	struct cdp *c = &browser;
	char buf[1000], go[512];
	int64_t id;
	json_t *j;

	(void)state;
	/* Its own buffer: harness_fmt's are reused. */
	snprintf(go, sizeof go, "%s/go", harness_tmpdir());
	harness_own_workers(s);
	/* Attempt 1 says so and exits 3; attempt 2 says so, then waits for
	 * the test's word before its last line. */
	id = harness_submit(s, harness_fmt("{\"command\": [\"sh\", \"-c\", \"echo attempt $EBB_ATTEMPT begins; echo to stderr >&2;"
					   " [ $EBB_ATTEMPT = 1 ] && exit 3; echo half way;"
					   " while [ ! -e %s ]; do sleep 0.1; done; echo the end\"]}",
					   go));
	cdp_start(c, harness_tmpdir());
	cdp_navigate(c, harness_fmt("%s/#job/%lld", s->url, (long long)id));
	give_token(s, c, "job-view");
	/* Followed from before it ran: the second attempt's lines, live. */
	WAIT_FOR(s, 60000, strcmp(log_shown(c, "stdout", buf, sizeof buf), "attempt 2 begins|half way") == 0,
		 "the log shows '%s' on stdout", buf);
	wait_text(s, c, "#log-note", "Attempt 2: following.");
	WAIT_FOR(s, 15000, strcmp(log_shown(c, "stderr", buf, sizeof buf), "to stderr") == 0,
		 "the log shows '%s' on stderr", buf);
	harness_write_file(go, "");
	WAIT_FOR(s, 30000, strcmp(log_shown(c, "stdout", buf, sizeof buf), "attempt 2 begins|half way|the end") == 0,
		 "the log shows '%s' on stdout", buf);
	WAIT_FOR(s, 30000, harness_job_is(s, id, "succeeded"), "the job did not succeed");
	wait_text(s, c, "#log-note", "Attempt 2: ended.");
	wait_text(s, c, field_of("state"), "succeeded");

	/* Both attempts, as GET /v1/jobs/ID has them. */
	j = harness_get_job(s, id);
	wait_text(s, c, attempt_cell(1, 7), "failed");
	wait_text(s, c, attempt_cell(1, 8), "3");
	assert_contains(text_of(c, attempt_cell(1, 11), buf, sizeof buf), "exit status 3");
	wait_text(s, c, attempt_cell(1, 2), JSTR(j, "runs.0.worker"));
	wait_text(s, c, attempt_cell(1, 3), harness_fmt("%lld", (long long)JINT(j, "runs.0.instance")));
	wait_text(s, c, attempt_cell(1, 4), "a10 on-demand");
	wait_text(s, c, attempt_cell(2, 7), "succeeded");
	wait_text(s, c, attempt_cell(2, 8), "-");
	wait_text(s, c, attempt_cell(2, 9), "1");
	assert_true(cdp_eval_true(c, "document.querySelectorAll('#attempts tbody tr').length === 2"));
	assert_true(cdp_eval_true(c, "document.querySelector('#attempts tr[data-attempt=\"2\"]').classList.contains('here')"));
	json_decref(j);

	/* Attempt 1's link: its lines, and it has ended. */
	json_decref(cdp_eval(c, "document.querySelector('#attempts tr[data-attempt=\"1\"] a').click(); true"));
	WAIT_FOR(s, 15000, strcmp(log_shown(c, "stdout", buf, sizeof buf), "attempt 1 begins") == 0,
		 "attempt 1's log shows '%s' on stdout", buf);
	assert_string_equal(log_shown(c, "stderr", buf, sizeof buf), "to stderr");
	wait_text(s, c, "#log-note", "Attempt 1: ended.");
	assert_true(cdp_eval_true(c, "document.querySelector('#attempts tr[data-attempt=\"1\"]').classList.contains('here')"));
	no_errors(c);
}

/* Without tokens the API is open and the page shows at once; a path that
 * is not the page's is a JSON 404. */
static void open_api_no_token(void **state)
{
	struct harness_server *s = harness_serve(NULL, 0);
	struct cdp *c = &browser;
	char *body, ctype[200];

	(void)state;
	assert_int(harness_get_text(s, "", "/", &body, ctype, sizeof ctype), 200);
	assert_string_equal(ctype, "text/html; charset=utf-8");
	assert_contains(body, "<script src=\"/dashboard.js\">");
	free(body);
	assert_int(harness_get_text(s, "", "/nothing.js", &body, ctype, sizeof ctype), 404);
	assert_string_equal(ctype, "application/json");
	free(body);
	cdp_start(c, harness_tmpdir());
	cdp_navigate(c, harness_fmt("%s/", s->url));
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('board').hidden"),
		 "the board does not show with an open API");
	assert_true(cdp_eval_true(c, "document.getElementById('forget').hidden"));
	no_errors(c);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(the_page_against_the_api),
		T(an_instance_s_handler),
		T(the_jobs_and_a_job),
		T(a_job_s_attempts_and_its_log),
		T(open_api_no_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
