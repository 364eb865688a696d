/* GET /v1/scale against a real serve configured as docs/KUBERNETES.md
 * says: plan()'s decision as numbers, for KEDA's metrics-api trigger; and
 * the page against its reply: every valueLocation it shows points at a
 * number, every trigger at /v1/scale with bearer auth, and its
 * configuration passes serve's start checks as written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The token of docs/KUBERNETES.md's [token.keda]. */
#define KEDA_TOKEN "replace-with-32-random-characters"

static char *kubernetes_md(void)
{
	const char *src = getenv("EBB_SRC");
	char *doc = harness_read_file(harness_fmt("%s/docs/KUBERNETES.md", src && *src ? src : "."), NULL);

	assert_non_null(doc);
	return doc;
}

/* The configuration docs/KUBERNETES.md shows, as written: a pointer into
 * *doc, which the caller frees. */
static char *documented_ini(char **doc)
{
	char *ini;

	*doc = kubernetes_md();
	ini = strstr(*doc, "```ini\n");
	assert_non_null(ini);
	ini += 7;
	*strstr(ini, "```") = '\0';
	return ini;
}

/* A serve with the configuration docs/KUBERNETES.md shows, but its
 * [server] section: the test's own listens on loopback. */
static struct harness_server *serve_as_documented(void)
{
	char *doc, *ini = documented_ini(&doc), *server, *next;
	struct harness_server *s;

	if ((server = strstr(ini, "[server]"))) {
		next = strstr(server + 1, "\n[");
		memmove(server, next + 1, strlen(next + 1) + 1);
	}
	s = harness_serve(ini, HARNESS_TOKENS);
	free(doc);
	return s;
}

/* GJSON's path, as KEDA reads valueLocation: members by name, separated by
 * dots (a dot in a name escaped as "\."), array elements by index. */
static json_t *gjson(json_t *v, const char *path)
{
	char part[256];

	while (v && *path) {
		size_t n = 0;
		for (; *path && *path != '.' && n < sizeof part - 1; path++) {
			if (*path == '\\' && path[1])
				path++;
			part[n++] = *path;
		}
		part[n] = '\0';
		if (*path == '.')
			path++;
		if (json_is_array(v) && strspn(part, "0123456789") == n)
			v = json_array_get(v, strtoul(part, NULL, 10));
		else
			v = json_object_get(v, part);
	}
	return v;
}

/* The value of "key:" on a line of text (quotes dropped), or NULL; with
 * yaml set, only on a line of YAML (the key first), not in prose. */
static const char *yaml_value(const char *line, const char *key, int yaml, char *buf, size_t size)
{
	const char *at = strstr(line, key);
	size_t n;

	if (!at || (yaml && at != line + strspn(line, " -")))
		return NULL;
	at += strlen(key);
	at += strspn(at, " \"");
	n = strcspn(at, "\"\n");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), at);
	return buf;
}

static json_t *scale(struct harness_server *s)
{
	json_t *r = NULL;

	assert_int(harness_call_as(s, KEDA_TOKEN, "GET", "/v1/scale", NULL, &r), 200);
	return r;
}

/* Numbers for queued work, a job leased by a worker ebb did not launch,
 * and every offer and lane with its members when idle. */
