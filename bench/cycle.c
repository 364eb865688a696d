/* Benchmark 1: the full job cycle. C client threads, each with one
 * kept-alive connection, loop submit -> lease -> complete against a fresh
 * `ebb serve` on loopback (WAL, synchronous = FULL, group commit) and we
 * count completed cycles per second. The baseline does the same cycle
 * through the store without HTTP, one transaction (one fsync) per cycle,
 * which is what serve would cost without group commit.
 *
 * Then the same cycle side by side with Redis (bench/redis.h: lists,
 * `appendfsync always`) and beanstalkd (bench/beanstalk.h: `-f 0`, an
 * fsync on every write), and ebb with the calls that shorten it
 * (docs/API.md): "next" completes each job with the worker's next lease
 * request (submit, complete+next: two calls a job); "batch" submits
 * BENCH_BATCH jobs in one call, leases as many at once (max_jobs) and
 * completes each, the last with next (about one call a job). ebb's three
 * ways again on the PostgreSQL store (a throwaway server, bench/pg.h), in
 * the same run: with one serve, and with three active serves on one
 * database (docs/HA.md, `[postgres] active = on`), client i talking to
 * serve i % 3. A peer that cannot be run here (not installed) is left
 * out, with a message. Killed (SIGTERM, SIGINT), the benchmark stops the
 * servers it started first.
 *
 * Environment: BENCH_RUNS (5), BENCH_CYCLE_S (5: seconds measured per run,
 * after 1 s of warm-up), BENCH_LEVELS ("1,8,32,64,128"), BENCH_COMPARE_LEVELS
 * ("1,16,64": the levels of the comparison with Redis; "" skips it),
 * BENCH_BATCH (16, at most 20: the jobs of a batch), BENCH_BASELINE (1; 0
 * skips it, e.g. while profiling serve), BENCH_CLIENT ("wire": plain
 * sockets; "curl": libcurl easy handles), BENCH_MAX_OTHER_CPU (25: a run
 * during which other processes used more than this percentage of a core is
 * done again, up to twice the runs asked for), BENCH_PG_ONLY (0; 1 runs
 * section 1c's setups alone, e.g. to compare two builds of the PostgreSQL
 * store), EBB_BIN, EBB_SRC (the source tree, for scripts/pg.sh; default:
 * the working directory). */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "beanstalk.h"
#include "bench.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "pg.h"
#include "serve/queue.h"
#include "store/store.h"
#ifdef BENCH_HIREDIS
#include "redis.h"
#endif

#define MAX_LEVELS 8
#define MAX_RUNS 15
#define MAX_BATCH 20 /* a lease of that many jobs fits struct wire's buffer */
#define GOAL_JOBS_S 5000.0

/* What the client threads drive: ebb's three ways on SQLite, the same
 * on PostgreSQL with one serve and with PG3_SERVES, and the peers. */
enum mode { PLAIN, NEXT, BATCH, PG_PLAIN, PG_NEXT, PG_BATCH, PG3_PLAIN, PG3_NEXT, PG3_BATCH, REDIS, BEANSTALK, NMODES };
static const char *const mode_names[] = {
	"ebb, submit + lease + complete (3 calls a job)",
	"ebb, submit + complete with next (2 calls a job)",
	"ebb, batch submit + max_jobs lease + complete, the last with next",
	"ebb on PostgreSQL, submit + lease + complete (3 calls a job)",
	"ebb on PostgreSQL, submit + complete with next (2 calls a job)",
	"ebb on PostgreSQL, batch submit + max_jobs lease + complete, the last with next",
	"ebb on PostgreSQL, 3 serves, submit + lease + complete (3 calls a job)",
	"ebb on PostgreSQL, 3 serves, submit + complete with next (2 calls a job)",
	"ebb on PostgreSQL, 3 serves, batch submit + max_jobs lease + complete, the last with next",
	"Redis, LPUSH + BLMOVE + LREM",
	"beanstalkd, put + reserve + delete",
};
static const char *const short_names[] = {"ebb plain",     "ebb next",      "ebb batch",      "ebb/pg plain",
					  "ebb/pg next",   "ebb/pg batch",  "ebb/pg×3 plain", "ebb/pg×3 next",
					  "ebb/pg×3 batch", "Redis",        "beanstalkd"};

#define PG3_SERVES 3

static int on_pg(enum mode m) { return m >= PG_PLAIN && m <= PG3_BATCH; }

/* The calls an ebb mode makes, whatever its store: PLAIN, NEXT or BATCH. */
static enum mode calls_of(enum mode m) { return on_pg(m) ? (enum mode)((m - PG_PLAIN) % 3) : m; }

/* The serves a mode runs (a peer: its one server). */
static int serves_of(enum mode m) { return m >= PG3_PLAIN && m <= PG3_BATCH ? PG3_SERVES : 1; }

static atomic_long cycles, errors;
static atomic_int stop;

/* A load thread: one kept-alive connection, through libcurl or a plain
 * socket (BENCH_CLIENT). */
struct client_thread {
	pthread_t tid;
	int n;
	enum mode mode;
	int port, batch;
	const char *url;
	int curl;
	struct http http;
	struct wire wire;
	const char *reply, *path;
	char lease_body[160], next_body[160];
	/* The jobs this client holds leased (NEXT, BATCH). */
	int nheld;
	long long held_id[MAX_BATCH], held_token[MAX_BATCH];
};

static int call(struct client_thread *t, const char *path, const char *body)
{
	int status;

	t->path = path;
	if (!t->curl)
		return wire_call(&t->wire, path, body, &t->reply);
	status = http_call(&t->http, path, body);
	t->reply = t->http.body;
	return status;
}

/* One submit, lease, complete: 1 when a job was completed, 0 when the
 * lease found none (another thread took it), -1 on an error. */
