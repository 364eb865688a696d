/* The tests' shared helpers (see harness.h). */
#include "harness.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common/config.h"
#include "common/fnv.h"
#include "store/store.h"

#define START_TIMEOUT_MS 15000 /* a cold start under ASan on a busy machine */
#define STOP_TIMEOUT_MS 15000
/* A command run to its end: the tree-wide checks (check-dead.sh, shellcheck)
 * take 20 s of a loaded machine under the sanitizers' runs beside them. */
#define RUN_TIMEOUT_MS 120000

struct tmpdir {
	char *path;
	struct tmpdir *next;
};

static struct tmpdir *tmpdirs;
static struct harness_server *servers;
static char *cli_dir;

static void kill_owned_workers(void);
static void cleanup_at_exit(void) { harness_cleanup(NULL); }

/* Lines in order when stdout is a pipe (tests/run.sh), and the curl
 * globals set up before any thread may want them. */
__attribute__((constructor)) static void harness_init(void)
{
	const char *only = getenv("EBB_TEST"); /* a test name or pattern: run only those */

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (only && *only)
		cmocka_set_test_filter(only);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	atexit(cleanup_at_exit);
}

int64_t harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void harness_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};

	nanosleep(&ts, NULL);
}

const char *harness_fmt(const char *fmt, ...)
{
	static char bufs[8][8192];
	static int next;
	char *buf = bufs[next++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof bufs[0], fmt, ap);
	va_end(ap);
	return buf;
}

/* ---- files and directories ---- */

const char *harness_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char path[4096];
	struct tmpdir *t;

	snprintf(path, sizeof path, "%s/ebb-test.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(path))
		fail_msg("mkdtemp %s: %s", path, strerror(errno));
	t = calloc(1, sizeof *t);
	t->path = strdup(path);
	t->next = tmpdirs;
	tmpdirs = t;
	return t->path;
}

void harness_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode) && (d = opendir(path))) {
		while ((e = readdir(d))) {
			char child[4600];
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(child, sizeof child, "%s/%s", path, e->d_name);
			harness_rmtree(child);
		}
		closedir(d);
	}
	remove(path);
}

void harness_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0)
		fail_msg("cannot write %s: %s", path, strerror(errno));
}

char *harness_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			buf = realloc(buf, cap);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

pid_t harness_read_pid(const char *path)
{
	char *text = harness_read_file(path, NULL);
	pid_t pid = text ? (pid_t)atoi(text) : 0;

	free(text);
	return pid > 0 ? pid : 0;
}

/* ---- child processes ---- */

/* $EBB_BIN made absolute: the children run in their own directories. */
const char *harness_ebb_bin(void)
{
	static char path[4096];
	const char *bin = getenv("EBB_BIN");

	if (path[0])
		return path;
	if (!bin || !*bin)
		fail_msg("EBB_BIN is not set: the path of the ebb binary (make test sets it)");
	if (access(bin, X_OK) != 0 || !realpath(bin, path)) {
		path[0] = '\0';
		fail_msg("EBB_BIN=%s: %s", bin, strerror(errno));
	}
	return path;
}

/* In the child after fork: die with the test process, so that a test
 * killed by its timeout leaves no server behind. */
/* In a child: dies with the test, runs in dir, reads in_path (NULL:
 * /dev/null), writes to the files out_path and err_path. */
static void child_setup(const char *dir, const char *in_path, const char *out_path, const char *err_path)
{
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(127);
	if (chdir(dir) != 0)
		_exit(127);
	fd = open(in_path ? in_path : "/dev/null", O_RDONLY);
	dup2(fd, 0);
	close(fd);
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
}

/* Reaps pid within timeout_ms; its status as the shell shows it, or -1. */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int64_t until = harness_now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 || harness_now_ms() > until)
			return -1;
		harness_sleep_ms(5);
	}
}

/* ---- ebb serve ---- */

int harness_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		fail_msg("no free port: %s", strerror(errno));
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

void harness_server_dump_log(const struct harness_server *s)
{
	char *text = harness_read_file(s->log, NULL);

	/* Not print_message(): cmocka cuts what it prints at 1 KiB. */
	printf("---- %s ----\n%s---- end of log ----\n", s->log, text ? text : "(none)\n");
	fflush(stdout);
	free(text);
}

/* The port of "msg=listening ... port=N" in the log; 0 if not there yet. */
static int logged_port(const char *log)
{
	char *text = harness_read_file(log, NULL), *line, *port;
	int n = 0;

	if (text && (line = strstr(text, "msg=listening ")) && (port = strstr(line, " port=")) &&
	    strchr(port, '\n'))
		n = atoi(port + 6);
	free(text);
	return n;
}

