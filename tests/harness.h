/* What the tests share: temp dirs, files, a real `ebb serve` child process
 * on a port the kernel picks, the ebb CLI run as a child, and HTTP calls
 * through the project's own client (src/common/client.h).
 *
 * Functions that cannot go on (no temp dir, a server that never listens)
 * fail the running cmocka test with a message saying why. Every server
 * and temp dir is also remembered, so that a test that fails half-way
 * leaves no process or directory behind: harness_cleanup() (a cmocka
 * teardown, and run at exit) stops and removes them. Nothing here sleeps
 * for a fixed time: every wait polls, with a bound.
 *
 * Environment: EBB_BIN (the ebb binary; make test sets it), EBB_SRC (the
 * source tree), EBB_TEST_STORE=NAME for the store engine (sqlite, the
 * default; postgres also needs EBB_TEST_PG, scripts/pg.sh), EBB_TEST=PATTERN to run only the tests it matches,
 * EBB_KEEP_TMP=1 to keep the temp dirs (configs, serve logs) to look at. */
#ifndef EBB_TESTS_HARNESS_H
#define EBB_TESTS_HARNESS_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/client.h"

/* cmocka needs these before its header. */
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

/* The admin token of harness_serve()'s [token.admin] when asked for. */
#define HARNESS_ADMIN "admin-secret-0123456789"

/* harness_serve() flags */
#define HARNESS_TEST_CLOCK 1 /* serve --test-clock */
#define HARNESS_TOKENS 2     /* add [token.admin] and use it for harness_call */
#define HARNESS_NO_WAIT 4    /* return once serve runs, before it listens: harness_server_wait() */

/* ---- files and directories ---- */

/* A new directory under $TMPDIR (or /tmp), removed by harness_cleanup(). */
const char *harness_tmpdir(void);
/* rm -r path. */
void harness_rmtree(const char *path);
void harness_write_file(const char *path, const char *text);
/* The whole file, NUL-terminated (free it); NULL if it cannot be read. */
char *harness_read_file(const char *path, size_t *len);
/* The pid a process wrote to path; 0 while there is none (no file yet,
 * or one still empty between a shell's truncation and its write). */
pid_t harness_read_pid(const char *path);
/* printf into one of a few rotating static buffers: for short paths and
 * bodies passed straight to a call. */
const char *harness_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the store ---- */

struct config;
struct store;
/* The store engine the tests run against: EBB_TEST_STORE, or sqlite. The
 * servers harness_serve() starts use it too. */
const char *harness_store_kind(void);
/* Opens harness_store_kind()'s store with its data in dir (cfg's
 * data_dir and [store] kind are set to them); fails the test if it
 * cannot. */
struct store *harness_store_open(struct config *cfg, const char *dir);
/* With EBB_TEST_STORE=postgres, the connection string of the database
 * that stands for data directory dir, made on the server EBB_TEST_PG
 * names (scripts/pg.sh) at the first call for it: every dir its own
 * database, as every dir its own SQLite file. NULL with another engine. */
const char *harness_store_url(const char *dir);
/* Skips the running test, saying why, unless the store is SQLite: for a
 * test of what only SQLite has (its file, its locks). */
void harness_sqlite_only(const char *why);

/* A store of its own for a test of the store itself: *state of
 * harness_store_setup and harness_store_teardown, cmocka's fixtures. */
struct harness_store {
	struct config *cfg;
	struct store *st;
	const char *dir; /* its data */
};
int harness_store_setup(void **state);
int harness_store_teardown(void **state);
/* What a restart sees: the store closed and opened again on its data. */
void harness_store_reopen(struct harness_store *h);
/* A store call that must return 0; else the test fails with store_error(). */
#define STORE_OK(h, call) harness_store_ok((h), (call), #call, __FILE__, __LINE__)
void harness_store_ok(struct harness_store *h, int rc, const char *call, const char *file, int line);

/* The ledger's running sums of the days from since_day on (or of all
 * time, STORE_ALL_TIME) as one text, a line per row, sorted:
 * "a100 spot job ml: 1000ms 4000gpu-ms $0.5 items=7" ("-" for no team). */
const char *harness_ledger_sums(struct harness_store *h, int64_t since_day);

/* ---- rows, compared as one text ---- */

/* What a walk over rows saw, a line per row (a store's callbacks, say), to
 * compare as one text, so that a failure shows the whole answer. With
 * stop_at set, harness_row returns HARNESS_STOP at that row, so that a
 * callback that returns what harness_row does stops its walk there. */
