/* HTTPS end to end: a CA and server certificates made by the openssl
 * command, a real `ebb serve` with [server] tls_cert and tls_key, and its
 * real clients (the CLI, `ebb worker`, the local provider's workers, the
 * project's HTTP client) verifying it. The certificate is replaced under
 * a running serve with SIGHUP; the start-up checks are run on `ebb serve`
 * itself, and on `ebb config -c`, which makes the same. */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Made once by make_certs(): a CA, two server certificates it signed for
 * 127.0.0.1 (a: EC, CN=ebb-a; b: RSA, CN=ebb-b), and another CA that
 * signed neither. */
static char dir[4096];
static char ca[4200], other_ca[4200];

static const char *path(const char *name) { return harness_fmt("%s/%s", dir, name); }

/* Runs a shell command; the test fails, showing its output, unless it
 * exits 0. */
static void sh(const char *cmd)
{
	const char *log = path("openssl.log");
	char *text;

	if (system(harness_fmt("(%s) >%s 2>&1", cmd, log)) == 0)
		return;
	text = harness_read_file(log, NULL);
	fail_msg("%s: failed: %s", cmd, text ? text : "");
}

/* A leaf for 127.0.0.1 signed by the CA: NAME.pem and NAME.key. */
static void make_leaf(const char *name, const char *newkey)
{
	sh(harness_fmt("openssl req -new -newkey %s -nodes -keyout %s -out %s -subj /CN=ebb-%s", newkey,
		       path(harness_fmt("%s.key", name)), path(harness_fmt("%s.csr", name)), name));
	sh(harness_fmt("openssl x509 -req -in %s -CA %s -CAkey %s -set_serial 0x%s1 -days 2 -extfile %s -out %s",
		       path(harness_fmt("%s.csr", name)), ca, path("ca.key"), name, path("leaf.ext"),
		       path(harness_fmt("%s.pem", name))));
}

static void make_ca(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s", path(harness_fmt("%s.pem", name)));
	sh(harness_fmt("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s -out %s"
		       " -days 2 -subj '/CN=ebb test %s' -addext basicConstraints=critical,CA:TRUE"
		       " -addext keyUsage=critical,keyCertSign,cRLSign",
		       path(harness_fmt("%s.key", name)), out, name));
}

