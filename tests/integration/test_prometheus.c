/* ebb with a real Prometheus (Debian's prometheus package, started here on
 * loopback in a temp dir and stopped at the end): the rules of
 * contrib/prometheus pass `promtool check rules` and their unit tests
 * (`promtool test rules`); then Prometheus scrapes a real serve, with a
 * bearer token, while jobs of two teams run on local instances, and every
 * query of the Grafana board (contrib/grafana/ebb-dashboard.json) and of
 * the rules goes through its HTTP API: each parses, and returns data. */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define PROM_TOKEN "prometheus-secret-0123"

static const char *src(void)
{
	const char *s = getenv("EBB_SRC");

	return s && *s ? s : ".";
}

/* A command's status and its output (to free), through sh. */
static int run(const char *cmd, char **out)
{
	char buf[8192];
	size_t n;
	FILE *p = popen(harness_fmt("%s 2>&1", cmd), "r");
	int status;

	if (!p)
		fail_msg("cannot run %s", cmd);
	n = fread(buf, 1, sizeof buf - 1, p);
	buf[n] = '\0';
	status = pclose(p);
	*out = strdup(buf);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		fail_msg("%s: not found: install Debian's prometheus package (scripts/deps.sh)", cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void rules_pass_promtool(void **state)
{
	char *out;

	(void)state;
	if (run(harness_fmt("promtool check rules '%s/contrib/prometheus/ebb-rules.yml'", src()), &out) != 0)
		fail_msg("promtool check rules:\n%s", out);
	assert_contains(out, "SUCCESS: 9 rules found");
	free(out);
	if (run(harness_fmt("cd '%s/contrib/prometheus' && promtool test rules ebb-rules.test.yml", src()), &out) != 0)
		fail_msg("promtool test rules:\n%s", out);
	assert_contains(out, "SUCCESS");
	free(out);
}

/* ---- a Prometheus of the test's own ---- */

struct prometheus {
	pid_t pid;
	int port;
	char dir[4096];
};

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	char **buf = arg;
	size_t len = *buf ? strlen(*buf) : 0;
	char *p = realloc(*buf, len + size * n + 1);

	if (!p)
		return 0;
	memcpy(p + len, data, size * n);
	p[len + size * n] = '\0';
	*buf = p;
	return size * n;
}

/* GET path of Prometheus: the status, the body in *body (to free). */
static long prom_get(const struct prometheus *p, const char *path, char **body)
{
	CURL *c = curl_easy_init();
	long status = -1;

	*body = NULL;
	curl_easy_setopt(c, CURLOPT_URL, harness_fmt("http://127.0.0.1:%d%s", p->port, path));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

/* An instant query through the HTTP API: its reply, which must say
 * success (a query that does not parse fails the test). */
static json_t *query(const struct prometheus *p, const char *expr)
{
	CURL *c = curl_easy_init();
	char *q = curl_easy_escape(c, expr, 0), *body;
	long status = prom_get(p, harness_fmt("/api/v1/query?query=%s", q), &body);
	json_t *r = body ? json_loads(body, 0, NULL) : NULL;

	curl_free(q);
	curl_easy_cleanup(c);
	if (status != 200 || !r || strcmp(JSTR(r, "status"), "success") != 0)
		fail_msg("query %s: HTTP %ld: %s", expr, status, body ? body : "(no reply)");
	free(body);
	return r;
}

static int results(const struct prometheus *p, const char *expr)
{
	json_t *r = query(p, expr);
	int n = (int)json_array_size(harness_jget(r, "data.result"));

	json_decref(r);
	return n;
}

static void prometheus_start(struct prometheus *p, struct harness_server *s)
{
	const char *conf, *token;
	int64_t until;
	char *body;

	snprintf(p->dir, sizeof p->dir, "%s", harness_tmpdir());
	p->port = harness_free_port();
	token = harness_fmt("%s/token", p->dir);
	harness_write_file(token, PROM_TOKEN);
	conf = harness_fmt("%s/prometheus.yml", p->dir);
	harness_write_file(conf, harness_fmt("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
					     "rule_files: ['%s/contrib/prometheus/ebb-rules.yml']\n"
					     "scrape_configs:\n  - job_name: ebb\n"
					     "    authorization: {credentials_file: '%s'}\n"
					     "    static_configs: [{targets: ['127.0.0.1:%d']}]\n",
					     src(), token, s->port));
	if ((p->pid = fork()) == 0) {
		FILE *log = freopen(harness_fmt("%s/prometheus.log", p->dir), "w", stderr);
		(void)log;
		dup2(2, 1);
		execlp("prometheus", "prometheus", harness_fmt("--config.file=%s", conf),
		       harness_fmt("--storage.tsdb.path=%s/data", p->dir),
		       harness_fmt("--web.listen-address=127.0.0.1:%d", p->port), "--log.level=warn", (char *)NULL);
		_exit(127);
	}
	for (until = harness_now_ms() + 30000; prom_get(p, "/-/ready", &body) != 200; harness_sleep_ms(100)) {
		int status;
		free(body);
		if (waitpid(p->pid, &status, WNOHANG) == p->pid)
			fail_msg("prometheus exited (status %d): see %s/prometheus.log; install Debian's prometheus"
				 " package (scripts/deps.sh)", status, p->dir);
		if (harness_now_ms() > until)
			fail_msg("prometheus not ready after 30 s");
	}
	free(body);
}

static void prometheus_stop(struct prometheus *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
}

/* The test's Prometheus, stopped by the teardown whether the test passed
 * or failed half-way. */
static struct prometheus prom;

static int teardown(void **state)
{
	prometheus_stop(&prom);
	return harness_cleanup(state);
}

/* The expressions of the rules file, one per "expr:" line. */
static int rule_exprs(char exprs[][600], int max)
{
	char *text = harness_read_file(harness_fmt("%s/contrib/prometheus/ebb-rules.yml", src()), NULL), *save = NULL;
	int n = 0;

	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *at = strstr(line, "expr: ");
		if (at && at == line + strspn(line, " "))
			snprintf(exprs[n++], sizeof exprs[0], "%s", at + 6);
	}
	free(text);
	return n;
}

/* Where `op` stands in e outside brackets and quotes, or NULL. */
static char *top_level(char *e, const char *op)
{
	int depth = 0, quoted = 0;
	size_t n = strlen(op);

	for (char *p = e; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && strchr("({[", *p))
			depth++;
		else if (!quoted && strchr(")}]", *p))
			depth--;
		else if (!quoted && depth == 0 && strncmp(p, op, n) == 0)
			return p;
	}
	return NULL;
}