void harness_server_start(struct harness_server *s)
{
	const char *bin = harness_ebb_bin();
	char out[4200];
	pid_t pid;

	if (s->pid)
		fail_msg("harness_server_start: serve is already running (pid %d)", (int)s->pid);
	s->starts++;
	snprintf(s->log, sizeof s->log, "%s/serve-%d.log", s->dir, s->starts);
	snprintf(out, sizeof out, "%s/serve-%d.out", s->dir, s->starts);
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		child_setup(s->dir, NULL, out, s->log);
		if (s->test_clock)
			execl(bin, "ebb", "serve", "-c", s->conf, "--test-clock", (char *)NULL);
		else
			execl(bin, "ebb", "serve", "-c", s->conf, (char *)NULL);
		_exit(127);
	}
	s->pid = pid;
	if (s->no_wait) {
		s->no_wait = 0;
		return;
	}
	harness_server_wait(s, START_TIMEOUT_MS);
}

void harness_server_wait(struct harness_server *s, int timeout_ms)
{
	int64_t until = harness_now_ms() + timeout_ms;

	while ((s->port = logged_port(s->log)) == 0) {
		int st = wait_exit(s->pid, 0);
		if (st >= 0) {
			s->pid = 0;
			harness_server_dump_log(s);
			fail_msg("ebb serve exited with status %d before it listened", st);
		}
		if (harness_now_ms() > until) {
			harness_server_kill(s);
			harness_server_dump_log(s);
			fail_msg("ebb serve did not log 'msg=listening ... port=' within %d ms", timeout_ms);
		}
		harness_sleep_ms(5);
	}
	snprintf(s->url, sizeof s->url, "%s://127.0.0.1:%d", s->cacert[0] ? "https" : "http", s->port);
	if (s->client_ready)
		client_free(&s->client);
	if (client_init(&s->client, s->url, s->token, s->cacert) != 0)
		fail_msg("client_init %s: %s", s->url, s->client.err);
	s->client_ready = 1;
}

const char *harness_store_kind(void)
{
	const char *kind = getenv("EBB_TEST_STORE");

	return kind && *kind ? kind : "sqlite";
}

const char *harness_store_url(const char *dir)
{
	static char url[2048];
	const char *server = getenv("EBB_TEST_PG");
	char name[32], sql[64];
	const char *code;
	PGconn *c;
	PGresult *r;

	if (strcmp(harness_store_kind(), "postgres") != 0)
		return NULL;
	if (!server || !*server)
		fail_msg("EBB_TEST_STORE=postgres needs EBB_TEST_PG, a server's connection string "
			 "(scripts/pg.sh start; scripts/pg.sh url DIR)");
	snprintf(name, sizeof name, "ebb_%016llx", (unsigned long long)fnv1a(FNV1A_START, dir));
	if (!(c = PQconnectdb(harness_fmt("%s dbname=postgres", server))) || PQstatus(c) != CONNECTION_OK)
		fail_msg("EBB_TEST_PG %s: %s", server, c ? PQerrorMessage(c) : "out of memory");
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	r = PQexec(c, sql);
	code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	/* 42P04: made by an earlier open of the same dir */
	if (PQresultStatus(r) != PGRES_COMMAND_OK && !(code && strcmp(code, "42P04") == 0))
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	snprintf(url, sizeof url, "%s dbname=%s", server, name);
	return url;
}

void harness_sqlite_only(const char *why)
{
	if (strcmp(harness_store_kind(), "sqlite") == 0)
		return;
	print_message("skipped with EBB_TEST_STORE=%s: %s\n", harness_store_kind(), why);
	skip();
}

struct store *harness_store_open(struct config *cfg, const char *dir)
{
	const char *url = harness_store_url(dir);
	char err[1024];
	struct store *st;

	free(cfg->data_dir);
	free(cfg->store_kind);
	cfg->data_dir = strdup(dir);
	cfg->store_kind = strdup(harness_store_kind());
	if (url && config_set(cfg, "postgres", "url", url, err, sizeof err) != 0)
		fail_msg("%s (the config needs the store engines' sections: config_defaults with store_plugins)",
			 err);
	if (!(st = store_open(cfg, err, sizeof err)))
		fail_msg("store_open(%s, %s): %s", cfg->store_kind, dir, err);
	return st;
}

int harness_store_setup(void **state)
{
	struct harness_store *h = calloc(1, sizeof *h);

	h->cfg = calloc(1, sizeof *h->cfg);
	config_defaults(h->cfg, &(struct conf_plugins){store_plugins, NULL});
	h->dir = harness_tmpdir();
	h->st = harness_store_open(h->cfg, h->dir);
	*state = h;
	return 0;
}

int harness_store_teardown(void **state)
{
	struct harness_store *h = *state;

	if (h) {
		store_close(h->st);
		config_free(h->cfg);
		free(h->cfg);
		free(h);
	}
	return harness_cleanup(NULL);
}

void harness_store_reopen(struct harness_store *h)
{
	store_close(h->st);
	h->st = NULL;
	h->st = harness_store_open(h->cfg, h->dir);
}

void harness_store_ok(struct harness_store *h, int rc, const char *call, const char *file, int line)
{
	if (rc == 0)
		return;
	print_error("%s returned %d: %s\n", call, rc, store_error(h->st));
	_fail(file, line);
}