static int make_certs(void **state)
{
	(void)state;
	/* Not harness_tmpdir(): harness_cleanup() after each test removes those. */
	snprintf(dir, sizeof dir, "%s/ebb-tls.XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		fail_msg("mkdtemp %s failed", dir);
	harness_write_file(path("leaf.ext"), "subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n"
					     "keyUsage = digitalSignature, keyEncipherment\n"
					     "extendedKeyUsage = serverAuth\n");
	make_ca("ca", ca, sizeof ca);
	make_ca("other", other_ca, sizeof other_ca);
	make_leaf("a", "ec -pkeyopt ec_paramgen_curve:P-256");
	make_leaf("b", "rsa:2048");
	sh(harness_fmt("openssl pkcs8 -topk8 -in %s -passout pass:secret -out %s", path("a.key"),
		       path("a-encrypted.key")));
	return 0;
}

static int remove_certs(void **state)
{
	(void)state;
	harness_cleanup(NULL);
	if (!getenv("EBB_KEEP_TMP"))
		harness_rmtree(dir);
	return 0;
}

static void copy_file(const char *from, const char *to)
{
	char *text = harness_read_file(from, NULL);

	if (!text)
		fail_msg("cannot read %s", from);
	harness_write_file(to, text);
	free(text);
}

/* The [server] lines of a serve with certificate NAME. */
static const char *tls_conf(const char *name)
{
	return harness_fmt("[server]\ntls_cert = %s\ntls_key = %s\n", path(harness_fmt("%s.pem", name)),
			   path(harness_fmt("%s.key", name)));
}

/* ---- what a client sees ---- */

static size_t discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/* The subject of the certificate a new connection to s is shown, or "".
 * Its own handle and connection: kept-alive ones would show the old. */
static const char *served_subject(struct harness_server *s)
{
	static char subject[256];
	struct curl_certinfo *info = NULL;
	CURL *curl = curl_easy_init();
	CURLcode rc;

	subject[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, harness_fmt("%s/v1/stats", s->url));
	curl_easy_setopt(curl, CURLOPT_CAINFO, ca);
	curl_easy_setopt(curl, CURLOPT_CERTINFO, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK)
		harness_fail_with_log(s, "GET /v1/stats over TLS: %s", curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_CERTINFO, &info);
	for (struct curl_slist *f = info && info->num_of_certs > 0 ? info->certinfo[0] : NULL; f; f = f->next) {
		if (strncmp(f->data, "Subject:", 8) == 0)
			snprintf(subject, sizeof subject, "%s", f->data + 8);
	}
	curl_easy_cleanup(curl);
	return subject;
}

/* ---- the CLI ---- */

static void cli_verifies_the_server(void **state)
{
	struct harness_server *s = harness_serve_tls(ca, tls_conf("a"), 0);
	struct harness_run r;
	json_t *v;
	int64_t id;

	(void)state;
	assert_contains(served_subject(s), "ebb-a");
	/* --cacert */
	harness_ebb(&r, NULL, "submit", "--json", "--server", s->url, "--cacert", ca, "--", "true", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	id = JINT(v, "id");
	json_decref(v);
	harness_run_free(&r);
	/* EBB_CACERT (the harness sets it for s) */
	harness_ebb(&r, s, "jobs", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_int(JINT(v, "jobs.0.id"), id);
	json_decref(v);
	harness_run_free(&r);
	/* Neither: the system's CAs do not know ours. */
	harness_ebb(&r, NULL, "jobs", "--server", s->url, NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, harness_fmt("ebb jobs: %s: the server's certificate is not trusted (", s->url));
	assert_contains(r.err, "); use --cacert FILE or EBB_CACERT\n");
	harness_run_free(&r);
	/* A CA that did not sign it. */
	harness_ebb(&r, NULL, "job", "--server", s->url, "--cacert", other_ca, harness_fmt("%lld", (long long)id),
		    NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "the server's certificate is not trusted (");
	assert_contains(r.err, harness_fmt("it must be signed by a CA in %s", other_ca));
	harness_run_free(&r);
	/* A CA file that is not there, or not PEM. */
	harness_ebb(&r, NULL, "jobs", "--server", s->url, "--cacert", path("missing.pem"), NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, harness_fmt("ebb jobs: CA file %s: cannot read: No such file or directory",
					   path("missing.pem")));
	harness_run_free(&r);
	harness_ebb(&r, NULL, "jobs", "--server", s->url, "--cacert", path("leaf.ext"), NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, harness_fmt("ebb jobs: CA file %s: cannot be used (", path("leaf.ext")));
	harness_run_free(&r);
	assert_int(harness_server_stop(s), 0);
}

/* ---- long-polls over TLS ---- */

/* A lease request that its client gives up (as a worker does on SIGTERM). */
struct given_up {
	pthread_t thread;
	struct client client;
	volatile sig_atomic_t stop;
	int status;
};

static void *given_up_main(void *arg)
{
	struct given_up *g = arg;
	json_t *body = json_pack("{s:s, s:i}", "worker", "gone", "wait_s", 60), *reply = NULL;

	g->status = client_call(&g->client, "POST", "/v1/lease", body, &reply);
	json_decref(body);
	json_decref(reply);
	return NULL;
}

static void long_polls(void **state)
{
	struct harness_server *s = harness_serve_tls(ca, tls_conf("a"), 0);
	struct harness_async a;
	struct given_up g = {0};
	json_t *r = NULL;
	int64_t id;

	(void)state;
	/* A parked lease gets the job submitted after it. */
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 60}");
	harness_wait_waiting(s, 1);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	json_decref(r);

	/* A worker that gave up its long-poll is not handed the next job,
	 * though over TLS its close comes after an alert. */
	if (client_init(&g.client, s->url, "", ca) != 0)
		fail_msg("client_init: %s", g.client.err);
	g.client.abort_flag = &g.stop;
	pthread_create(&g.thread, NULL, given_up_main, &g);
	harness_wait_waiting(s, 1);
	g.stop = 1;
	pthread_join(g.thread, NULL);
	assert_int(g.status, -1);
	client_free(&g.client); /* closes the connection */
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	assert_true(harness_job_is(s, id, "queued"));
	r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w2\", \"wait_s\": 0}", 200);
	assert_int(JINT(r, "job.id"), id);
	assert_int(JINT(r, "job.attempts"), 1);
	json_decref(r);
	assert_int(harness_server_stop(s), 0);
}

/* A real worker, started by hand, long-polls until a delayed job is
 * ready, runs it and reports it, all over TLS. */
static void worker_with_cacert(void **state)
{
	struct harness_server *s = harness_serve_tls(ca, tls_conf("a"), 0);
	struct harness_run r;
	int64_t id;
	json_t *j;

	(void)state;
	id = harness_submit(s, "{\"command\": [\"true\"], \"delay_s\": 1}");
	harness_ebb(&r, NULL, "worker", "--server", s->url, "--cacert", ca, "--idle-timeout", "3s", NULL);
	assert_int(r.status, 0);
	harness_run_free(&r);
	j = harness_get_job(s, id);
	assert_string_equal(JSTR(j, "state"), "succeeded");
	json_decref(j);

	/* Without the CA it never reaches serve, and says why. */
	harness_ebb(&r, NULL, "worker", "--server", s->url, "--orphan-timeout", "1s", NULL);
	assert_contains(r.err, "the server's certificate is not trusted");
	assert_contains(r.err, "orphaned: serve out of reach");
	harness_run_free(&r);
	assert_int(harness_server_stop(s), 0);
}

/* ---- SIGHUP ---- */

/* Sends SIGHUP and waits for the nth log line that has what. */
static void reload(struct harness_server *s, const char *what, int nth)
{
	kill(s->pid, SIGHUP);
	WAIT_FOR(s, 15000, harness_file_lines(s->log, what) >= nth, "no %d× '%s' in the log", nth, what);
}

static void sighup_replaces_the_certificate(void **state)
{
	struct harness_server *s;
	struct harness_async a;
	struct client old;
	json_t *r = NULL;
	long fresh = -1;
	int64_t id;

	(void)state;
	/* Its own copies, to overwrite. */
	copy_file(path("a.pem"), path("serve.pem"));
	copy_file(path("a.key"), path("serve.key"));
	s = harness_serve_tls(ca, harness_fmt("[server]\ntls_cert = %s\ntls_key = %s\n", path("serve.pem"),
					      path("serve.key")), 0);
	assert_contains(served_subject(s), "ebb-a");
	/* A kept-alive connection and a parked long-poll from before. */
	if (client_init(&old, s->url, "", ca) != 0)
		fail_msg("client_init: %s", old.err);
	assert_int(client_call(&old, "GET", "/v1/stats", NULL, &r), 200);
	json_decref(r);
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 60}");
	harness_wait_waiting(s, 1);

	copy_file(path("b.pem"), path("serve.pem"));
	copy_file(path("b.key"), path("serve.key"));
	reload(s, "msg=\"tls certificate reloaded\" subject=\"CN=ebb-b\" serial=b1 ", 1);
	assert_contains(served_subject(s), "ebb-b");
	/* What was open before goes on, on its old connection. */
	assert_int(client_call(&old, "GET", "/v1/stats", NULL, &r), 200);
	json_decref(r);
	curl_easy_getinfo((CURL *)old.curl, CURLINFO_NUM_CONNECTS, &fresh);
	assert_int(fresh, 0);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_int(JINT(r, "job.id"), id);
	json_decref(r);

	/* Files that cannot be used change nothing, and serve says why. */
	harness_write_file(path("serve.pem"), "not a certificate\n");
	reload(s, "msg=\"tls certificate not reloaded: the one in use stays\"", 1);
	assert_int(harness_file_lines(s->log, harness_fmt("reason=\"tls_cert %s: ", path("serve.pem"))), 1);
	assert_contains(served_subject(s), "ebb-b");
	copy_file(path("b.pem"), path("serve.pem"));
	copy_file(path("a.key"), path("serve.key"));
	reload(s, "msg=\"tls certificate not reloaded: the one in use stays\"", 2);
	assert_int(harness_file_lines(s->log, harness_fmt("reason=\"tls_key %s: not the key of tls_cert %s: ",
							  path("serve.key"), path("serve.pem"))),
		   1);
	assert_contains(served_subject(s), "ebb-b");
	assert_int(client_call(&old, "GET", "/v1/stats", NULL, &r), 200);
	json_decref(r);

	/* Back to a, then the oldest connection goes: the generations it
	 * held are freed (ASan sees them used after, or leaked). */
	copy_file(path("a.pem"), path("serve.pem"));
	reload(s, "msg=\"tls certificate reloaded\" subject=\"CN=ebb-a\"", 1);
	client_free(&old);
	assert_contains(served_subject(s), "ebb-a");
	assert_int(harness_server_stop(s), 0);
}