static int cycle_plain(struct client_thread *t, int *status)
{
	char path[96], body[96];
	long long id, token;

	if ((*status = call(t, "/v1/jobs", "{\"command\":[\"true\"]}")) != 201)
		return -1;
	if ((*status = call(t, "/v1/lease", t->lease_body)) != 200)
		return -1;
	if (strstr(t->reply, "\"job\":null"))
		return 0;
	id = reply_int(t->reply, "id");
	token = reply_int(t->reply, "token");
	snprintf(path, sizeof path, "/v1/jobs/%lld/complete", id);
	snprintf(body, sizeof body, "{\"lease_token\":%lld}", token);
	if ((*status = call(t, path, body)) != 200)
		return -1;
	return 1;
}

/* The jobs of a lease reply (from text on: a lease's, or a report's
 * "next"), as the jobs this client holds. Each job's "id" comes before
 * its lease's "token", and a bench job has no other. */
static void hold_leased(struct client_thread *t, const char *text)
{
	const char *p = text;

	t->nheld = 0;
	while (t->nheld < MAX_BATCH && (p = strstr(p, "\"id\":"))) {
		t->held_id[t->nheld] = strtoll(p + 5, NULL, 10);
		if (!(p = strstr(p, "\"token\":")))
			break;
		t->held_token[t->nheld++] = strtoll(p + 8, NULL, 10);
	}
}

/* Completes the jobs held, the last with the worker's next lease request,
 * whose jobs are then held: how many were completed, or -1. */
static int complete_held(struct client_thread *t, int *status)
{
	char path[96], body[320];
	int n = t->nheld;

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "/v1/jobs/%lld/complete", t->held_id[i]);
		snprintf(body, sizeof body, "{\"lease_token\":%lld%s%s}", t->held_token[i],
			 i == n - 1 ? ",\"next\":" : "", i == n - 1 ? t->next_body : "");
		if ((*status = call(t, path, body)) != 200)
			return -1;
	}
	hold_leased(t, strstr(t->reply, "\"next\":"));
	return n;
}

/* NEXT and BATCH: submit (one job, or a batch), then complete what is
 * held and take the next with the last report; when nothing is held (the
 * first time), a lease instead. A client takes after it submitted, so
 * that a take finds a job queued and does not wait. The jobs completed,
 * or -1. */
static int cycle_next(struct client_thread *t, int *status)
{
	static const char job[] = "{\"command\":[\"true\"]}";
	char batch[MAX_BATCH * sizeof job + 2] = "[";

	if (t->mode == BATCH) {
		for (int i = 0; i < t->batch; i++)
			strcat(strcat(batch, i ? "," : ""), job);
		strcat(batch, "]");
	}
	if ((*status = call(t, "/v1/jobs", t->mode == BATCH ? batch : job)) != (t->mode == BATCH ? 200 : 201))
		return -1;
	if (t->nheld == 0) {
		if ((*status = call(t, "/v1/lease", t->lease_body)) != 200)
			return -1;
		hold_leased(t, t->reply);
		return 0;
	}
	return complete_held(t, status);
}

static int cycle_once(struct client_thread *t, int *status)
{
	return t->mode == PLAIN ? cycle_plain(t, status) : cycle_next(t, status);
}

static void *client_main(void *arg)
{
	struct client_thread *t = arg;
	char max_jobs[32] = "";

	if (t->mode == BATCH)
		snprintf(max_jobs, sizeof max_jobs, ",\"max_jobs\":%d", t->batch);
	snprintf(t->lease_body, sizeof t->lease_body,
		 "{\"worker\":\"w%d\",\"wait_s\":5,\"gpus\":1,\"lease_s\":600%s}", t->n, max_jobs);
	snprintf(t->next_body, sizeof t->next_body, "%s", t->lease_body);
	t->reply = "";
	if (t->curl ? http_init(&t->http, t->url) : wire_open(&t->wire, t->port, 0)) {
		atomic_fetch_add(&errors, 1);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		int status = 0, rc = cycle_once(t, &status);
		if (rc < 0) {
			if (atomic_fetch_add(&errors, 1) == 0)
				fprintf(stderr, "cycle: %s: status %d %.200s\n", t->path, status, t->reply);
			break;
		}
		atomic_fetch_add(&cycles, rc);
	}
	if (t->curl)
		http_free(&t->http);
	else
		wire_close(&t->wire);
	return NULL;
}

/* A load thread's client of a peer: Redis through hiredis, or beanstalkd
 * over a plain socket. PEER(p, r, b) is r for Redis, b for beanstalkd;
 * built without hiredis, Redis' side is not compiled at all. */
struct peer_client {
	int redis;
	struct beanstalk_client b;
#ifdef BENCH_HIREDIS
	struct redis_client r;
#endif
};

#ifdef BENCH_HIREDIS
#define PEER(p, redis_expr, beanstalk_expr) ((p)->redis ? (redis_expr) : (beanstalk_expr))
#else
#define PEER(p, redis_expr, beanstalk_expr) (beanstalk_expr)
#endif

static void *peer_client_main(void *arg)
{
	struct client_thread *t = arg;
	struct peer_client p = {.redis = t->mode == REDIS};
	int r = PEER(&p, redis_client_open(&p.r, t->port, t->n), beanstalk_client_open(&p.b, t->port, t->n));

	while (r == 0 && !atomic_load(&stop)) {
		if ((r = PEER(&p, redis_cycle(&p.r), beanstalk_cycle(&p.b))) > 0)
			atomic_fetch_add(&cycles, r);
		r = r < 0 ? r : 0;
	}
	if (r < 0 && atomic_fetch_add(&errors, 1) == 0)
		fprintf(stderr, "cycle: %s: %s\n", short_names[t->mode], PEER(&p, p.r.error, p.b.error));
	PEER(&p, redis_client_close(&p.r), beanstalk_client_close(&p.b));
	return NULL;
}

