/* The dashboard at / in headless Chromium (Debian's chromium, driven over
 * its DevTools protocol through a pipe: cdp.h), against a real serve whose
 * local instances ran real jobs: the page asks for the token once, shows
 * the numbers the API shows, follows the queue when it changes, fits a
 * phone's width, and reports no error (console, exceptions, a refused or
 * missing resource). EBB_SCREENSHOT=FILE keeps a screenshot of it
 * (docs/dashboard.png is one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('login').hidden"),
		 "the page does not ask for the token");
	json_decref(cdp_eval(c, harness_fmt("document.getElementById('token').value = '%s';"
					    " document.getElementById('login').requestSubmit(); true",
					    HARNESS_ADMIN)));
	WAIT_FOR(s, 15000, !cdp_eval_true(c, "document.getElementById('board').hidden"),
		 "the board does not show after the token");

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
		T(open_api_no_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