#define HARNESS_ROWS_MAX 32
#define HARNESS_STOP 7
struct harness_rows {
	int n, stop_at;
	char line[HARNESS_ROWS_MAX][200];
};
int harness_row(struct harness_rows *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The lines joined by " | ", sorted first for a walk that promises no
 * order; in one of harness_fmt's buffers. */
const char *harness_rows_text(struct harness_rows *r, int sorted);
/* Fails unless call, a walk that adds to r, stops at its first row and
 * returns HARNESS_STOP (r is reset with stop_at 1 first). */
#define assert_walk_stops(r, call)                 \
	((r) = (struct harness_rows){.stop_at = 1}, \
	 harness_assert_walk_stops((call), &(r), #call, __FILE__, __LINE__))
void harness_assert_walk_stops(int rc, const struct harness_rows *r, const char *call, const char *file,
			       int line);

/* ---- ebb serve ---- */

struct harness_server {
	char dir[4096];  /* its own temp dir: config, logs, data */
	char conf[4200]; /* the config file */
	char data[4200]; /* data_dir */
	char log[4200];  /* stderr of the running process */
	char url[64];    /* http://127.0.0.1:PORT, or https:// with cacert */
	char token[256]; /* what harness_call sends; "" for none */
	char cacert[4200]; /* serve speaks HTTPS, and its clients trust this CA file; "": HTTP */
	int port;
	pid_t pid; /* 0 when not running */
	int test_clock;
	int no_wait; /* the next start returns before serve listens */
	int starts;
	struct client client;
	int client_ready;
	struct harness_server *next; /* harness_cleanup()'s list */
};

/* Writes a config (listen = 127.0.0.1:0, data_dir in the temp dir, then
 * conf_extra, which starts with a [section] and may repeat [server]) and
 * starts serve. Fails the test if it does not listen within 15 s. The
 * port is read from the "msg=listening" line, so log_level stays info. */
struct harness_server *harness_serve(const char *conf_extra, int flags);
/* The same for a serve whose conf_extra sets [server] tls_cert and
 * tls_key: its URL is https://, and the calls, the async calls and the
 * CLI runs (EBB_CACERT) of the harness trust the CA file cacert. */
struct harness_server *harness_serve_tls(const char *cacert, const char *conf_extra, int flags);
/* A loopback port free now: for a serve that must keep its port across a
 * restart (its workers know it), listen = 127.0.0.1:PORT. */
int harness_free_port(void);
/* Starts serve again on the same config and data dir. */
void harness_server_start(struct harness_server *s);
/* Waits for a serve started with HARNESS_NO_WAIT to listen, for up to
 * timeout_ms; fails the test if it exits first or does not. */
void harness_server_wait(struct harness_server *s, int timeout_ms);
/* SIGTERM and wait; the exit status (0 for a clean exit), or -1 if it had
 * to be killed. A non-zero status prints the server's log. */
int harness_server_stop(struct harness_server *s);
/* The exit status of a serve that has exited by itself (reaped, pid set
 * to 0), or -1 while it runs. */
int harness_server_exited(struct harness_server *s);
/* kill -9 and reap: a crash, with no chance to tidy up. */
void harness_server_kill(struct harness_server *s);
/* Stops (if running) and removes the temp dir. */
void harness_server_free(struct harness_server *s);
/* Prints the server's log so far (to see why a test failed). */
void harness_server_dump_log(const struct harness_server *s);

/* Stops every server and removes every temp dir still around; usable as
 * a cmocka teardown (returns 0). */
int harness_cleanup(void **state);

/* ---- HTTP ---- */

/* METHOD path with body (JSON text, or NULL for none), as the server's
 * token. Returns the HTTP status (-1: no reply) and the reply in *reply
 * (NULL if reply is NULL, the body is empty or not JSON; json_decref it). */
int harness_call(struct harness_server *s, const char *method, const char *path,
		 const char *body, json_t **reply);
/* Same with another token; "" sends none. */
int harness_call_as(struct harness_server *s, const char *token, const char *method,
		    const char *path, const char *body, json_t **reply);
/* Any bytes as the body, straight through libcurl (malformed or huge
 * bodies). chunked: no Content-Length, the body in chunks. */
int harness_raw(struct harness_server *s, const char *token, const char *method,
		const char *path, const char *body, size_t len, int chunked, json_t **reply);

/* GET path with token (NULL: the server's; "": none), for replies that
 * are not JSON (/metrics, the dashboard): the status, or -1 with no reply;
 * the body in *body (NUL-terminated, to free; "" with none) and the
 * Content-Type in ctype (NULL: not wanted). */
int harness_get_text(struct harness_server *s, const char *token, const char *path, char **body, char *ctype,
		     size_t ctsize);

/* ---- raw bytes over TCP: requests no HTTP client would send ---- */

/* One reply read off a raw connection. */
struct harness_reply {
	int status;             /* -1: closed (or reset) by the server with no reply */
	char content_type[128]; /* "" when it has none */
	int close;              /* it says "Connection: close" */
	char *body;             /* its Content-Length bytes, NUL-terminated; NULL with no reply */
	size_t len;
	json_t *json; /* the body parsed; NULL if it is not JSON */
};
/* A TCP connection to s; fails the test if there is none. */
int harness_connect(struct harness_server *s);
/* Sends the bytes on fd (the server may close before it has them all),
 * then reads one reply into r (what follows it is dropped); its status.
 * Fails the test if the server neither answers nor closes within 30 s. */
int harness_exchange(int fd, const void *bytes, size_t len, struct harness_reply *r);
/* Waits for the server to close fd (30 s at most): 1 if it did. */
int harness_wait_closed(int fd);
void harness_reply_free(struct harness_reply *r);

/* POST /v1/admin/clock {"advance_ms": ms}: needs HARNESS_TEST_CLOCK. */
void harness_advance(struct harness_server *s, int64_t ms);
/* Polls GET /v1/stats until waiting_workers is n; fails after 5 s. */
void harness_wait_waiting(struct harness_server *s, int n);

/* A call on its own thread and connection, for long-polls. */
struct harness_async {
	pthread_t thread;
	struct client client;
	char method[16], path[512];
	char *body;
	int status;
	json_t *reply;
	int64_t started_ms, elapsed_ms;
};
void harness_async_start(struct harness_async *a, struct harness_server *s, const char *method,
			 const char *path, const char *body);
/* Waits for it; the status, the reply in *reply and a->elapsed_ms. */
int harness_async_join(struct harness_async *a, json_t **reply);

/* ---- checked calls ---- */

/* Prints the server's log, then fails the test with the message. */
void harness_fail_with_log(struct harness_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Polls cond every 50 ms until it holds; after ms, fails with s's log and
 * the message (a printf format and its arguments). */
#define WAIT_FOR(s, ms, cond, ...)                                           \
	do {                                                                 \
		int64_t until_ = harness_now_ms() + (ms);                    \
		while (!(cond)) {                                            \
			if (harness_now_ms() > until_)                       \
				harness_fail_with_log((s), __VA_ARGS__);     \
			harness_sleep_ms(50);                                \
		}                                                            \
	} while (0)
/* harness_call that must answer status want (else fails with the log);
 * the reply, to json_decref (NULL when it had none). */
json_t *harness_call_ok(struct harness_server *s, const char *method, const char *path, const char *body,
			int want);
/* GET path that must answer 200 with a JSON object; the reply. */
json_t *harness_get(struct harness_server *s, const char *path);
/* POST /v1/jobs body, which must answer 201: the new job's id. */
int64_t harness_submit(struct harness_server *s, const char *body);
/* GET /v1/jobs/ID (200); the reply. */
json_t *harness_get_job(struct harness_server *s, int64_t id);
/* Is job id in state now? */
int harness_job_is(struct harness_server *s, int64_t id, const char *state);
/* The integer at path in GET /v1/stats ("states.succeeded"). */
int64_t harness_stat(struct harness_server *s, const char *path);
/* The instances of GET /v1/fleet not terminated; the id of the last one
 * in *id when id is not NULL and there is one. */
int harness_live_instances(struct harness_server *s, int64_t *id);
/* The lines of the file that hold has (NULL: all lines); 0 when it cannot
 * be read. */
int harness_file_lines(const char *path, const char *has);

/* ---- worker processes (the local provider's `ebb worker`) ---- */

/* Is pid a live process (not gone, not a zombie)? Its parent in *ppid
 * when ppid is not NULL. */
int harness_alive(pid_t pid, pid_t *ppid);
/* The live `ebb worker --server url` processes, pgrep-style, at most max
 * into out; with parent > 0 only the children of that process (a job's
 * fork, before it execs, has the worker's command line too). */
int harness_worker_pids(const char *url, pid_t parent, pid_t *out, int max);
/* Makes s's workers the test's: harness_cleanup() kills them (SIGKILL)
 * before it stops the servers. */
void harness_own_workers(const struct harness_server *s);
/* A worker started by hand: `ebb worker --server URL --name hand --grace
 * 200ms` and the further arguments (NULL-terminated), with
 * CUDA_VISIBLE_DEVICES set to cuda_visible unless NULL, its output in
 * log_path, killed with the test process. Its pid. */
pid_t harness_hand_worker(struct harness_server *s, const char *log_path, const char *cuda_visible, ...)
	__attribute__((sentinel));
/* SIGTERM to a worker started by hand, and its exit status once it has
 * exited; fails the test with s's log (and kills it) if it still runs
 * after ms. */
int harness_stop_hand_worker(struct harness_server *s, pid_t pid, int ms);

/* ---- the CLI, and other programs ---- */

struct harness_run {
	int status; /* exit code, 128 + signal if killed */
	char *out, *err;
};
/* Runs argv[0] (a path, or a name looked up in PATH) with argv
 * (NULL-terminated) in a temp dir, with in on its standard input (NULL:
 * none) and env over the test's environment: "NAME=VALUE" sets, "NAME"
 * unsets. Killed after 20 s. Returns the status. */
int harness_exec(struct harness_run *r, const char *const *argv, const char *in, const char *const *env);
/* Runs $EBB_BIN with the arguments (NULL-terminated) in the server's dir,
 * with EBB_SERVER, EBB_TOKEN and EBB_CACERT (if it has one) set to it, or,
 * with s NULL, in a temp dir with none of them set. Killed after 20 s.
 * Returns the status. */
int harness_ebb(struct harness_run *r, struct harness_server *s, ...);
void harness_run_free(struct harness_run *r);
/* Writes a config ([server] listen = 127.0.0.1:0 and a data_dir of its
 * own, then lines, which may set listen again) that serve must refuse
 * with reason: `ebb config -c` exits 1 saying "ebb config: FILE: reason",
 * and `ebb serve -c` exits 1 saying reason, before it makes its data_dir.
 * reason may be the start of the message. */
void harness_assert_refused(const char *lines, const char *reason);
const char *harness_ebb_bin(void);

/* ---- JSON ---- */

/* text parsed, or the test fails showing it: a command's --json output. */
json_t *harness_json(const char *text);
/* A member by dotted path ("job.lease.token"); NULL when missing. */
json_t *harness_jget(json_t *v, const char *path);
/* The member of the array at path whose key is value (borrowed), or
 * NULL: a team, a report's row, an offer's timeouts by name. */
json_t *harness_find(json_t *v, const char *path, const char *key, const char *value);
/* The integer at path; fails the test if it is missing or not one. */
#define JINT(v, path) harness_jint((v), (path), __FILE__, __LINE__)
/* The string at path, or "(missing)" / "(null)" / "(not a string)". */
#define JSTR(v, path) harness_jstr((v), (path))
/* The number (integer or real) at path; fails the test if it is missing
 * or not one. */
#define JNUM(v, path) harness_jnum((v), (path), __FILE__, __LINE__)
int64_t harness_jint(json_t *v, const char *path, const char *file, int line);
double harness_jnum(json_t *v, const char *path, const char *file, int line);
const char *harness_jstr(json_t *v, const char *path);

/* Checks an error reply: the status, and the body
 * {"error": {"code": code, "message": "...", "field": field or null}}. */
#define assert_error(status, reply, want_status, want_code, want_field)                     \
	harness_assert_error((status), (reply), (want_status), (want_code), (want_field), __FILE__, \
			     __LINE__)
void harness_assert_error(int status, json_t *reply, int want_status, const char *want_code,
			  const char *want_field, const char *file, int line);
/* Fails unless needle occurs in haystack, printing both. */
#define assert_contains(haystack, needle) harness_assert_contains((haystack), (needle), __FILE__, __LINE__)
void harness_assert_contains(const char *haystack, const char *needle, const char *file, int line);

/* cmocka 1.1 prints integers in hex; these print decimal, and the
 * expression that was checked. */
#define assert_int(got, want) \
	harness_assert_int((int64_t)(got), (int64_t)(want), #got, __FILE__, __LINE__)
#define assert_between(got, lo, hi) \
	harness_assert_between((int64_t)(got), (int64_t)(lo), (int64_t)(hi), #got, __FILE__, __LINE__)
void harness_assert_int(int64_t got, int64_t want, const char *expr, const char *file, int line);
void harness_assert_between(int64_t got, int64_t lo, int64_t hi, const char *expr, const char *file,
			    int line);

/* ---- a function in a child process ---- */

/* Runs fn(arg) in a child killed after seconds of CPU time, or ten times
 * as long by the clock (a hang fails the test, not the run; a busy
 * machine does not). fn's return is the exit status, 128 + signal if it
 * crashed (an abort, out of memory: 128 + SIGABRT) or ran out of time. */
int harness_child(int (*fn)(void *), void *arg, int seconds);

int64_t harness_now_ms(void); /* monotonic */
/* The pause between two looks of a loop that polls, with its own bound. */
void harness_sleep_ms(int ms);

#endif