static int see_sum(void *arg, const struct ledger_sum *g)
{
	return harness_row(arg, "%s %s %s %s: %lldms %ggpu-ms $%g items=%lld", g->offer, market_name(g->market), g->kind,
			   g->team[0] ? g->team : "-", (long long)g->ms, g->gpu_ms, g->cost, (long long)g->items);
}

const char *harness_ledger_sums(struct harness_store *h, int64_t since_day)
{
	struct harness_rows r = {0};

	STORE_OK(h, store_ledger_sums(h->st, since_day, see_sum, &r));
	return harness_rows_text(&r, 1);
}

int harness_row(struct harness_rows *r, const char *fmt, ...)
{
	va_list ap;

	if (r->n == HARNESS_ROWS_MAX)
		fail_msg("more than %d rows", HARNESS_ROWS_MAX);
	va_start(ap, fmt);
	vsnprintf(r->line[r->n++], sizeof r->line[0], fmt, ap);
	va_end(ap);
	return r->n == r->stop_at ? HARNESS_STOP : 0;
}

static int by_text(const void *a, const void *b) { return strcmp(a, b); }

const char *harness_rows_text(struct harness_rows *r, int sorted)
{
	char text[HARNESS_ROWS_MAX * (sizeof r->line[0] + 3)] = "";
	size_t len = 0;

	if (sorted)
		qsort(r->line, (size_t)r->n, sizeof r->line[0], by_text);
	for (int i = 0; i < r->n; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? " | " : "", r->line[i]);
	return harness_fmt("%s", text);
}

void harness_assert_walk_stops(int rc, const struct harness_rows *r, const char *call, const char *file,
			       int line)
{
	if (rc == HARNESS_STOP && r->n == 1)
		return;
	print_error("%s returned %d after %d rows, expected %d after 1\n", call, rc, r->n, HARNESS_STOP);
	_fail(file, line);
}

struct harness_server *harness_serve(const char *conf_extra, int flags)
{
	return harness_serve_tls("", conf_extra, flags);
}

struct harness_server *harness_serve_tls(const char *cacert, const char *conf_extra, int flags)
{
	struct harness_server *s = calloc(1, sizeof *s);
	const char *url;
	char conf[16384];

	harness_ebb_bin();
	snprintf(s->cacert, sizeof s->cacert, "%s", cacert);
	snprintf(s->dir, sizeof s->dir, "%s", harness_tmpdir());
	snprintf(s->conf, sizeof s->conf, "%s/ebb.conf", s->dir);
	snprintf(s->data, sizeof s->data, "%s/data", s->dir);
	url = harness_store_url(s->data);
	s->test_clock = (flags & HARNESS_TEST_CLOCK) != 0;
	s->no_wait = (flags & HARNESS_NO_WAIT) != 0;
	if (flags & HARNESS_TOKENS)
		snprintf(s->token, sizeof s->token, "%s", HARNESS_ADMIN);
	snprintf(conf, sizeof conf,
		 "# written by tests/harness.c\n"
		 "[server]\nlisten = 127.0.0.1:0\ndata_dir = %s\n[store]\nkind = %s\n%s%s%s\n%s\n%s",
		 s->data, harness_store_kind(), url ? "[postgres]\nurl = " : "", url ? url : "", url ? "\n" : "",
		 flags & HARNESS_TOKENS ? "[token.admin]\nsecret = " HARNESS_ADMIN "\nrole = admin\n" : "",
		 conf_extra ? conf_extra : "");
	harness_write_file(s->conf, conf);
	s->next = servers;
	servers = s;
	harness_server_start(s);
	return s;
}

int harness_server_stop(struct harness_server *s)
{
	int st;

	if (!s->pid)
		return 0;
	kill(s->pid, SIGTERM);
	st = wait_exit(s->pid, STOP_TIMEOUT_MS);
	if (st < 0) {
		print_error("ebb serve (pid %d) ignored SIGTERM for %d ms: killed\n", (int)s->pid,
			    STOP_TIMEOUT_MS);
		harness_server_kill(s);
	}
	s->pid = 0;
	if (st != 0)
		harness_server_dump_log(s);
	return st;
}

int harness_server_exited(struct harness_server *s)
{
	int st = s->pid ? wait_exit(s->pid, 0) : -1;

	if (st >= 0)
		s->pid = 0;
	return st;
}

void harness_server_kill(struct harness_server *s)
{
	if (!s->pid)
		return;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
}