/* ---- what serve refuses ---- */

static void plain_http_gets_nothing_done(void **state)
{
	struct harness_server *s = harness_serve_tls(ca, tls_conf("a"), 0);
	const char *plain = harness_fmt("http://127.0.0.1:%d", s->port);
	struct client c;
	json_t *body = json_pack("{s:[s]}", "command", "true"), *r = NULL;

	(void)state;
	if (client_init(&c, plain, "", "") != 0)
		fail_msg("client_init: %s", c.err);
	assert_int(client_call(&c, "POST", "/v1/jobs", body, &r), -1);
	assert_null(r);
	client_free(&c);
	json_decref(body);
	assert_int(harness_stat(s, "states.queued"), 0);
	assert_int(harness_server_stop(s), 0);
}

/* Files serve refuses at start, and `ebb config -c` with them, for the
 * same reason. */
static void config_errors(void **state)
{
	(void)state;
	harness_assert_refused(harness_fmt("tls_cert = %s\n", path("a.pem")),
			       "[server] tls_cert: set without tls_key; give both or neither");
	harness_assert_refused(harness_fmt("tls_key = %s\n", path("a.key")),
			       "[server] tls_key: set without tls_cert; give both or neither");
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n", path("missing.pem"), path("a.key")),
			       harness_fmt("tls_cert %s: cannot read: No such file or directory", path("missing.pem")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n", path("a.pem"), path("a.pem")),
			       harness_fmt("tls_key %s: no PEM private key in it", path("a.pem")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n", path("a.pem"), path("a-encrypted.key")),
			       harness_fmt("tls_key %s: the key is encrypted; serve needs it unencrypted (",
					   path("a-encrypted.key")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n", path("a.key"), path("a.key")),
			       harness_fmt("tls_cert %s: ", path("a.key")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n", path("a.pem"), path("b.key")),
			       harness_fmt("tls_key %s: not the key of tls_cert %s: The certificate and the given key"
					   " do not match.", path("b.key"), path("a.pem")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n[provider]\nkind = local\nworker_cacert = %s\n",
					   path("a.pem"), path("a.key"), path("missing.pem")),
			       harness_fmt("[provider] worker_cacert %s: No such file or directory", path("missing.pem")));
	harness_assert_refused(harness_fmt("tls_cert = %s\ntls_key = %s\n[provider]\nkind = local\nworker_cacert = %s\n",
					   path("a.pem"), path("a.key"), path("a.key")),
			       harness_fmt("[provider] worker_cacert %s: no PEM certificate in it", path("a.key")));
}

/* What `ebb config -c` passes starts: off loopback with TLS and a token,
 * the exec provider with its program, an offer's own program and the
 * workers' CA. */
static void a_checked_file_starts(void **state)
{
	const char *src = getenv("EBB_SRC"), *program;
	struct harness_server *s;
	struct harness_run r;

	(void)state;
	program = harness_fmt("%s/tests/exec/provider", src && *src ? src : ".");
	setenv("EBB_TEST_PROVIDER_DIR", harness_tmpdir(), 1);
	s = harness_serve_tls(ca,
			      harness_fmt("%slisten = 0.0.0.0:0\n[provider]\nkind = exec\nworker_cacert = %s\n"
					  "[exec]\ncommand = %s\n[offer.a]\nprice_ondemand = 1\ncommand = %s\n",
					  tls_conf("a"), ca, program, program),
			      HARNESS_TOKENS);
	harness_ebb(&r, NULL, "config", "-c", s->conf, NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "listen = 0.0.0.0:0\n");
	harness_run_free(&r);
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
	assert_int(harness_file_lines(s->log, "msg=\"scaler started\" provider=exec"), 1);
	assert_int(harness_server_stop(s), 0);
}

static void off_loopback(void **state)
{
	struct harness_server *s;
	struct harness_run r;

	(void)state;
	/* The network said private: plain HTTP, with a warning. */
	s = harness_serve("[server]\nlisten = 0.0.0.0:0\nprivate_network = on\n", HARNESS_TOKENS);
	assert_int(harness_file_lines(s->log, "level=warn msg=\"plain HTTP off loopback: tokens and jobs cross the"
					      " network unencrypted\" addr=0.0.0.0:0"),
		   1);
	assert_int(harness_stat(s, "states.queued"), 0);
	/* https:// to a plain HTTP serve */
	harness_ebb(&r, NULL, "jobs", "--server", harness_fmt("https://127.0.0.1:%d", s->port), NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "the TLS handshake failed (");
	assert_contains(r.err, "); does the server speak HTTPS?\n");
	harness_run_free(&r);
	harness_server_free(s);
	/* TLS: no warning. */
	s = harness_serve_tls(ca, harness_fmt("%slisten = 0.0.0.0:0\n", tls_conf("a")), HARNESS_TOKENS);
	assert_int(harness_file_lines(s->log, "plain HTTP"), 0);
	assert_int(harness_file_lines(s->log, "tls=on"), 1);
	assert_int(harness_stat(s, "states.queued"), 0);
	assert_int(harness_server_stop(s), 0);
}

/* ---- workers a provider starts ---- */

/* The local provider's workers get the CA as EBB_CACERT: they register,
 * lease and report over TLS. */
static void local_workers_trust_worker_cacert(void **state)
{
	struct harness_server *s = harness_serve_tls(
		ca,
		harness_fmt("%s[provider]\nkind = local\nworker_cacert = %s\n[local]\ngpus = 0\n"
			    "[lane.standard]\nwait_target = 1s\n[scaler]\ninterval = 200ms\n",
			    tls_conf("a"), ca),
		0);
	int64_t id;

	(void)state;
	harness_own_workers(s);
	assert_int(harness_file_lines(s->log, harness_fmt("workers_reach=%s", s->url)), 1);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	/* Their reclaim notice is serve's too (their stderr is serve's). */
	assert_int(harness_file_lines(s->log, "msg=\"reclaim notice: no answer\""), 0);
	assert_int(harness_server_stop(s), 0);
}

/* An exec provider's program gets the CA's text in the launch message;
 * tests/exec/provider writes it to a file for EBB_CACERT, as a program
 * for a cloud would on the instance, and its worker runs the job. */
static void exec_workers_get_the_ca(void **state)
{
	const char *src = getenv("EBB_SRC");
	char pdir[4200], *want = harness_read_file(ca, NULL), *got;
	struct harness_server *s;
	int64_t id;
	json_t *m;

	(void)state;
	snprintf(pdir, sizeof pdir, "%s", harness_tmpdir());
	setenv("EBB_TEST_PROVIDER_DIR", pdir, 1);
	s = harness_serve_tls(ca,
			      harness_fmt("%s[provider]\nkind = exec\nworker_cacert = %s\n[exec]\n"
					  "command = %s/tests/exec/provider\n[lane.standard]\nwait_target = 1s\n"
					  "[scaler]\ninterval = 200ms\n",
					  tls_conf("a"), ca, src && *src ? src : "."),
			      0);
	harness_own_workers(s);
	id = harness_submit(s, "{\"command\": [\"true\"]}");
	WAIT_FOR(s, 60000, harness_job_is(s, id, "succeeded"), "job %lld did not succeed", (long long)id);
	got = harness_read_file(harness_fmt("%s/launch.1.json", pdir), NULL);
	if (!got)
		harness_fail_with_log(s, "no launch.1.json from the provider program");
	m = harness_json(got);
	assert_string_equal(JSTR(m, "worker.cacert_pem"), want);
	assert_string_equal(JSTR(m, "worker.server_url"), s->url);
	json_decref(m);
	free(got);
	free(want);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(cli_verifies_the_server, harness_cleanup),
		cmocka_unit_test_teardown(long_polls, harness_cleanup),
		cmocka_unit_test_teardown(worker_with_cacert, harness_cleanup),
		cmocka_unit_test_teardown(sighup_replaces_the_certificate, harness_cleanup),
		cmocka_unit_test_teardown(plain_http_gets_nothing_done, harness_cleanup),
		cmocka_unit_test_teardown(config_errors, harness_cleanup),
		cmocka_unit_test_teardown(a_checked_file_starts, harness_cleanup),
		cmocka_unit_test_teardown(off_loopback, harness_cleanup),
		cmocka_unit_test_teardown(local_workers_trust_worker_cacert, harness_cleanup),
		cmocka_unit_test_teardown(exec_workers_get_the_ca, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, make_certs, remove_certs);
}