struct result {
	double jobs_s, serve_cpu, client_cpu, other_cpu, fsyncs_s;
	double serve_wait; /* % of the time serve (all, together) was runnable but had no CPU */
	double cpu_us_job; /* the server's (or the store loop's) CPU time per job */
	double db_us_job;  /* of which PostgreSQL's processes' */
	double total;      /* cycles over the whole run, warm-up included */
};

static int use_curl(void)
{
	const char *c = getenv("BENCH_CLIENT");

	return c && strcmp(c, "curl") == 0;
}

#define MAX_PIDS 64

/* The server a run measures: fresh `ebb serve`s (one on SQLite; one or
 * PG3_SERVES on a database of their own in the PostgreSQL server), Redis
 * or beanstalkd. pids[0..nserves-1] are the processes the clients talk to
 * (ports[]); on PostgreSQL the others are the database server's, whose
 * CPU and fsyncs count as the server's too. */
struct server {
	enum mode mode;
	struct serve s[PG3_SERVES];
	struct beanstalk b;
#ifdef BENCH_HIREDIS
	struct redis r;
#endif
	pid_t pids[MAX_PIDS];
	int npids, nserves;
	int ports[PG3_SERVES];
};

static int server_start(struct server *sv, enum mode m)
{
	static int databases;
	char extra[800] = "", db[32];
	int n;

	memset(sv, 0, sizeof *sv);
	sv->mode = m;
	sv->npids = sv->nserves = 1;
	if (m == BEANSTALK) {
		if (beanstalk_start(&sv->b) != 0)
			return -1;
		sv->pids[0] = sv->b.pid;
		sv->ports[0] = sv->b.port;
		return 0;
	}
#ifdef BENCH_HIREDIS
	if (m == REDIS) {
		if (redis_start(&sv->r) != 0)
			return -1;
		sv->pids[0] = sv->r.pid;
		sv->ports[0] = sv->r.port;
		return 0;
	}
#endif
	if (m == REDIS)
		return -1;
	if (on_pg(m)) {
		snprintf(db, sizeof db, "cycle_%d", ++databases);
		if (pg_create(db) != 0)
			return -1;
		snprintf(extra, sizeof extra, "[store]\nkind = postgres\n[postgres]\nurl = %s dbname=%s\n%s", pg_url,
			 db, serves_of(m) > 1 ? "active = on\n" : "");
	}
	/* The first leads (it runs the scaler); the others follow. */
	for (sv->nserves = 0; sv->nserves < serves_of(m); sv->nserves++) {
		struct serve *s = &sv->s[sv->nserves];
		if (serve_start(s, extra) != 0)
			return -1;
		sv->pids[sv->nserves] = s->pid;
		sv->ports[sv->nserves] = s->port;
	}
	sv->npids = sv->nserves;
	/* Every serve has connected by now: their backends are among them. */
	if (on_pg(m) && (n = pg_pids(sv->pids + sv->npids, MAX_PIDS - sv->npids)) > 0)
		sv->npids += n;
	return 0;
}

static void server_stop(struct server *sv)
{
	if (sv->mode == BEANSTALK) {
		beanstalk_stop(&sv->b);
		return;
	}
#ifdef BENCH_HIREDIS
	if (sv->mode == REDIS) {
		redis_stop(&sv->r);
		return;
	}
#endif
	for (int i = 0; i < PG3_SERVES; i++)
		serve_stop(&sv->s[i]);
}

/* The servers of the run under way, for stop_on_signal. */
static struct server *volatile running;

static void stop_child(pid_t pid)
{
	if (pid > 0 && kill(pid, SIGTERM) == 0)
		waitpid(pid, NULL, 0);
}

/* Killed, the benchmark stops what it started first, with what a signal
 * handler may call: the load (a server that still has requests coming
 * may not get round to its own SIGTERM), the servers of the run
 * (SIGTERM, and waits for them) and PostgreSQL (SIGINT: a fast
 * shutdown). Their temporary directories are left. Then it dies of the
 * signal. */