void harness_server_free(struct harness_server *s)
{
	struct harness_server **p;

	if (!s)
		return;
	harness_server_kill(s);
	if (s->client_ready)
		client_free(&s->client);
	if (!getenv("EBB_KEEP_TMP"))
		harness_rmtree(s->dir);
	for (p = &servers; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	free(s);
}

int harness_cleanup(void **state)
{
	(void)state;
	kill_owned_workers();
	while (servers)
		harness_server_free(servers);
	while (tmpdirs) {
		struct tmpdir *t = tmpdirs;
		tmpdirs = t->next;
		if (!getenv("EBB_KEEP_TMP"))
			harness_rmtree(t->path);
		free(t->path);
		free(t);
	}
	cli_dir = NULL;
	return 0;
}

/* ---- HTTP ---- */

static int call(struct client *c, const char *method, const char *path, const char *body,
		json_t **reply)
{
	json_t *jbody = NULL, *r = NULL;
	json_error_t je;
	int status;

	if (body) {
		jbody = json_loads(body, JSON_DECODE_ANY, &je);
		if (!jbody)
			fail_msg("harness_call: the test's body is not JSON (%s): %.200s", je.text, body);
	}
	status = client_call(c, method, path, jbody, &r);
	json_decref(jbody);
	if (status < 0)
		print_error("%s %s: no reply: %s\n", method, path, c->err);
	if (reply)
		*reply = r;
	else
		json_decref(r);
	return status;
}

int harness_call(struct harness_server *s, const char *method, const char *path, const char *body,
		 json_t **reply)
{
	return call(&s->client, method, path, body, reply);
}

int harness_call_as(struct harness_server *s, const char *token, const char *method,
		    const char *path, const char *body, json_t **reply)
{
	struct client c;
	int status;

	if (client_init(&c, s->url, token, s->cacert) != 0)
		fail_msg("client_init %s: %s", s->url, c.err);
	status = call(&c, method, path, body, reply);
	client_free(&c);
	return status;
}

struct buf {
	char *data;
	size_t len, pos;
};

static size_t on_write(char *ptr, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;

	b->data = realloc(b->data, b->len + size * n + 1);
	memcpy(b->data + b->len, ptr, size * n);
	b->len += size * n;
	b->data[b->len] = '\0';
	return size * n;
}

/* Hands out the body in pieces of 64 KiB, for a chunked upload. */
static size_t on_read(char *ptr, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t take = size * n;

	if (take > 65536)
		take = 65536;
	if (take > b->len - b->pos)
		take = b->len - b->pos;
	memcpy(ptr, b->data + b->pos, take);
	b->pos += take;
	return take;
}

int harness_raw(struct harness_server *s, const char *token, const char *method, const char *path,
		const char *body, size_t len, int chunked, json_t **reply)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct buf in = {.data = (char *)body, .len = len}, out = {0};
	char url[4200], auth[600];
	long status = -1;
	CURLcode rc;

	snprintf(url, sizeof url, "%s%s", s->url, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
	if (s->cacert[0])
		curl_easy_setopt(curl, CURLOPT_CAINFO, s->cacert);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	if (token && *token) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
		headers = curl_slist_append(headers, auth);
	}
	if (chunked) {
		headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
		curl_easy_setopt(curl, CURLOPT_POST, 1L);
		curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(curl, CURLOPT_READDATA, &in);
	} else if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	else
		print_error("%s %s (%zu bytes): %s\n", method, path, len, curl_easy_strerror(rc));
	if (reply)
		*reply = out.data ? json_loads(out.data, 0, NULL) : NULL;
	free(out.data);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return rc == CURLE_OK ? (int)status : -1;
}

int harness_get_text(struct harness_server *s, const char *token, const char *path, char **body, char *ctype,
		     size_t ctsize)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct buf out = {0};
	char url[4200], auth[600];
	const char *ct = NULL;
	long status = -1;

	if (!token)
		token = s->token;
	if (token[0]) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
		headers = curl_slist_append(NULL, auth);
	}
	snprintf(url, sizeof url, "%s%s", s->url, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
	if (curl_easy_perform(curl) == CURLE_OK) {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
	}
	if (ctype)
		snprintf(ctype, ctsize, "%s", ct ? ct : "");
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	*body = out.data ? out.data : strdup("");
	return (int)status;
}

#define RAW_TIMEOUT_MS 30000

int harness_connect(struct harness_server *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		harness_fail_with_log(s, "cannot connect to port %d: %s", s->port, strerror(errno));
	return fd;
}

/* Appends what the server sends next to b; -1 when it closed or reset
 * the connection instead. Fails the test after the deadline. */
static int read_more(int fd, struct buf *b, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char chunk[65536];
	ssize_t n;

	if (poll(&p, 1, (int)(deadline - harness_now_ms())) <= 0)
		fail_msg("no reply and no close in %d ms", RAW_TIMEOUT_MS);
	n = recv(fd, chunk, sizeof chunk, 0);
	if (n <= 0)
		return -1;
	on_write(chunk, 1, (size_t)n, b);
	return 0;
}

/* The value of the header name in head (a reply's status line and
 * headers), into out; "" when it has none. */
static void header_value(const char *head, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *line = strstr(head, "\r\n"); line && line[2] != '\r'; line = strstr(line + 2, "\r\n")) {
		const char *v;
		if (strncasecmp(line + 2, name, n) != 0 || line[2 + n] != ':')
			continue;
		v = line + 2 + n + 1;
		v += strspn(v, " ");
		snprintf(out, size, "%.*s", (int)strcspn(v, "\r"), v);
		return;
	}
}

