/* Benchmark 1: the full job cycle. C client threads, each with one
 * kept-alive connection, loop submit -> lease -> complete against a fresh
 * `ebb serve` on loopback (WAL, synchronous = FULL, group commit) and we
 * count completed cycles per second. The baseline does the same cycle
 * through the store without HTTP, one transaction (one fsync) per cycle,
 * which is what serve would cost without group commit.
 *
 * Then the same cycle side by side with Redis (bench/redis.h: lists,
 * `appendfsync always`), and ebb with the calls that shorten it
 * (docs/API.md): "next" completes each job with the worker's next lease
 * request (submit, complete+next: two calls a job); "batch" submits
 * BENCH_BATCH jobs in one call, leases as many at once (max_jobs) and
 * completes each, the last with next (about one call a job).
 *
 * Environment: BENCH_RUNS (5), BENCH_CYCLE_S (5: seconds measured per run,
 * after 1 s of warm-up), BENCH_LEVELS ("1,8,32,64,128"), BENCH_COMPARE_LEVELS
 * ("1,16,64": the levels of the comparison with Redis; "" skips it),
 * BENCH_BATCH (16, at most 20: the jobs of a batch), BENCH_BASELINE (1; 0
 * skips it, e.g. while profiling serve), BENCH_CLIENT ("wire": plain
 * sockets; "curl": libcurl easy handles), BENCH_MAX_OTHER_CPU (25: a run
 * during which other processes used more than this percentage of a core is
 * done again, up to twice the runs asked for), EBB_BIN. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "bench.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "serve/queue.h"
#include "store/store.h"
#ifdef BENCH_HIREDIS
#include "redis.h"
#endif

#define MAX_LEVELS 8
#define MAX_RUNS 15
#define MAX_BATCH 20 /* a lease of that many jobs fits struct wire's buffer */
#define GOAL_JOBS_S 5000.0

/* What the client threads drive. */
enum mode { PLAIN, NEXT, BATCH, REDIS };
static const char *const mode_names[] = {
	"ebb, submit + lease + complete (3 calls a job)",
	"ebb, submit + complete with next (2 calls a job)",
	"ebb, batch submit + max_jobs lease + complete, the last with next",
	"Redis, LPUSH + BLMOVE + LREM",
};
static const char *const short_names[] = {"ebb plain", "ebb next", "ebb batch", "Redis"};

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

#ifdef BENCH_HIREDIS
static void *redis_client_main(void *arg)
{
	struct client_thread *t = arg;
	struct redis_client rc;

	if (redis_client_open(&rc, t->port, t->n) != 0) {
		if (atomic_fetch_add(&errors, 1) == 0)
			fprintf(stderr, "cycle: redis: %s\n", rc.error);
		redis_client_close(&rc);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		int r = redis_cycle(&rc);
		if (r < 0) {
			if (atomic_fetch_add(&errors, 1) == 0)
				fprintf(stderr, "cycle: redis: %s\n", rc.error);
			break;
		}
		atomic_fetch_add(&cycles, r);
	}
	redis_client_close(&rc);
	return NULL;
}
#endif

struct result {
	double jobs_s, serve_cpu, client_cpu, other_cpu, fsyncs_s;
	double serve_wait; /* % of the time serve was runnable but had no CPU */
	double cpu_us_job; /* serve's (or the store loop's) CPU time per job */
	double total;      /* cycles over the whole run, warm-up included */
};

static int use_curl(void)
{
	const char *c = getenv("BENCH_CLIENT");

	return c && strcmp(c, "curl") == 0;
}

/* The server a run measures: a fresh `ebb serve`, or Redis. */
struct server {
	enum mode mode;
	struct serve s;
#ifdef BENCH_HIREDIS
	struct redis r;
#endif
	pid_t pid;
	int port;
};

static int server_start(struct server *sv, enum mode m)
{
	sv->mode = m;
#ifdef BENCH_HIREDIS
	if (m == REDIS) {
		if (redis_start(&sv->r) != 0)
			return -1;
		sv->pid = sv->r.pid;
		sv->port = sv->r.port;
		return 0;
	}
#endif
	if (m == REDIS || serve_start(&sv->s, "") != 0)
		return -1;
	sv->pid = sv->s.pid;
	sv->port = sv->s.port;
	return 0;
}

static void server_stop(struct server *sv)
{
#ifdef BENCH_HIREDIS
	if (sv->mode == REDIS) {
		redis_stop(&sv->r);
		return;
	}
#endif
	serve_stop(&sv->s);
}

/* One run of mode at concurrency c: a fresh server, 1 s warm-up, secs
 * measured. */