static void stop_on_signal(int sig)
{
	struct server *sv = running;

	atomic_store(&stop, 1);
	for (int i = 0; sv && i < PG3_SERVES; i++)
		stop_child(sv->s[i].pid);
	if (sv) {
		stop_child(sv->b.pid);
#ifdef BENCH_HIREDIS
		stop_child(sv->r.pid);
#endif
	}
	if (pg_master > 0)
		kill(pg_master, SIGINT);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The CPU seconds of each of the server's processes now (-1: gone). */
static void server_cpu(const struct server *sv, double *cpu)
{
	for (int i = 0; i < sv->npids; i++)
		cpu[i] = proc_cpu_s(sv->pids[i]);
}

/* What the server's processes used between two readings, all of them and
 * (into *db) those of the database server. A process gone meanwhile (a
 * PostgreSQL worker that ended) is left out of both. */
static double server_cpu_used(const struct server *sv, const double *before, const double *after, double *db)
{
	double all = 0;

	*db = 0;
	for (int i = 0; i < sv->npids; i++) {
		double d = before[i] >= 0 && after[i] >= 0 ? after[i] - before[i] : 0;
		all += d;
		*db += i >= sv->nserves ? d : 0;
	}
	return all;
}

/* The seconds the main threads of the processes the clients talk to
 * have waited, runnable, for a CPU that others held, all together. */
static void serves_wait_s(const struct server *sv, double *wait)
{
	double run, w;

	*wait = 0;
	for (int i = 0; i < sv->nserves; i++)
		*wait += proc_sched_s(sv->pids[i], &run, &w) == 0 ? w : 0;
}

/* Each serve's log, after a run failed: what went wrong on its side. */
static void print_logs(const struct server *sv)
{
	for (int i = 0; i < PG3_SERVES; i++)
		if (sv->s[i].pid > 0)
			serve_print_log(&sv->s[i]);
}

/* One run of mode at concurrency c: a fresh server, 1 s warm-up, secs
 * measured. */
static int run_load(enum mode m, int c, double secs, struct result *r)
{
	struct client_thread *t;
	struct fsync_count fc;
	struct server sv;
	void *(*fn)(void *) = m == REDIS || m == BEANSTALK ? peer_client_main : client_main;
	double t0, t1, s, db, c0, c1, m0, m1, wait0, wait1;
	double s0[MAX_PIDS], s1[MAX_PIDS];
	long n0, n1, fsyncs;

	running = &sv;
	if (server_start(&sv, m) != 0) {
		server_stop(&sv);
		running = NULL;
		return -1;
	}
	t = calloc((size_t)c, sizeof *t);
	atomic_store(&cycles, 0);
	atomic_store(&errors, 0);
	atomic_store(&stop, 0);
	for (int i = 0; i < c; i++) {
		t[i].n = i;
		t[i].mode = calls_of(m);
		t[i].port = sv.ports[i % sv.nserves];
		t[i].url = sv.s[i % sv.nserves].url;
		t[i].batch = (int)env_long("BENCH_BATCH", 16);
		t[i].batch = t[i].batch < 1 ? 1 : t[i].batch > MAX_BATCH ? MAX_BATCH : t[i].batch;
		t[i].curl = use_curl();
		pthread_create(&t[i].tid, NULL, fn, &t[i]);
	}
	sleep_s(1.0);
	fsync_count_start(&fc, sv.pids, sv.npids);
	t0 = now_s();
	n0 = atomic_load(&cycles);
	server_cpu(&sv, s0);
	c0 = proc_cpu_s(getpid());
	m0 = machine_busy_s();
	serves_wait_s(&sv, &wait0);
	sleep_s(secs);
	t1 = now_s();
	n1 = atomic_load(&cycles);
	server_cpu(&sv, s1);
	c1 = proc_cpu_s(getpid());
	m1 = machine_busy_s();
	serves_wait_s(&sv, &wait1);
	fsyncs = fsync_count_stop(&fc);
	s = server_cpu_used(&sv, s0, s1, &db);
	atomic_store(&stop, 1);
	for (int i = 0; i < c; i++)
		pthread_join(t[i].tid, NULL);
	if (atomic_load(&errors))
		print_logs(&sv);
	server_stop(&sv);
	running = NULL;
	free(t);
	if (atomic_load(&errors))
		return -1;
	r->total = (double)atomic_load(&cycles);
	r->jobs_s = (double)(n1 - n0) / (t1 - t0);
	r->serve_cpu = 100 * s / (t1 - t0);
	r->client_cpu = 100 * (c1 - c0) / (t1 - t0);
	r->other_cpu = 100 * ((m1 - m0) - s - (c1 - c0)) / (t1 - t0);
	r->serve_wait = 100 * (wait1 - wait0) / (t1 - t0);
	r->cpu_us_job = 1e6 * s / (double)(n1 - n0);
	r->db_us_job = 1e6 * db / (double)(n1 - n0);
	r->fsyncs_s = fsyncs < 0 ? -1 : (double)fsyncs / (t1 - t0);
	return 0;
}

/* The baseline: the same cycle through the store, each in its own
 * transaction when per_cycle, else each call in its own (three commits per
 * job, as serve would do without batching). */
static int run_store(int per_cycle, double secs, struct result *r)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct config cfg;
	struct clock clk;
	struct queue q;
	struct store *st;
	struct fsync_count fc;
	struct ebb_error err;
	char dir[64], errbuf[512];
	double t0, t1, c0, c1, m0, m1;
	long n = 0, fsyncs;
	pid_t self = getpid();
	int rc = 0;

	snprintf(dir, sizeof dir, "%s/ebb-bench.XXXXXX", tmp);
	if (!mkdtemp(dir))
		return -1;
	config_defaults(&cfg, NULL);
	free(cfg.data_dir);
	cfg.data_dir = strdup(dir);
	log_set_level(LOG_WARN);
	clock_init_real(&clk);
	if (!(st = store_open(&cfg, errbuf, sizeof errbuf))) {
		fprintf(stderr, "cycle: %s\n", errbuf);
		return -1;
	}
	queue_init(&q, st, &cfg, &clk, 1);
	fsync_count_start(&fc, &self, 1);
	sleep_s(0.2); /* perf attaches to this very process: let it */
	t0 = now_s();
	c0 = proc_cpu_s(getpid());
	m0 = machine_busy_s();
	while ((t1 = now_s()) - t0 < secs && rc == 0) {
		struct lease_offer offer = {.gpus = 1};
		struct job job = {.gpus = 1, .items = 1, .timeout_s = 3600, .max_attempts = 3};
		int existed;

		snprintf(job.type, sizeof job.type, "default");
		snprintf(job.lane, sizeof job.lane, "standard");
		snprintf(job.team, sizeof job.team, "default");
		job.command = strdup("[\"true\"]");
		rc = store_begin(st) || queue_submit(&q, &job, 0, &existed, &err);
		job_free(&job);
		if (!per_cycle)
			rc = rc || store_commit(st) || store_begin(st);
		rc = rc || queue_lease(&q, &offer, &(struct lease_types){.n = 0}, "w1", 0, 600000, &job, &err) != 1;
		if (!per_cycle)
			rc = rc || store_commit(st) || store_begin(st);
		if (rc == 0) {
			int64_t id = job.id, token = job.lease_token;
			job_free(&job);
			rc = queue_complete(&q, id, token, -1, NULL, &job, &err);
			job_free(&job);
		}
		rc = rc || store_commit(st);
		n++;
	}
	c1 = proc_cpu_s(getpid());
	m1 = machine_busy_s();
	fsyncs = fsync_count_stop(&fc);
	if (rc != 0)
		fprintf(stderr, "cycle: store loop failed: %s\n", store_error(st));
	store_close(st);
	config_free(&cfg);
	remove_tree(dir);
	if (rc != 0)
		return -1;
	r->jobs_s = (double)n / (t1 - t0);
	r->serve_cpu = 100 * (c1 - c0) / (t1 - t0);
	r->client_cpu = 0;
	r->serve_wait = 0;
	r->cpu_us_job = 1e6 * (c1 - c0) / (double)n;
	r->db_us_job = 0;
	r->total = (double)n;
	r->other_cpu = 100 * ((m1 - m0) - (c1 - c0)) / (t1 - t0);
	r->fsyncs_s = fsyncs < 0 ? -1 : (double)fsyncs / (t1 - t0);
	return 0;
}