int harness_exchange(int fd, const void *bytes, size_t len, struct harness_reply *r)
{
	struct buf in = {0};
	int64_t deadline = harness_now_ms() + RAW_TIMEOUT_MS;
	char value[128], *end = NULL;
	size_t head;

	memset(r, 0, sizeof *r);
	r->status = -1;
	for (size_t sent = 0; sent < len;) {
		ssize_t n = send(fd, (const char *)bytes + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0)
			break; /* closed on us: its reply, if any, is still to read */
		sent += (size_t)n;
	}
	while (!(in.data && (end = strstr(in.data, "\r\n\r\n")))) {
		if (read_more(fd, &in, deadline) != 0)
			break;
	}
	if (!end || sscanf(in.data, "HTTP/1.1 %d ", &r->status) != 1) {
		free(in.data);
		r->status = -1;
		return -1;
	}
	head = (size_t)(end - in.data) + 4;
	header_value(in.data, "Content-Type", r->content_type, sizeof r->content_type);
	header_value(in.data, "Connection", value, sizeof value);
	r->close = strcasecmp(value, "close") == 0;
	header_value(in.data, "Content-Length", value, sizeof value);
	r->len = strtoul(value, NULL, 10);
	while (in.len < head + r->len) {
		if (read_more(fd, &in, deadline) != 0)
			fail_msg("reply %d: closed before its %zu bytes of body", r->status, r->len);
	}
	r->body = malloc(r->len + 1);
	memcpy(r->body, in.data + head, r->len);
	r->body[r->len] = '\0';
	r->json = json_loadb(r->body, r->len, 0, NULL);
	free(in.data);
	return r->status;
}

int harness_wait_closed(int fd)
{
	int64_t deadline = harness_now_ms() + RAW_TIMEOUT_MS;

	/* What comes before the close, if anything, is dropped. */
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char chunk[4096];

		if (poll(&p, 1, (int)(deadline - harness_now_ms())) <= 0)
			return 0;
		if (recv(fd, chunk, sizeof chunk, 0) <= 0)
			return 1;
	}
}

void harness_reply_free(struct harness_reply *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof *r);
}

void harness_advance(struct harness_server *s, int64_t ms)
{
	json_t *r = NULL;
	int st = harness_call(s, "POST", "/v1/admin/clock",
			      harness_fmt("{\"advance_ms\": %lld}", (long long)ms), &r);

	if (st != 200) {
		char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
		fail_msg("POST /v1/admin/clock: status %d, %s (serve needs --test-clock)", st,
			 text ? text : "no body");
	}
	json_decref(r);
}

void harness_wait_waiting(struct harness_server *s, int n)
{
	int64_t until = harness_now_ms() + 5000, got = -1;

	for (;;) {
		json_t *r = NULL;
		if (harness_call(s, "GET", "/v1/stats", NULL, &r) == 200 &&
		    json_is_integer(harness_jget(r, "waiting_workers")))
			got = json_integer_value(harness_jget(r, "waiting_workers"));
		json_decref(r);
		if (got == n)
			return;
		if (harness_now_ms() > until)
			fail_msg("waiting_workers is %lld after 5 s, expected %d", (long long)got, n);
		harness_sleep_ms(5);
	}
}

static void *async_main(void *arg)
{
	struct harness_async *a = arg;
	json_t *body = a->body ? json_loads(a->body, JSON_DECODE_ANY, NULL) : NULL;

	a->status = client_call(&a->client, a->method, a->path, body, &a->reply);
	a->elapsed_ms = harness_now_ms() - a->started_ms;
	json_decref(body);
	return NULL;
}

void harness_async_start(struct harness_async *a, struct harness_server *s, const char *method,
			 const char *path, const char *body)
{
	json_t *check = body ? json_loads(body, JSON_DECODE_ANY, NULL) : NULL;

	memset(a, 0, sizeof *a);
	if (body && !check)
		fail_msg("harness_async_start: the test's body is not JSON: %.200s", body);
	json_decref(check);
	if (client_init(&a->client, s->url, s->token, s->cacert) != 0)
		fail_msg("client_init %s: %s", s->url, a->client.err);
	snprintf(a->method, sizeof a->method, "%s", method);
	snprintf(a->path, sizeof a->path, "%s", path);
	a->body = body ? strdup(body) : NULL;
	a->started_ms = harness_now_ms();
	if (pthread_create(&a->thread, NULL, async_main, a) != 0)
		fail_msg("pthread_create failed");
}

int harness_async_join(struct harness_async *a, json_t **reply)
{
	pthread_join(a->thread, NULL);
	client_free(&a->client);
	free(a->body);
	a->body = NULL;
	if (reply)
		*reply = a->reply;
	else
		json_decref(a->reply);
	a->reply = NULL;
	return a->status;
}

/* ---- the CLI ---- */

/* Runs file (a path, or a name looked up in PATH) as argv in dir, with in
 * on its standard input (NULL: none) and env over the test's environment
 * ("NAME=VALUE" sets, "NAME" unsets); killed after RUN_TIMEOUT_MS. */