static void numbers_of_the_decision(void **state)
{
	struct harness_server *s = serve_as_documented();
	json_t *r, *lease;

	(void)state;
	r = scale(s);
	assert_int(JINT(r, "instances"), 0);
	assert_int(JINT(r, "offers.a10.instances"), 0);
	assert_int(JINT(r, "offers.h100.launch"), 0);
	assert_int(JINT(r, "lanes.express.queued"), 0);
	assert_int(JINT(r, "lanes.batch.instances"), 0);
	json_decref(r);

	/* Three jobs of ten minutes; one leased by a pod. Two wait: 1200 s
	 * of work, a 300 s wait target, no boot: one launch per job, on the
	 * cheaper offer that fits. */
	for (int k = 0; k < 3; k++)
		harness_submit(s, "{\"command\": [\"true\"], \"est_s\": 600}");
	lease = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"pod-1\", \"wait_s\": 0}", 200);
	json_decref(lease);
	r = scale(s);
	assert_int(JINT(r, "workers_not_launched"), 1);
	assert_int(JINT(r, "offers.a10.launch"), 2);
	assert_int(JINT(r, "offers.a10.instances"), 2);
	assert_int(JINT(r, "offers.a10.on-demand"), 2);
	assert_int(JINT(r, "offers.a10.spot"), 0);
	assert_int(JINT(r, "offers.h100.instances"), 0);
	assert_int(JINT(r, "instances"), 3);
	assert_int(JINT(r, "lanes.standard.queued"), 2);
	assert_int(JINT(r, "lanes.standard.leased"), 1);
	assert_int(JINT(r, "lanes.standard.launch"), 2);
	assert_int(JINT(r, "lanes.standard.instances"), 3);
	assert_int(JINT(r, "queued"), 2);
	assert_true(json_number_value(harness_jget(r, "oldest_wait_s")) >= 0);
	json_decref(r);

	/* An 8-GPU job fits the h100 alone. */
	harness_submit(s, "{\"command\": [\"true\"], \"gpus\": 8, \"lane\": \"batch\"}");
	r = scale(s);
	assert_int(JINT(r, "offers.h100.launch"), 1);
	assert_int(JINT(r, "lanes.batch.launch"), 1);
	assert_int(JINT(r, "instances"), 4);
	json_decref(r);

	/* Read-only, for any valid token; none is a 401. */
	assert_int(harness_call_as(s, "", "GET", "/v1/scale", NULL, NULL), 401);
	assert_int(harness_call_as(s, KEDA_TOKEN, "POST", "/v1/scale", NULL, NULL), 405);
}

/* With a provider, the instances up count in their offer. */
static void the_fleet_counts(void **state)
{
	struct harness_server *s = harness_serve("[provider]\nkind = local\n[local]\ngpus = 0\n"
						 "[offer.a10]\ngpus = 1\nprice_ondemand = 1\n"
						 "[scaler]\ninterval = 200ms\nidle_timeout = 10m\n",
						 0);
	json_t *r;

	(void)state;
	harness_own_workers(s);
	harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 30000, harness_stat(s, "states.succeeded") == 1, "the job did not run");
	r = harness_get(s, "/v1/scale");
	assert_int(JINT(r, "offers.a10.instances"), 1);
	assert_int(JINT(r, "offers.a10.launch"), 0);
	assert_int(JINT(r, "instances"), 1);
	assert_int(JINT(r, "workers_not_launched"), 0);
	json_decref(r);
}

/* Every trigger of docs/KUBERNETES.md against the reply. */
static void kubernetes_md_points_at_numbers(void **state)
{
	struct harness_server *s = serve_as_documented();
	char *doc = kubernetes_md(), *save = NULL, value[256];
	int triggers = 0, locations = 0, urls = 0, bearer = 0;
	json_t *r;

	(void)state;
	r = scale(s);
	for (char *line = strtok_r(doc, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *v;
		triggers += yaml_value(line, "type:", 1, value, sizeof value) && strcmp(value, "metrics-api") == 0;
		bearer += yaml_value(line, "authMode:", 1, value, sizeof value) && strcmp(value, "bearer") == 0;
		if (yaml_value(line, "url:", 1, value, sizeof value)) {
			assert_non_null(strstr(value, "/v1/scale"));
			urls++;
		}
		/* Prose shows some too, quoted in backticks. */
		if (!yaml_value(line, "valueLocation:", 0, value, sizeof value))
			continue;
		value[strcspn(value, "`")] = '\0';
		locations++;
		if (!json_is_number(v = gjson(r, value)))
			fail_msg("docs/KUBERNETES.md: valueLocation \"%s\" is not a number in the reply", value);
	}
	assert_int(triggers, 3);
	assert_int(urls, 3);
	assert_int(bearer, 3);
	assert_true(locations >= 3);
	json_decref(r);
	free(doc);
}

/* The page's configuration, [server] and all, passes the checks serve
 * makes at start (`ebb config -c`): it starts as written. */
static void kubernetes_md_config_passes(void **state)
{
	char *doc, *ini = documented_ini(&doc);
	const char *conf = harness_fmt("%s/ebb.conf", harness_tmpdir());
	struct harness_run r;

	(void)state;
	harness_write_file(conf, ini);
	free(doc);
	harness_ebb(&r, NULL, "config", "-c", conf, NULL);
	if (r.status != 0)
		fail_msg("docs/KUBERNETES.md's configuration: ebb config exited %d: %s", r.status, r.err);
	assert_contains(r.out, "listen = 0.0.0.0:7070\n");
	harness_run_free(&r);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(numbers_of_the_decision),
		T(the_fleet_counts),
		T(kubernetes_md_points_at_numbers),
		T(kubernetes_md_config_passes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