static int run_load(enum mode m, int c, double secs, struct result *r)
{
	struct client_thread *t;
	struct fsync_count fc;
	struct server sv;
	void *(*fn)(void *) = client_main;
	double t0, t1, s0, s1, c0, c1, m0, m1, run0 = 0, run1 = 0, wait0 = 0, wait1 = 0;
	long n0, n1, fsyncs;

	if (server_start(&sv, m) != 0)
		return -1;
#ifdef BENCH_HIREDIS
	if (m == REDIS)
		fn = redis_client_main;
#endif
	t = calloc((size_t)c, sizeof *t);
	atomic_store(&cycles, 0);
	atomic_store(&errors, 0);
	atomic_store(&stop, 0);
	for (int i = 0; i < c; i++) {
		t[i].n = i;
		t[i].mode = m;
		t[i].port = sv.port;
		t[i].url = sv.s.url;
		t[i].batch = (int)env_long("BENCH_BATCH", 16);
		t[i].batch = t[i].batch < 1 ? 1 : t[i].batch > MAX_BATCH ? MAX_BATCH : t[i].batch;
		t[i].curl = use_curl();
		pthread_create(&t[i].tid, NULL, fn, &t[i]);
	}
	sleep_s(1.0);
	fsync_count_start(&fc, sv.pid);
	t0 = now_s();
	n0 = atomic_load(&cycles);
	s0 = proc_cpu_s(sv.pid);
	c0 = proc_cpu_s(getpid());
	m0 = machine_busy_s();
	proc_sched_s(sv.pid, &run0, &wait0);
	sleep_s(secs);
	t1 = now_s();
	n1 = atomic_load(&cycles);
	s1 = proc_cpu_s(sv.pid);
	c1 = proc_cpu_s(getpid());
	m1 = machine_busy_s();
	proc_sched_s(sv.pid, &run1, &wait1);
	fsyncs = fsync_count_stop(&fc);
	atomic_store(&stop, 1);
	for (int i = 0; i < c; i++)
		pthread_join(t[i].tid, NULL);
	server_stop(&sv);
	free(t);
	if (atomic_load(&errors))
		return -1;
	r->total = (double)atomic_load(&cycles);
	r->jobs_s = (double)(n1 - n0) / (t1 - t0);
	r->serve_cpu = 100 * (s1 - s0) / (t1 - t0);
	r->client_cpu = 100 * (c1 - c0) / (t1 - t0);
	r->other_cpu = 100 * ((m1 - m0) - (s1 - s0) - (c1 - c0)) / (t1 - t0);
	r->serve_wait = 100 * (wait1 - wait0) / (t1 - t0);
	r->cpu_us_job = 1e6 * (s1 - s0) / (double)(n1 - n0);
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
	fsync_count_start(&fc, getpid());
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
		rc = rc || queue_lease(&q, &offer, "w1", 0, 600000, &job, &err) != 1;
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

static void print_row(const struct row *w)
{
	double jobs = MEDIAN(w, jobs_s), fs = MEDIAN(w, fsyncs_s), lo = jobs, hi = jobs;
	char fsync[32] = "n/a", per_job[32] = "n/a", client[16] = "-", wait[16] = "-";

	for (int i = 0; i < w->nruns; i++) {
		lo = w->runs[i].jobs_s < lo ? w->runs[i].jobs_s : lo;
		hi = w->runs[i].jobs_s > hi ? w->runs[i].jobs_s : hi;
	}
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

#define NMODES 4
#define GOAL_US_JOB 60.0

/* One row of the comparison: mode at its level, beside redis, that of
 * Redis at the same level (NULL: not measured, no ratios). */
static void print_compare_row(const struct row *w, enum mode m, const struct row *redis)
{
	double jobs = MEDIAN(w, jobs_s), us = MEDIAN(w, cpu_us_job), fs = MEDIAN(w, fsyncs_s), lo = jobs, hi = jobs;
	char fsync[32] = "n/a", ratio_jobs[32] = "n/a", ratio_us[32] = "n/a";

	for (int i = 0; i < w->nruns; i++) {
		lo = w->runs[i].jobs_s < lo ? w->runs[i].jobs_s : lo;
		hi = w->runs[i].jobs_s > hi ? w->runs[i].jobs_s : hi;
	}
	if (fs >= 0)
		snprintf(fsync, sizeof fsync, "%.2f", fs / jobs);
	if (redis && m != REDIS) {
		snprintf(ratio_jobs, sizeof ratio_jobs, "%.2f×", jobs / MEDIAN(redis, jobs_s));
		snprintf(ratio_us, sizeof ratio_us, "%.2f×", us / MEDIAN(redis, cpu_us_job));
	}
	printf("| %d | %s | %.0f | %.0f–%.0f | %.0f%% | %.0f | %.0f%% | %s | %s | %s |\n", w->clients, mode_names[m], jobs,
	       lo, hi, MEDIAN(w, serve_cpu), us, MEDIAN(w, client_cpu), fsync, ratio_jobs, ratio_us);
}

/* ebb's cycle in each of its modes beside Redis', at each level of spec.
 * The runs of a level take turns, a run of each mode after another, so
 * that a machine busier for a while weighs on every mode alike. */
static void compare(const char *spec, int runs, double secs)
{
	static struct row rows[MAX_LEVELS][NMODES];
	int levels[MAX_LEVELS], nlevels = 0, nmodes = NMODES, top = -1;
	double best_jobs = 0, best_us = 0;
	enum mode best_mode = PLAIN;

#ifndef BENCH_HIREDIS
	nmodes = REDIS; /* built without hiredis */
#endif
	for (const char *p = spec; *p && nlevels < MAX_LEVELS; p += strcspn(p, ","), p += *p == ',')
		levels[nlevels++] = atoi(p);
	if (nlevels == 0)
		return;
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
			for (int m = 0; m < nmodes; m++) {
				struct result r;
				if (rows[l][m].nruns >= runs)
					continue;
				if (run_load((enum mode)m, levels[l], secs, &r) != 0) {
					if (m != REDIS)
						exit(1);
					fprintf(stderr, "cycle: Redis could not be run: not compared\n");
					nmodes = REDIS;
					continue;
				}
				keep_run(&rows[l][m], &r, &tries[m]);
				done &= rows[l][m].nruns >= runs;
			}
		}
	}

	printf("## 1b. The cycle beside Redis, and ebb's shorter calls\n\n");
	printf("The same client threads (one connection each) drive, one run after another at each level,\n"
	       "a fresh `ebb serve` in three ways and a fresh Redis %s:\n\n"
	       "- **plain**: submit, lease, complete: three calls a job, as in section 1;\n"
	       "- **next**: submit, then complete with the worker's next lease request (`next`), whose reply\n"
	       "  brings the next job: two calls a job;\n"
	       "- **batch**: one submit of %ld jobs (an array), a lease of as many (`max_jobs`), then a\n"
	       "  complete each, the last with `next`: about one call a job;\n"
	       "- **Redis**: `redis-server` from Debian with `appendonly yes`, `appendfsync always` (an\n"
	       "  fsync before each write is acknowledged, as ebb's commit), no snapshots, driven through\n"
	       "  hiredis: LPUSH the job, BLMOVE it to a processing list, LREM it from there.\n\n"
	       "%d runs of %.0f s each per row, medians. \"Server CPU µs/job\" is serve's (or redis-server's)\n"
	       "user + system time per completed job; the ratios are ebb's figure over Redis' at the same\n"
	       "level (jobs/s: above 1 is faster than Redis; CPU: below 1 is cheaper).\n\n",
#ifdef BENCH_HIREDIS
	       "beside it",
#else
	       "(not here: built without hiredis; scripts/deps.sh installs libhiredis-dev)",
#endif
	       env_long("BENCH_BATCH", 16), runs, secs);
	printf("| clients | setup | jobs/s | range | server CPU | server CPU µs/job | client CPU | fsyncs/job"
	       " | jobs/s ÷ Redis | µs/job ÷ Redis |\n");
	printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int l = 0; l < nlevels; l++) {
		for (int m = 0; m < nmodes; m++)
			print_compare_row(&rows[l][m], (enum mode)m, nmodes > REDIS ? &rows[l][REDIS] : NULL);
		if (levels[l] > (top < 0 ? 0 : levels[top]))
			top = l;
	}
	for (int m = 0; m < REDIS; m++) {
		double j = MEDIAN(&rows[top][m], jobs_s);
		if (j > best_jobs) {
			best_jobs = j;
			best_us = MEDIAN(&rows[top][m], cpu_us_job);
			best_mode = (enum mode)m;
		}
	}
	printf("\nGoal at %d clients: ebb at least Redis' jobs/s, with at most %.0f µs of serve CPU a job.\n",
	       levels[top], GOAL_US_JOB);
	if (nmodes > REDIS)
		printf("Best ebb: %s, %.0f jobs/s against Redis' %.0f (%.2f×) — %s; %.0f µs a job — %s.\n\n",
		       mode_names[best_mode], best_jobs, MEDIAN(&rows[top][REDIS], jobs_s),
		       best_jobs / MEDIAN(&rows[top][REDIS], jobs_s),
		       goal_word(best_jobs >= MEDIAN(&rows[top][REDIS], jobs_s)), best_us,
		       goal_word(best_us <= GOAL_US_JOB));
	else
		printf("Best ebb: %s, %.0f jobs/s, %.0f µs a job — %s; Redis not measured.\n\n",
		       mode_names[best_mode], best_jobs, best_us, goal_word(best_us <= GOAL_US_JOB));
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 5), levels[MAX_LEVELS], nlevels = 0;
	double secs = (double)env_long("BENCH_CYCLE_S", 5), best = 0;
	const char *spec = getenv("BENCH_LEVELS") ? getenv("BENCH_LEVELS") : "1,8,32,64,128";
	struct row rows[MAX_LEVELS + 2];
	int nrows = 0, best_c = 0, discarded;
	double fsync_us = fsync_latency_us();

	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	for (const char *p = spec; *p && nlevels < MAX_LEVELS; p += strcspn(p, ","), p += *p == ',')
		levels[nlevels++] = atoi(p);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);

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
	compare(getenv("BENCH_COMPARE_LEVELS") ? getenv("BENCH_COMPARE_LEVELS") : "1,16,64", runs, secs);
	curl_global_cleanup();
	return 0;
}