static int run_child(struct harness_run *r, const char *dir, const char *file, const char *const *argv,
		     const char *in, const char *const *env)
{
	char path[4300], out[4300], err[4300];
	static int runs;
	pid_t pid;

	memset(r, 0, sizeof *r);
	runs++;
	snprintf(path, sizeof path, "%s/run-%d.in", dir, runs);
	snprintf(out, sizeof out, "%s/run-%d.out", dir, runs);
	snprintf(err, sizeof err, "%s/run-%d.err", dir, runs);
	if (in)
		harness_write_file(path, in);
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		child_setup(dir, in ? path : NULL, out, err);
		for (; env && *env; env++) {
			if (strchr(*env, '='))
				putenv((char *)*env);
			else
				unsetenv(*env);
		}
		execvp(file, (char *const *)argv);
		_exit(127);
	}
	r->status = wait_exit(pid, RUN_TIMEOUT_MS);
	if (r->status < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		r->status = 128 + SIGKILL;
		print_error("%s: killed after %d ms\n", argv[0], RUN_TIMEOUT_MS);
	}
	r->out = harness_read_file(out, NULL);
	r->err = harness_read_file(err, NULL);
	if (!r->out)
		r->out = strdup("");
	if (!r->err)
		r->err = strdup("");
	return r->status;
}

static const char *cli_tmpdir(void)
{
	if (!cli_dir)
		cli_dir = (char *)harness_tmpdir();
	return cli_dir;
}

int harness_exec(struct harness_run *r, const char *const *argv, const char *in, const char *const *env)
{
	return run_child(r, cli_tmpdir(), argv[0], argv, in, env);
}