/* The median time of an fdatasync after a 4 KiB append, in µs. */
static double fsync_latency_us(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[96], page[4096] = {0};
	double v[200];
	int fd;

	snprintf(path, sizeof path, "%s/ebb-bench-fsync.%d", tmp, (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return -1;
	for (int i = 0; i < 200; i++) {
		double t = now_s();
		if (write(fd, page, sizeof page) != (ssize_t)sizeof page || fdatasync(fd) != 0)
			break;
		v[i] = (now_s() - t) * 1e6;
	}
	close(fd);
	unlink(path);
	return median(v, 200);
}

struct row {
	char name[64];
	int clients; /* 0: a store baseline */
	int nruns, discarded;
	struct result runs[MAX_RUNS];
};

/* Takes r as one of the row's runs unless the machine was busy with other
 * work meanwhile and there are tries left. */
static void keep_run(struct row *w, const struct result *r, int *tries)
{
	double max_other = (double)env_long("BENCH_MAX_OTHER_CPU", 25);

	w->runs[w->nruns] = *r;
	fprintf(stderr, "cycle: %s run %d: %.0f jobs/s, CPU serve %.0f%% = %.0f us/job (waited %.0f%%)"
			" clients %.0f%% others %.0f%%, %.0f fsyncs/s; %.0f cycles in all%s\n",
		w->name, w->nruns + 1, r->jobs_s, r->serve_cpu, r->cpu_us_job, r->serve_wait, r->client_cpu,
		r->other_cpu, r->fsyncs_s, r->total,
		r->other_cpu > max_other && *tries > 0 ? " (others busy: run again)" : "");
	if (r->other_cpu > max_other && *tries > 0) {
		(*tries)--;
		w->discarded++;
		return;
	}
	w->nruns++;
}

/* The median over the row's runs of the result field at offset off. */
static double row_median(const struct row *w, size_t off)
{
	double v[MAX_RUNS];

	for (int i = 0; i < w->nruns; i++)
		v[i] = *(const double *)((const char *)&w->runs[i] + off);
	return median(v, w->nruns);
}

#define MEDIAN(w, field) row_median(w, offsetof(struct result, field))

/* The slowest and the fastest run of a row, in jobs/s. */
static void row_range(const struct row *w, double *lo, double *hi)
{
	*lo = *hi = w->runs[0].jobs_s;
	for (int i = 1; i < w->nruns; i++) {
		*lo = w->runs[i].jobs_s < *lo ? w->runs[i].jobs_s : *lo;
		*hi = w->runs[i].jobs_s > *hi ? w->runs[i].jobs_s : *hi;
	}
}

static void print_row(const struct row *w)
{
	double jobs = MEDIAN(w, jobs_s), fs = MEDIAN(w, fsyncs_s), lo, hi;
	char fsync[32] = "n/a", per_job[32] = "n/a", client[16] = "-", wait[16] = "-";

	row_range(w, &lo, &hi);
	if (fs >= 0) {
		snprintf(fsync, sizeof fsync, "%.0f", fs);
		snprintf(per_job, sizeof per_job, "%.2f", fs / jobs);
	}
	if (w->clients) {
		snprintf(client, sizeof client, "%.0f%%", MEDIAN(w, client_cpu));
		snprintf(wait, sizeof wait, "%.0f%%", MEDIAN(w, serve_wait));
	}
	printf("| %s | %.0f | %.0f–%.0f | %.0f%% | %.0f | %s | %s | %.0f%% | %s | %s |\n", w->name, jobs, lo, hi,
	       MEDIAN(w, serve_cpu), MEDIAN(w, cpu_us_job), wait, client, MEDIAN(w, other_cpu), fsync, per_job);
}

#define GOAL_US_JOB 60.0
#define GOAL_PG_JOBS_S 2000.0 /* with three serves */

/* The cells of a row of the comparison up to its ratios; on PostgreSQL,
 * with the database server's share of the CPU a job. */
static void print_compare_cells(const struct row *w, enum mode m)
{
	double jobs = MEDIAN(w, jobs_s), fs = MEDIAN(w, fsyncs_s), lo, hi;
	char fsync[32] = "n/a";

	row_range(w, &lo, &hi);
	if (fs >= 0)
		snprintf(fsync, sizeof fsync, "%.2f", fs / jobs);
	printf("| %d | %s | %.0f | %.0f–%.0f | %.0f%% | %.0f | ", w->clients, mode_names[m], jobs, lo, hi,
	       MEDIAN(w, serve_cpu), MEDIAN(w, cpu_us_job));
	if (on_pg(m))
		printf("%.0f | ", MEDIAN(w, db_us_job));
	printf("%.0f%% | %s", MEDIAN(w, client_cpu), fsync);
}

/* w's jobs/s over ref's and, with_us, its CPU a job over ref's; n/a
 * where ref was not measured, or is w. */
static void print_ratios(const struct row *w, const struct row *ref, int with_us)
{
	if (!ref || ref == w) {
		printf(with_us ? " | n/a | n/a" : " | n/a");
		return;
	}
	printf(" | %.2f×", MEDIAN(w, jobs_s) / MEDIAN(ref, jobs_s));
	if (with_us)
		printf(" | %.2f×", MEDIAN(w, cpu_us_job) / MEDIAN(ref, cpu_us_job));
}

/* Of ebb's modes first..first+2 at a level, the one with the most jobs/s. */
static enum mode best_of(struct row *level, enum mode first)
{
	enum mode best = first;

	for (int m = (int)first + 1; m <= (int)first + 2; m++)
		if (MEDIAN(&level[m], jobs_s) > MEDIAN(&level[best], jobs_s))
			best = (enum mode)m;
	return best;
}

/* Section 1b: ebb on SQLite beside the peers measured. */
static void print_peers(struct row rows[][NMODES], const int *levels, int nlevels, int top, const int *can,
			int runs, double secs)
{
	static const enum mode shown[] = {PLAIN, NEXT, BATCH, REDIS, BEANSTALK};
	const struct row *redis, *bean;
	enum mode best = best_of(rows[top], PLAIN);
	double jobs = MEDIAN(&rows[top][best], jobs_s), us = MEDIAN(&rows[top][best], cpu_us_job);

	printf("## 1b. The cycle beside Redis and beanstalkd, and ebb's shorter calls\n\n");
	printf("The same client threads (one connection each) drive, one run after another at each level,\n"
	       "a fresh `ebb serve` in three ways, a fresh Redis and a fresh beanstalkd:\n\n"
	       "- **plain**: submit, lease, complete: three calls a job, as in section 1;\n"
	       "- **next**: submit, then complete with the worker's next lease request (`next`), whose reply\n"
	       "  brings the next job: two calls a job;\n"
	       "- **batch**: one submit of %ld jobs (an array), a lease of as many (`max_jobs`), then a\n"
	       "  complete each, the last with `next`: about one call a job;\n"
	       "- **Redis**: `redis-server` from Debian with `appendonly yes`, `appendfsync always` (an\n"
	       "  fsync before each write is acknowledged, as ebb's commit), no snapshots, driven through\n"
	       "  hiredis: LPUSH the job, BLMOVE it to a processing list, LREM it from there%s;\n"
	       "- **beanstalkd**: `beanstalkd` from Debian with its binlog on (`-b DIR`) and `-f 0` (an\n"
	       "  fsync on every binlog write), spoken to over a plain socket (bench/beanstalk.h): put the\n"
	       "  job, reserve it (`reserve-with-timeout`), delete it%s.\n\n"
	       "%d runs of %.0f s each per row, medians. \"Server CPU µs/job\" is serve's (or redis-server's,\n"
	       "or beanstalkd's) user + system time per completed job; the ratios are the row's figure over\n"
	       "Redis' or beanstalkd's at the same level (jobs/s: above 1 is faster; CPU: below 1 is cheaper).\n\n",
	       env_long("BENCH_BATCH", 16),
	       can[REDIS] ? "" : " (not measured here: not built with hiredis, or redis-server missing; scripts/deps.sh installs both)",
	       can[BEANSTALK] ? "" : " (not measured here: beanstalkd could not be run; scripts/deps.sh installs it)",
	       runs, secs);
	printf("| clients | setup | jobs/s | range | server CPU | server CPU µs/job | client CPU | fsyncs/job"
	       " | jobs/s ÷ Redis | µs/job ÷ Redis | jobs/s ÷ beanstalkd | µs/job ÷ beanstalkd |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int l = 0; l < nlevels; l++) {
		redis = can[REDIS] ? &rows[l][REDIS] : NULL;
		bean = can[BEANSTALK] ? &rows[l][BEANSTALK] : NULL;
		for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
			enum mode m = shown[i];
			if (!can[m])
				continue;
			print_compare_cells(&rows[l][m], m);
			print_ratios(&rows[l][m], m == BEANSTALK ? NULL : redis, 1);
			print_ratios(&rows[l][m], bean, 1);
			printf(" |\n");
		}
	}
	printf("\nGoal at %d clients: ebb at least Redis' jobs/s, with at most %.0f µs of serve CPU a job.\n",
	       levels[top], GOAL_US_JOB);
	if (can[REDIS])
		printf("Best ebb: %s, %.0f jobs/s against Redis' %.0f (%.2f×) — %s; %.0f µs a job — %s.\n",
		       mode_names[best], jobs, MEDIAN(&rows[top][REDIS], jobs_s), jobs / MEDIAN(&rows[top][REDIS], jobs_s),
		       goal_word(jobs >= MEDIAN(&rows[top][REDIS], jobs_s)), us, goal_word(us <= GOAL_US_JOB));
	else
		printf("Best ebb: %s, %.0f jobs/s, %.0f µs a job — %s; Redis not measured.\n", mode_names[best], jobs,
		       us, goal_word(us <= GOAL_US_JOB));
	if (can[BEANSTALK])
		printf("Against beanstalkd at %d clients (%.0f jobs/s, %.0f µs a job): %.2f× its jobs/s, %.2f× its CPU a job.\n",
		       levels[top], MEDIAN(&rows[top][BEANSTALK], jobs_s), MEDIAN(&rows[top][BEANSTALK], cpu_us_job),
		       jobs / MEDIAN(&rows[top][BEANSTALK], jobs_s), us / MEDIAN(&rows[top][BEANSTALK], cpu_us_job));
	printf("\n");
}

/* Section 1c: ebb's three ways on PostgreSQL with one serve and with
 * PG3_SERVES, against each other, the same on SQLite and the peers. */
static void print_pg(struct row rows[][NMODES], const int *levels, int nlevels, int top, const int *can, int runs,
		     double secs)
{
	enum mode best = best_of(rows[top], PG_PLAIN), best3 = PG3_PLAIN;
	int l3 = 0;

	printf("## 1c. The cycle on PostgreSQL\n\n");
	if (!can[PG_PLAIN]) {
		printf("Not measured here: no PostgreSQL (scripts/pg.sh start failed; scripts/deps.sh installs\n"
		       "postgresql).\n\n");
		return;
	}
	printf("In the same run and the same turns as 1b: one `ebb serve` with `[store] kind = postgres`, a\n"
	       "database of its own for each run in a throwaway PostgreSQL server (scripts/pg.sh: Debian's\n"
	       "PostgreSQL 15, fsync on, `synchronous_commit` on), reached on its unix socket; the same\n"
	       "three ways. Then the same with %d serves on one database, `[postgres] active = on`\n"
	       "(docs/HA.md), each with its own data directory and port, client i talking to serve i mod %d.\n"
	       "\"Server CPU\" is the serves' and the database server's processes' together (the\n"
	       "postmaster and its children when the window began; a worker that started or ended within\n"
	       "it is not counted), of which PostgreSQL's is given apart; fsyncs are theirs too. The\n"
	       "ratios are the row's over one serve's in the same way, over ebb's on SQLite in the same\n"
	       "way, and over Redis' and beanstalkd's, at the same level. %d runs of %.0f s each per row,\n"
	       "medians.\n\n",
	       PG3_SERVES, PG3_SERVES, runs, secs);
	printf("| clients | setup | jobs/s | range | server CPU | server CPU µs/job | of which PostgreSQL | client CPU"
	       " | fsyncs/job | jobs/s ÷ one serve | jobs/s ÷ SQLite | µs/job ÷ SQLite | jobs/s ÷ Redis"
	       " | jobs/s ÷ beanstalkd |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int l = 0; l < nlevels; l++) {
		for (int i = 0; i < 6; i++) {
			/* Each way with one serve, then with several. */
			enum mode m = (enum mode)(PG_PLAIN + i / 2 + (i % 2) * 3), one = (enum mode)(PG_PLAIN + i / 2);
			if (!can[m])
				continue;
			if (m != one && MEDIAN(&rows[l][m], jobs_s) > MEDIAN(&rows[l3][best3], jobs_s)) {
				l3 = l;
				best3 = m;
			}
			print_compare_cells(&rows[l][m], m);
			print_ratios(&rows[l][m], m != one ? &rows[l][one] : NULL, 0);
			print_ratios(&rows[l][m], can[calls_of(m)] ? &rows[l][calls_of(m)] : NULL, 1);
			print_ratios(&rows[l][m], can[REDIS] ? &rows[l][REDIS] : NULL, 0);
			print_ratios(&rows[l][m], can[BEANSTALK] ? &rows[l][BEANSTALK] : NULL, 0);
			printf(" |\n");
		}
	}
	printf("\nBest at %d clients with one serve: %s, %.0f jobs/s, %.0f µs of server CPU a job.\n", levels[top],
	       mode_names[best], MEDIAN(&rows[top][best], jobs_s), MEDIAN(&rows[top][best], cpu_us_job));
	if (can[PG3_PLAIN])
		printf("Best with %d serves: %s at %d clients, %.0f jobs/s (%.2f× one serve's in the same way),\n"
		       "%.0f µs of server CPU a job. Goal: at least %.0f jobs/s with three serves — %s.\n",
		       PG3_SERVES, mode_names[best3], levels[l3], MEDIAN(&rows[l3][best3], jobs_s),
		       MEDIAN(&rows[l3][best3], jobs_s) / MEDIAN(&rows[l3][calls_of(best3) + PG_PLAIN], jobs_s),
		       MEDIAN(&rows[l3][best3], cpu_us_job), GOAL_PG_JOBS_S,
		       goal_word(MEDIAN(&rows[l3][best3], jobs_s) >= GOAL_PG_JOBS_S));
	printf("\n");
}

/* ebb's cycle in each of its modes, on SQLite and on PostgreSQL, beside
 * the peers', at each level of spec. The runs of a level take turns, a
 * run of each setup after another, so that a machine busier for a while
 * weighs on every setup alike. A setup that cannot be run here is left
 * out (can[m] = 0), with a message; ebb on SQLite must run. */
static void compare(const char *spec, int runs, double secs)
{
	static struct row rows[MAX_LEVELS][NMODES];
	int levels[MAX_LEVELS], nlevels = 0, top = 0, can[NMODES];

	for (int m = 0; m < NMODES; m++)
		can[m] = !env_long("BENCH_PG_ONLY", 0) || on_pg((enum mode)m);
#ifndef BENCH_HIREDIS
	can[REDIS] = 0;
	fprintf(stderr, "cycle: built without hiredis (scripts/deps.sh installs libhiredis-dev): Redis not compared\n");
#endif
	for (const char *p = spec; *p && nlevels < MAX_LEVELS; p += strcspn(p, ","), p += *p == ',')
		levels[nlevels++] = atoi(p);
	if (nlevels == 0)
		return;
	if (pg_start() != 0) {
		fprintf(stderr, "cycle: no PostgreSQL (scripts/pg.sh start failed; scripts/deps.sh installs postgresql):"
				" ebb on PostgreSQL not measured\n");
		can[PG_PLAIN] = can[PG_NEXT] = can[PG_BATCH] = 0;
	} else {
		atexit(pg_stop); /* also when a run of ebb fails */
	}
	for (int l = 0; l < nlevels; l++) {
		int tries[NMODES];
		for (int m = 0; m < NMODES; m++) {
			memset(&rows[l][m], 0, sizeof rows[l][m]);
			rows[l][m].clients = levels[l];
			snprintf(rows[l][m].name, sizeof rows[l][m].name, "%s, %d clients", short_names[m], levels[l]);
			tries[m] = runs;
		}
		for (int done = 0; !done;) {
			done = 1;
			for (int m = 0; m < NMODES; m++) {
				struct result r;
				if (!can[m] || rows[l][m].nruns >= runs)
					continue;
				if (run_load((enum mode)m, levels[l], secs, &r) != 0) {
					if (m < REDIS)
						exit(1);
					fprintf(stderr, "cycle: %s could not be run: not compared\n", short_names[m]);
					can[m] = 0;
					continue;
				}
				keep_run(&rows[l][m], &r, &tries[m]);
				done &= rows[l][m].nruns >= runs;
			}
		}
		if (levels[l] > levels[top])
			top = l;
	}
	pg_stop();
	if (can[PLAIN])
		print_peers(rows, levels, nlevels, top, can, runs, secs);
	print_pg(rows, levels, nlevels, top, can, runs, secs);
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 5), levels[MAX_LEVELS], nlevels = 0;
	double secs = (double)env_long("BENCH_CYCLE_S", 5), best = 0;
	const char *spec = getenv("BENCH_LEVELS") ? getenv("BENCH_LEVELS") : "1,8,32,64,128";
	struct row rows[MAX_LEVELS + 2];
	int nrows = 0, best_c = 0, discarded;
	const char *compare_spec = getenv("BENCH_COMPARE_LEVELS") ? getenv("BENCH_COMPARE_LEVELS") : "1,16,64";
	double fsync_us;

	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	for (const char *p = spec; *p && nlevels < MAX_LEVELS; p += strcspn(p, ","), p += *p == ',')
		levels[nlevels++] = atoi(p);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, stop_on_signal);
	signal(SIGINT, stop_on_signal);
	if (env_long("BENCH_PG_ONLY", 0)) {
		compare(compare_spec, runs, secs);
		curl_global_cleanup();
		return 0;
	}
	fsync_us = fsync_latency_us();

	for (int b = 0; b < 2 && env_long("BENCH_BASELINE", 1); b++) {
		struct row *w = &rows[nrows++];
		memset(w, 0, sizeof *w);
		snprintf(w->name, sizeof w->name, b == 0 ? "baseline: store, 1 commit per cycle"
							 : "baseline: store, 1 commit per call (3 per cycle)");
		for (int tries = runs; w->nruns < runs;) {
			struct result r;
			if (run_store(b == 0, secs, &r) != 0)
				return 1;
			keep_run(w, &r, &tries);
		}
	}
	for (int l = 0; l < nlevels; l++) {
		struct row *w = &rows[nrows++];
		memset(w, 0, sizeof *w);
		w->clients = levels[l];
		snprintf(w->name, sizeof w->name, "HTTP, %d client%s", levels[l], levels[l] == 1 ? "" : "s");
		for (int tries = runs; w->nruns < runs;) {
			struct result r;
			if (run_load(PLAIN, levels[l], secs, &r) != 0)
				return 1;
			keep_run(w, &r, &tries);
		}
	}

	discarded = 0;
	for (int i = 0; i < nrows; i++)
		discarded += rows[i].discarded;
	printf("## 1. Full job cycle over HTTP\n\n");
	printf("Each client thread keeps one connection (%s) and\n"
	       "loops submit → lease → complete; a job counts when its complete is acknowledged.\n"
	       "%d runs of %.0f s each (after 1 s of warm-up) per row, each against a fresh\n"
	       "`ebb serve`; the figures are medians, the range is the slowest and the fastest run.\n"
	       "CPU is user + system time over the window in percent of one core (the machine has\n"
	       "two: 200%%); the clients share the cores with serve. \"CPU µs/job\" is serve's CPU\n"
	       "time per completed job (three requests), \"serve waited\" the share of the time serve\n"
	       "was ready to run but found both cores taken, \"other CPU\" what the rest of the\n"
	       "machine used meanwhile (noise: a run with more than %ld%% was done again; %d run%s\n"
	       "were). fsyncs are the fsync + fdatasync calls of serve (or of the store loop),\n"
	       "counted by `perf stat`. For scale: one fdatasync after a 4 KiB append takes %.0f µs\n"
	       "(median of 200) on this disk.\n\n",
	       use_curl() ? "libcurl, one easy handle per thread"
			  : "a plain socket and a minimal HTTP/1.1 writer and reader, bench/bench.h",
	       runs, secs, env_long("BENCH_MAX_OTHER_CPU", 25), discarded, discarded == 1 ? "" : "s",
	       fsync_us);
	printf("| setup | jobs/s | range | serve/store CPU | CPU µs/job | serve waited | client CPU"
	       " | other CPU | fsyncs/s | fsyncs/job |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < nrows; i++) {
		double m = MEDIAN(&rows[i], jobs_s);
		print_row(&rows[i]);
		if (rows[i].clients && m > best) {
			best = m;
			best_c = rows[i].clients;
		}
	}
	printf("\nGoal: at least %.0f jobs/s on this 2-core machine. Best: %.0f jobs/s with %d client%s — %s.\n",
	       GOAL_JOBS_S, best, best_c, best_c == 1 ? "" : "s", goal_word(best >= GOAL_JOBS_S));
	if (rows[0].clients == 0)
		printf("Against the store baseline with one commit per cycle (%.0f jobs/s): %.2f×.\n",
		       MEDIAN(&rows[0], jobs_s), best / MEDIAN(&rows[0], jobs_s));
	printf("\n");
	fflush(stdout);
	compare(compare_spec, runs, secs);
	curl_global_cleanup();
	return 0;
}