/* The measures of a rule: each side of its comparisons (of each operand
 * of a top-level "or"), a number or a vector matching ("on(lane) ")
 * aside. Each must return data. */
static void check_measures(const struct prometheus *p, char *e)
{
	static const char *const ops[] = {" >= ", " <= ", " == ", " != ", " > ", " < ", NULL};
	char *or = top_level(e, " or ");

	if (or) {
		*or = '\0';
		check_measures(p, e);
		check_measures(p, or + 4);
		return;
	}
	for (int k = 0; ops[k]; k++) {
		char *at = top_level(e, ops[k]), *right;
		if (!at)
			continue;
		*at = '\0';
		right = at + strlen(ops[k]);
		if (strncmp(right, "on(", 3) == 0)
			right = strchr(right, ')') + 2;
		if (results(p, e) == 0)
			fail_msg("the measure %s returns nothing", e);
		if (strspn(right, "0123456789.") != strlen(right) && results(p, right) == 0)
			fail_msg("the measure %s returns nothing", right);
		return;
	}
	fail_msg("rule %s: no comparison", e);
}

/* "$__rate_interval" and the other variables of Grafana, as it would set them. */
static const char *grafana_vars(const char *expr)
{
	static char out[2048];
	const struct {
		const char *var, *value;
	} vars[] = {{"$__rate_interval", "1m"}, {"$__range", "1h"}};
	size_t o = 0;

	for (const char *e = expr; *e && o < sizeof out - 8;) {
		size_t k;
		for (k = 0; k < 2 && strncmp(e, vars[k].var, strlen(vars[k].var)) != 0; k++)
			;
		if (k < 2) {
			o += (size_t)snprintf(out + o, sizeof out - o, "%s", vars[k].value);
			e += strlen(vars[k].var);
		} else {
			out[o++] = *e++;
		}
	}
	out[o] = '\0';
	return out;
}