int harness_ebb(struct harness_run *r, struct harness_server *s, ...)
{
	/* A name alone unsets it: a CLI run sees only the server it is given. */
	const char *argv[64], *env[4] = {"EBB_SERVER", "EBB_TOKEN", "EBB_CACERT", NULL};
	char server[128], token[300], cacert[4300];
	int argc = 0;
	va_list ap;

	argv[argc++] = "ebb";
	va_start(ap, s);
	while (argc < 63 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	if (s) {
		snprintf(server, sizeof server, "EBB_SERVER=%s", s->url);
		snprintf(token, sizeof token, "EBB_TOKEN=%s", s->token);
		env[0] = server;
		env[1] = token;
		if (s->cacert[0]) {
			snprintf(cacert, sizeof cacert, "EBB_CACERT=%s", s->cacert);
			env[2] = cacert;
		}
	}
	return run_child(r, s ? s->dir : cli_tmpdir(), harness_ebb_bin(), argv, NULL, env);
}

void harness_run_free(struct harness_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

void harness_assert_refused(const char *lines, const char *reason)
{
	const char *dir = harness_tmpdir();
	char conf[4200], data[4200], said[8400];
	struct harness_run r;
	struct stat st;

	snprintf(conf, sizeof conf, "%s/ebb.conf", dir);
	snprintf(data, sizeof data, "%s/data", dir);
	harness_write_file(conf, harness_fmt("[server]\nlisten = 127.0.0.1:0\ndata_dir = %s\n%s", data, lines));
	snprintf(said, sizeof said, "ebb config: %s: %s", conf, reason);
	harness_ebb(&r, NULL, "config", "-c", conf, NULL);
	if (r.status != 1 || !strstr(r.err, said) || r.out[0])
		fail_msg("ebb config with\n%s\nexited %d, expected 1 with \"%s\" and nothing on stdout; it said:\n%s%s",
			 lines, r.status, said, r.err, r.out);
	harness_run_free(&r);
	harness_ebb(&r, NULL, "serve", "-c", conf, NULL);
	if (r.status != 1 || !strstr(r.err, reason))
		fail_msg("ebb serve with\n%s\nexited %d, expected 1 with \"%s\"; it said:\n%s", lines, r.status, reason,
			 r.err);
	harness_run_free(&r);
	if (stat(data, &st) == 0)
		fail_msg("ebb serve with\n%s\nmade its data_dir before it refused the file", lines);
}

/* ---- JSON and asserts ---- */

json_t *harness_json(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	if (!v)
		fail_msg("not JSON (%s): %.500s", je.text, text);
	return v;
}

json_t *harness_jget(json_t *v, const char *path)
{
	char key[256];

	while (v && *path) {
		size_t n = strcspn(path, ".");
		char *end;
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		if (json_is_array(v)) {
			long i = strtol(key, &end, 10);
			v = *end == '\0' && i >= 0 ? json_array_get(v, (size_t)i) : NULL;
		} else {
			v = json_object_get(v, key);
		}
		path += n + (path[n] == '.');
	}
	return v;
}

static void show(const char *what, json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	print_error("%s: %.2000s\n", what, text ? text : "(no JSON)");
	free(text);
}

int64_t harness_jint(json_t *v, const char *path, const char *file, int line)
{
	json_t *x = harness_jget(v, path);

	if (!json_is_integer(x)) {
		print_error("'%s' is %s, expected an integer\n", path, x ? "not an integer" : "missing");
		show("in", v);
		_fail(file, line);
	}
	return json_integer_value(x);
}

json_t *harness_find(json_t *v, const char *path, const char *key, const char *value)
{
	json_t *e;
	size_t i;

	json_array_foreach(harness_jget(v, path), i, e) {
		if (strcmp(JSTR(e, key), value) == 0)
			return e;
	}
	return NULL;
}

double harness_jnum(json_t *v, const char *path, const char *file, int line)
{
	json_t *x = harness_jget(v, path);

	if (!json_is_number(x)) {
		print_error("'%s' is %s, expected a number\n", path, x ? "not a number" : "missing");
		show("in", v);
		_fail(file, line);
	}
	return json_number_value(x);
}

const char *harness_jstr(json_t *v, const char *path)
{
	json_t *x = harness_jget(v, path);

	if (!x)
		return "(missing)";
	if (json_is_null(x))
		return "(null)";
	return json_is_string(x) ? json_string_value(x) : "(not a string)";
}

void harness_assert_int(int64_t got, int64_t want, const char *expr, const char *file, int line)
{
	if (got == want)
		return;
	print_error("%s is %lld, expected %lld\n", expr, (long long)got, (long long)want);
	_fail(file, line);
}

void harness_assert_between(int64_t got, int64_t lo, int64_t hi, const char *expr, const char *file,
			    int line)
{
	if (got >= lo && got <= hi)
		return;
	print_error("%s is %lld, expected %lld to %lld\n", expr, (long long)got, (long long)lo,
		    (long long)hi);
	_fail(file, line);
}

void harness_assert_contains(const char *haystack, const char *needle, const char *file, int line)
{
	if (haystack && strstr(haystack, needle))
		return;
	print_error("expected \"%s\" in: %.2000s\n", needle, haystack ? haystack : "(null)");
	_fail(file, line);
}

void harness_assert_error(int status, json_t *reply, int want_status, const char *want_code,
			  const char *want_field, const char *file, int line)
{
	json_t *e = json_object_get(reply, "error"), *field = json_object_get(e, "field");
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *code = json_string_value(json_object_get(e, "code"));
	int ok = status == want_status && json_is_object(e) && code && strcmp(code, want_code) == 0 &&
		 msg && *msg && json_object_size(e) == 3 &&
		 (want_field ? json_is_string(field) && strcmp(json_string_value(field), want_field) == 0
			     : json_is_null(field));

	if (ok)
		return;
	print_error("expected status %d, error.code \"%s\", error.field %s%s%s, a message;"
		    " got status %d\n", want_status, want_code, want_field ? "\"" : "",
		    want_field ? want_field : "null", want_field ? "\"" : "", status);
	show("reply", reply);
	_fail(file, line);
}

/* ---- checked calls ---- */

/* Every other *.log of the test's directories (serve's earlier starts, the
 * workers an exec provider started): a failure that involves several
 * processes is read from all their logs. */
static void dump_other_logs(const struct harness_server *s)
{
	for (struct tmpdir *t = tmpdirs; t; t = t->next) {
		glob_t g;

		if (glob(harness_fmt("%s/*.log", t->path), 0, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			char *text;

			if (strcmp(g.gl_pathv[k], s->log) == 0 || !(text = harness_read_file(g.gl_pathv[k], NULL)))
				continue;
			printf("---- %s ----\n%s---- end of log ----\n", g.gl_pathv[k], text);
			free(text);
		}
		globfree(&g);
	}
	fflush(stdout);
}

void harness_fail_with_log(struct harness_server *s, const char *fmt, ...)
{
	char msg[1000];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dump_other_logs(s);
	harness_server_dump_log(s);
	fail_msg("%s", msg);
}

json_t *harness_call_ok(struct harness_server *s, const char *method, const char *path, const char *body,
			int want)
{
	json_t *r = NULL;
	int st = harness_call(s, method, path, body, &r);

	if (st != want) {
		char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
		harness_fail_with_log(s, "%s %s %s: status %d, expected %d: %s", method, path, body ? body : "", st,
				      want, text ? text : "");
	}
	return r;
}

json_t *harness_get(struct harness_server *s, const char *path)
{
	json_t *r = harness_call_ok(s, "GET", path, NULL, 200);

	if (!json_is_object(r))
		harness_fail_with_log(s, "GET %s: not a JSON object", path);
	return r;
}

int64_t harness_submit(struct harness_server *s, const char *body)
{
	json_t *r = harness_call_ok(s, "POST", "/v1/jobs", body, 201);
	int64_t id = JINT(r, "id");

	json_decref(r);
	return id;
}

json_t *harness_get_job(struct harness_server *s, int64_t id)
{
	return harness_call_ok(s, "GET", harness_fmt("/v1/jobs/%lld", (long long)id), NULL, 200);
}

int harness_job_is(struct harness_server *s, int64_t id, const char *state)
{
	json_t *j = harness_get_job(s, id);
	int yes = strcmp(JSTR(j, "state"), state) == 0;

	json_decref(j);
	return yes;
}

int64_t harness_stat(struct harness_server *s, const char *path)
{
	json_t *r = harness_call_ok(s, "GET", "/v1/stats", NULL, 200);
	int64_t n = JINT(r, path);

	json_decref(r);
	return n;
}

int harness_live_instances(struct harness_server *s, int64_t *id)
{
	json_t *r = harness_call_ok(s, "GET", "/v1/fleet", NULL, 200), *i;
	size_t k;
	int n = 0;

	if (!json_is_array(harness_jget(r, "instances")))
		harness_fail_with_log(s, "GET /v1/fleet: no instances array");
	json_array_foreach(harness_jget(r, "instances"), k, i) {
		if (strcmp(JSTR(i, "state"), "terminated") != 0) {
			n++;
			if (id)
				*id = JINT(i, "id");
		}
	}
	json_decref(r);
	return n;
}

int harness_file_lines(const char *path, const char *has)
{
	char *text = harness_read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	if (!text)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		n += !has || strstr(line, has) != NULL;
	free(text);
	return n;
}

/* ---- worker processes ---- */

#define MAX_OWNED 16
#define MAX_WORKERS 64

/* The URLs of the servers whose workers are the running test's. */
static char owned[MAX_OWNED][64];
static int nowned;

int harness_alive(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;
	char st = 0;
	int pp = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so after the last ')'. */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %c %d", &st, &pp) != 2)
		return 0;
	if (ppid)
		*ppid = pp;
	return st != 'Z' && st != 'X';
}

/* Is the command line of pid `ebb worker ... --server url ...`? */
static int is_worker_of(pid_t pid, const char *url)
{
	char path[64], args[4096];
	const char *argv[64];
	int argc = 0;
	size_t len, i = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	len = fread(args, 1, sizeof args - 1, f);
	fclose(f);
	args[len] = '\0';
	while (i < len && argc < 64) {
		argv[argc++] = args + i;
		i += strlen(args + i) + 1;
	}
	if (argc < 2 || strcmp(argv[1], "worker") != 0)
		return 0;
	for (int k = 2; k + 1 < argc; k++) {
		if (strcmp(argv[k], "--server") == 0 && strcmp(argv[k + 1], url) == 0)
			return 1;
	}
	return 0;
}

pid_t harness_hand_worker(struct harness_server *s, const char *log_path, const char *cuda_visible, ...)
{
	const char *argv[32] = {"ebb", "worker", "--server", s->url, "--name", "hand", "--grace", "200ms"};
	int argc = 8;
	va_list ap;
	pid_t pid;

	va_start(ap, cuda_visible);
	for (const char *a; argc < 31 && (a = va_arg(ap, const char *));)
		argv[argc++] = a;
	va_end(ap);
	if ((pid = fork()) < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		dup2(fd, 2);
		if (cuda_visible)
			setenv("CUDA_VISIBLE_DEVICES", cuda_visible, 1);
		execv(harness_ebb_bin(), (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int harness_stop_hand_worker(struct harness_server *s, pid_t pid, int ms)
{
	int64_t until = harness_now_ms() + ms;
	int st = -1;

	kill(pid, SIGTERM);
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (harness_now_ms() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			harness_fail_with_log(s, "the worker still runs %d ms after SIGTERM", ms);
		}
		harness_sleep_ms(20);
	}
	return st;
}

int harness_worker_pids(const char *url, pid_t parent, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		fail_msg("opendir /proc: %s", strerror(errno));
	while ((e = readdir(d)) && n < max) {
		pid_t pid = (pid_t)atoi(e->d_name), ppid = 0;

		if (pid <= 0 || !harness_alive(pid, &ppid) || (parent > 0 && ppid != parent))
			continue;
		if (is_worker_of(pid, url))
			out[n++] = pid;
	}
	closedir(d);
	return n;
}

void harness_own_workers(const struct harness_server *s)
{
	for (int k = 0; k < nowned; k++) {
		if (strcmp(owned[k], s->url) == 0)
			return;
	}
	if (nowned < MAX_OWNED)
		snprintf(owned[nowned++], sizeof owned[0], "%s", s->url);
}

static void kill_owned_workers(void)
{
	for (int k = 0; k < nowned; k++) {
		pid_t pids[MAX_WORKERS];
		int n = harness_worker_pids(owned[k], 0, pids, MAX_WORKERS);
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
	}
	nowned = 0;
}

/* In the child: SIGXCPU after seconds of CPU time. */
static void limit_cpu(int seconds)
{
	struct rlimit lim = {.rlim_cur = (rlim_t)seconds, .rlim_max = (rlim_t)seconds + 1};

	setrlimit(RLIMIT_CPU, &lim);
}

int harness_child(int (*fn)(void *), void *arg, int seconds)
{
	pid_t pid;
	int st;

	if ((pid = fork()) < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		/* A crash must end the child, not go to cmocka's handlers,
		 * which would report it and run on to other tests. */
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		/* The bound is on CPU time, which a busy machine does not
		 * stretch, so that it catches a loop without catching a load;
		 * the alarm, ten times longer, catches a child stuck waiting. */
		limit_cpu(seconds);
		alarm((unsigned)seconds * 10);
		_exit(fn(arg));
	}
	if (waitpid(pid, &st, 0) != pid)
		fail_msg("waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