static void board_and_rules_on_real_data(void **state)
{
	struct harness_server *s = harness_serve(
		"[token.prometheus]\nsecret = " PROM_TOKEN "\nrole = worker\n"
		"[provider]\nkind = local\n[local]\ngpus = 0,1\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.06\nprice_spot = 1\nbilling_minimum = 0s\n"
		"[scaler]\ninterval = 200ms\nidle_timeout = 10m\n"
		"[team.ml]\nquota_gpus = 1\nmonthly_budget = 100\n",
		HARNESS_TOKENS);
	struct prometheus *p = &prom;
	char exprs[16][600];
	json_t *board, *panel, *target, *rules, *group, *rule;
	size_t i, j, k;
	int n, checked = 0;
	char *body;

	(void)state;
	harness_own_workers(s);
	prometheus_start(p, s);
	/* Up, and scraped a few times before the jobs. */
	WAIT_FOR(s, 30000, results(p, "up{job=\"ebb\"} == 1") == 1, "prometheus does not scrape ebb: see %s", p->dir);
	for (int t = 0; t < 3; t++)
		harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.5\"], \"items\": 10, \"team\": \"ml\"}");
	for (int t = 0; t < 2; t++)
		harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.5\"], \"items\": 4, \"team\": \"cv\"}");
	harness_submit(s, "{\"command\": [\"false\"], \"max_attempts\": 1, \"team\": \"cv\"}");
	WAIT_FOR(s, 60000, harness_stat(s, "states.succeeded") == 5 && harness_stat(s, "states.dead") == 1,
		 "the jobs did not end: %lld succeeded, %lld dead", (long long)harness_stat(s, "states.succeeded"),
		 (long long)harness_stat(s, "states.dead"));
	/* Scraped with every item done: the rates have their samples. */
	WAIT_FOR(s, 30000, results(p, "ebb_items_done_total == 38") == 1 &&
			   results(p, "count_over_time(ebb_items_done_total[1m]) > 3") == 1,
		 "prometheus has not scraped the jobs' end");

	body = harness_read_file(harness_fmt("%s/contrib/grafana/ebb-dashboard.json", src()), NULL);
	board = harness_json(body);
	free(body);
	json_array_foreach(json_object_get(board, "panels"), i, panel) {
		json_array_foreach(json_object_get(panel, "targets"), j, target) {
			const char *expr = grafana_vars(json_string_value(json_object_get(target, "expr")));
			if (results(p, expr) == 0)
				fail_msg("panel '%s': %s returns nothing", JSTR(panel, "title"), expr);
			checked++;
		}
	}
	json_decref(board);
	assert_true(checked >= 20);

	n = rule_exprs(exprs, 16);
	assert_int(n, 9);
	for (int r = 0; r < n; r++) {
		json_decref(query(p, exprs[r])); /* parses */
		check_measures(p, exprs[r]);
	}
	/* Prometheus evaluates them too, without an error. */
	assert_int(prom_get(p, "/api/v1/rules", &body), 200);
	rules = harness_json(body);
	free(body);
	k = 0;
	json_array_foreach(harness_jget(rules, "data.groups"), i, group) {
		json_array_foreach(json_object_get(group, "rules"), j, rule) {
			if (strcmp(JSTR(rule, "health"), "ok") != 0)
				fail_msg("rule %s: health %s: %s", JSTR(rule, "name"), JSTR(rule, "health"), JSTR(rule, "lastError"));
			k++;
		}
	}
	assert_int(k, 9);
	json_decref(rules);
	/* The job that went dead fires EbbJobsDeadLettered in Prometheus too. */
	WAIT_FOR(s, 20000, results(p, "ALERTS{alertname=\"EbbJobsDeadLettered\",alertstate=\"firing\"}") == 1,
		 "EbbJobsDeadLettered does not fire in prometheus");
	prometheus_stop(p);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(rules_pass_promtool),
		T(board_and_rules_on_real_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
