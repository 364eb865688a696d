/* Benchmark 8: a backlog of a million queued jobs. Two serves side by
 * side on SQLite: one with no provider (the baseline), one with the
 * local provider, the scaler at interval = 500ms and one instance of one
 * GPU whose job sleeps, so that the work does not compete for the CPU.
 * `ebb submit --jobs` (1,000 a call, as users submit floods) fills both
 * in steps to each size; at each, on the serve with the scaler: GET
 * /metrics, GET /v1/dashboard, the scaler's runs (ebb_scaler_run_seconds
 * over a window), a lease's round trip, and serve's CPU and memory at
 * rest.
 *
 * The same on PostgreSQL (a throwaway PostgreSQL 15, a fresh database
 * for each setup: the first step is a burst into a database no analyze
 * has seen), where the setup with the scaler is three active serves on
 * one database (the first leads and is the one measured; the others
 * read the tallies again every second), and the CPU at rest is the
 * serves' and that of the server's processes that work for their
 * database or for every database (not those of the other setups').
 *
 * A third serve (no provider; on PostgreSQL one serve on a database of
 * its own) holds a backlog of the same size of two-GPU jobs, and
 * BENCH_POLLERS one-GPU workers long-poll it, fitting none of them: its
 * CPU while they wait, and the lease latency of one-GPU jobs submitted
 * one at a time (from the submit's request to the lease reply that
 * carries the job; the worker that got it parks again).
 *
 * Environment: BENCH_BACKLOG_SIZES ("0,100000,400000,1000000", in
 * increasing order), BENCH_BACKLOG_ENGINES ("sqlite,postgres"),
 * BENCH_SCRAPES (20 per size, after one to warm up), BENCH_LEASES (200
 * per size), BENCH_REST_S (10), BENCH_POLLERS (1000), BENCH_POLL_JOBS
 * (200 per size), EBB_BIN, EBB_SRC. */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pg.h"

#define MAX_SIZES 8
#define BAR_JOBS 400000
#define GOAL_SUBMIT_RATIO 1.5
#define GOAL_SCRAPE_MS 50.0
#define GOAL_DECISION_MS 5.0
#define GOAL_LEASE_P99_MS 10.0
#define GOAL_REST_CPU 1.0 /* % of a core */

struct level {
	long size;
	double submit_s[2]; /* reaching this size from the last: no provider, scaler on */
	double scrape_ms, scrape_p90_ms, dashboard_ms, decision_ms;
	long decisions;
	double lease_p50_ms, lease_p99_ms;
	double rest_cpu[2]; /* % of a core */
	double settle_s;    /* waited for the server's autovacuum before */
	long rss_kb[2];
	/* The pollers' serve: lease latency behind two-GPU jobs, its CPU
	 * while they wait. */
	double poll_p50_ms, poll_p99_ms, poll_cpu;
};

/* n jobs of gpus GPUs each, a JSON object a line, of six classes (three
 * lanes, two types). */
static int write_jobs(const char *path, long n, int gpus)
{
	static const char *const lanes[] = {"express", "standard", "batch"};
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (long k = 0; k < n; k++)
		fprintf(f, "{\"command\":[\"sleep\",\"600\"],\"lane\":\"%s\",\"type\":\"%s\",\"est_s\":60,\"gpus\":%d}\n",
			lanes[k % 3], k % 2 ? "infer" : "embed", gpus);
	return fclose(f);
}

/* `ebb submit --jobs path` against url: its wall time, or -1. */
static double submit_file(const char *url, const char *path)
{
	const char *bin = getenv("EBB_BIN") ? getenv("EBB_BIN") : "build/ebb";
	double t0 = now_s();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execl(bin, "ebb", "submit", "-s", url, "--jobs", path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "backlog: ebb submit --jobs %s to %s failed\n", path, url);
		return -1;
	}
	return now_s() - t0;
}

/* The _sum and _count of a histogram in a scrape. */
static void histogram_of(const char *text, const char *name, double *sum, long *count)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof key, "\n%s_sum ", name);
	*sum = (p = strstr(text, key)) ? strtod(p + strlen(key), NULL) : 0;
	snprintf(key, sizeof key, "\n%s_count ", name);
	*count = (p = strstr(text, key)) ? strtol(p + strlen(key), NULL, 10) : 0;
}

/* GET path n times after one more to warm up: the median and p90, ms. */
static int time_gets(struct http *h, const char *path, int n, double *med, double *p90)
{
	double *v = calloc((size_t)n, sizeof *v);

	if (!v || http_call(h, path, NULL) != 200) {
		free(v);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		if (http_call(h, path, NULL) != 200) {
			free(v);
			return -1;
		}
		v[i] = (now_s() - t0) * 1000;
	}
	*med = median(v, n);
	if (p90)
		*p90 = quantile(v, n, 0.9);
	free(v);
	return 0;
}

/* The scaler's runs so far: the sum of their times and their count. */
static int scaler_runs(const char *url, double *sum, long *count)
{
	struct http h;
	int rc = http_init(&h, url) == 0 && http_call(&h, "/metrics", NULL) == 200 ? 0 : -1;

	if (rc == 0)
		histogram_of(h.body, "ebb_scaler_run_seconds", sum, count);
	http_free(&h);
	return rc;
}

/* n leases, one after the other, of jobs there are: p50 and p99, ms. */
static int time_leases(struct http *h, int n, struct level *l)
{
	double *v = calloc((size_t)n, sizeof *v);

	if (!v)
		return -1;
	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		if (http_call(h, "/v1/lease", "{\"worker\":\"bench\",\"gpus\":1,\"lease_s\":3600}") != 200) {
			fprintf(stderr, "backlog: lease: %s\n", h->body);
			free(v);
			return -1;
		}
		v[i] = (now_s() - t0) * 1000;
	}
	l->lease_p50_ms = median(v, n);
	l->lease_p99_ms = quantile(v, n, 0.99);
	free(v);
	return 0;
}

/* The CPU seconds of the PostgreSQL server's processes that work for
 * database db (pg_works_for), 0 without a server. */
static double pg_cpu_s(const char *db)
{
	pid_t pids[256];
	int n = pg_dir[0] ? pg_pids(pids, 256) : 0;
	double sum = 0;

	for (int i = 0; i < n; i++) {
		double c = pg_works_for(pids[i], db) ? proc_cpu_s(pids[i]) : 0;
		sum += c > 0 ? c : 0;
	}
	return sum;
}

/* The database of setup k (0 the baseline, 1 the scaler's three serves,
 * 2 the pollers' serve) on PostgreSQL. */
static const char *setup_db(int k)
{
	static char db[3][32];

	snprintf(db[k], sizeof db[k], "backlog_%d_%d", (int)getpid(), k);
	return db[k];
}

/* After a burst, the PostgreSQL server's autovacuum passes first (at
 * most a few minutes): at rest, and the pollers' leases, are after them.
 * The seconds waited. */
static double settle(void)
{
	double t0 = now_s();

	while (pg_autovacuum_running() && now_s() - t0 < 300)
		sleep_s(1);
	return now_s() - t0;
}

/* The setups' CPU over rest_s seconds of nothing asked (on PostgreSQL,
 * with the server's processes that work for the setup's database and
 * those that work for every database; the scaler's with its two
 * followers, s[2] and s[3], where it has them), and their RSS. */
static void at_rest(const struct serve *s, int nserves, double rest_s, struct level *l)
{
	double c0[4], pg0[2], t0, used[2] = {0, 0};

	l->settle_s = settle();
	for (int k = 0; k < 2; k++)
		pg0[k] = pg_cpu_s(setup_db(k));
	t0 = now_s();

	for (int k = 0; k < nserves; k++)
		c0[k] = proc_cpu_s(s[k].pid);
	sleep_s(rest_s);
	for (int k = 0; k < nserves; k++)
		used[k ? 1 : 0] += proc_cpu_s(s[k].pid) - c0[k];
	for (int k = 0; k < 2; k++) {
		double pg = pg_cpu_s(setup_db(k)) - pg0[k];
		l->rest_cpu[k] = (used[k] + pg) / (now_s() - t0) * 100;
		l->rss_kb[k] = proc_status(s[k].pid, "VmRSS");
	}
}

/* Sends a one-GPU job's submit on sub and reads the replies that come on
 * the pollers (parking again each that was answered) and on sub until
 * the job is leased, or 10 s pass: the time from the submit's request
 * to the lease reply, ms, or -1. The lease may come before the submit's
 * reply: it is offered to the pollers before the submit commits. */
static double lease_of_submit(int ep, struct wire *sub)
{
	struct epoll_event evs[256];
	double sent = now_s(), leased_at = 0, deadline = sent + 10;
	long long id = -1, leased = -2;

	if (wire_send(sub, "/v1/jobs", "{\"command\":[\"true\"],\"gpus\":1}") != 0)
		return -1;
	while ((id < 0 || leased != id) && now_s() < deadline) {
		int k = epoll_wait(ep, evs, 256, 1000);
		double t = now_s();
		for (int i = 0; i < k; i++) {
			struct wire *c = evs[i].data.ptr;
			const char *body;
			int status, r = wire_read(c, &status, &body);
			if (r < 0)
				return -1;
			if (r == 0)
				continue;
			if (c == sub) {
				if (status != 201)
					return -1;
				id = reply_int(body, "id");
			} else if (status != 200 || wire_lease_parked(c) != 0) {
				return -1;
			} else if (!strstr(body, "\"job\":null")) {
				leased = reply_int(body, "id");
				leased_at = t;
			}
		}
	}
	if (id >= 0 && leased == id)
		return (leased_at - sent) * 1000;
	fprintf(stderr, "backlog: job %lld was not leased to a poller within 10 s\n", id);
	return -1;
}

/* The one-GPU jobs submitted behind the backlog, each one's lease timed:
 * of 50, the p99 was about their slowest, one lease in a run
 * (docs/BENCHMARKS.md, section 8). */
static long poll_jobs(void) { return env_long("BENCH_POLL_JOBS", 200); }

/* The pollers' serve p, its backlog grown to l->size two-GPU jobs: n
 * pollers parked, its CPU over rest_s while they wait, then one-GPU jobs
 * submitted one at a time and each one's lease latency. */
static int measure_pollers(struct serve *p, struct level *l, long from, const char *dir)
{
	int n = (int)env_long("BENCH_POLLERS", 1000), jobs = (int)poll_jobs(), ep = -1, rc = -1;
	struct wire *conns = calloc((size_t)n + 1, sizeof *conns), *sub = conns ? &conns[n] : NULL;
	double *v = calloc((size_t)jobs, sizeof *v), c0, t0;
	struct epoll_event ev;
	char path[600];

	snprintf(path, sizeof path, "%s/poll-%ld.jsonl", dir, l->size);
	if (!conns || !v || write_jobs(path, l->size - from, 2) != 0 ||
	    (l->size > from && submit_file(p->url, path) < 0))
		goto out;
	unlink(path);
	ep = epoll_create1(0);
	for (int i = 0; i <= n; i++) {
		conns[i].tag = i < n ? i : -1;
		if (wire_open(&conns[i], p->port, 1) != 0 || (i < n && wire_lease_parked(&conns[i]) != 0)) {
			fprintf(stderr, "backlog: poller %d: %s\n", i, strerror(errno));
			goto out;
		}
		ev.events = EPOLLIN;
		ev.data.ptr = &conns[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	if (wait_parked("backlog", p->url, n, 120) != 0)
		goto out;
	settle();
	c0 = proc_cpu_s(p->pid);
	t0 = now_s();
	sleep_s((double)env_long("BENCH_REST_S", 10));
	l->poll_cpu = (proc_cpu_s(p->pid) - c0) / (now_s() - t0) * 100;
	for (int i = 0; i < jobs; i++) {
		if ((v[i] = lease_of_submit(ep, sub)) < 0)
			goto out;
		if (v[i] > GOAL_LEASE_P99_MS) /* which ones make the tail */
			fprintf(stderr, "backlog: lease %d of %d took %.2f ms\n", i + 1, jobs, v[i]);
	}
	l->poll_p50_ms = median(v, jobs);
	l->poll_p99_ms = quantile(v, jobs, 0.99);
	rc = 0;
out:
	for (int i = 0; conns && i <= n; i++)
		if (conns[i].fd > 0)
			wire_close(&conns[i]);
	if (ep >= 0)
		close(ep);
	free(conns);
	free(v);
	fprintf(stderr, "backlog: %ld two-GPU jobs queued, %d one-GPU pollers: lease p50 %.2f p99 %.2f ms,"
			" serve's CPU while they wait %.1f%% of a core\n",
		l->size, n, l->poll_p50_ms, l->poll_p99_ms, l->poll_cpu);
	return rc;
}

static int parse_sizes(long *sizes)
{
	const char *spec = getenv("BENCH_BACKLOG_SIZES") ? getenv("BENCH_BACKLOG_SIZES") : "0,100000,400000,1000000";
	int n = 0;

	for (const char *p = spec; *p && n < MAX_SIZES; p += strcspn(p, ","), p += *p == ',')
		sizes[n++] = strtol(p, NULL, 10);
	return n;
}

static int measure(struct serve *s, int nserves, struct level *l, long from, const char *dir)
{
	char path[600], probes[600];
	struct http h;
	int scrapes = (int)env_long("BENCH_SCRAPES", 20), leases = (int)env_long("BENCH_LEASES", 200), rc = -1;
	double p90_unused, sum0, sum1;
	long n0, n1;

	snprintf(path, sizeof path, "%s/jobs-%ld.jsonl", dir, l->size);
	snprintf(probes, sizeof probes, "%s/probes.jsonl", dir);
	if (write_jobs(path, l->size - from, 1) != 0)
		return -1;
	if (scaler_runs(s[1].url, &sum0, &n0) != 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		l->submit_s[k] = l->size > from ? submit_file(s[k].url, path) : 0;
		if (l->submit_s[k] < 0)
			return -1;
	}
	/* The runs the submits brought on: each one woke the scaler. */
	if (scaler_runs(s[1].url, &sum1, &n1) != 0)
		return -1;
	l->decisions = n1 - n0;
	l->decision_ms = n1 > n0 ? (sum1 - sum0) / (double)(n1 - n0) * 1000 : 0;
	unlink(path);
	fprintf(stderr, "backlog: %ld queued: submitted in %.1f s (no provider), %.1f s (scaler on)\n", l->size,
		l->submit_s[0], l->submit_s[1]);
	if (http_init(&h, s[1].url) != 0 || time_gets(&h, "/metrics", scrapes, &l->scrape_ms, &l->scrape_p90_ms) != 0 ||
	    time_gets(&h, "/v1/dashboard", scrapes / 2, &l->dashboard_ms, &p90_unused) != 0)
		goto out;
	at_rest(s, nserves, (double)env_long("BENCH_REST_S", 10), l);
	/* The leases on the baseline, whose jobs no worker takes; their jobs
	 * put there first, ahead in lease order whatever the backlog. */
	http_free(&h);
	if (write_jobs(probes, leases, 1) != 0 || submit_file(s[0].url, probes) < 0 || http_init(&h, s[0].url) != 0 ||
	    time_leases(&h, leases, l) != 0)
		goto out;
	rc = 0;
out:
	http_free(&h);
	fprintf(stderr, "backlog: %ld queued: /metrics %.2f ms, dashboard %.2f ms, scaler run %.2f ms (%ld runs),"
			" lease p50 %.2f p99 %.2f ms, at rest %.1f%% / %.1f%% of a core (after %.0f s of autovacuum)\n",
		l->size, l->scrape_ms, l->dashboard_ms, l->decision_ms, l->decisions, l->lease_p50_ms, l->lease_p99_ms,
		l->rest_cpu[0], l->rest_cpu[1], l->settle_s);
	return rc;
}

static void report(const char *engine, const struct level *l, int n)
{
	double bar[2] = {0, 0};
	const struct level *big = &l[n - 1], *mid = NULL;
	long bar_jobs = 0;

	for (int i = 0; i < n; i++) {
		if (l[i].size <= BAR_JOBS) {
			for (int k = 0; k < 2; k++)
				bar[k] += l[i].submit_s[k];
			bar_jobs = l[i].size;
		}
		if (l[i].size == 100000)
			mid = &l[i];
	}
	printf("### %s\n\n", engine);
	printf("Two serves side by side: the baseline with no provider, and one with the local provider,\n"
	       "the scaler at `interval = 500ms` and one instance of one GPU whose job sleeps (so that the work\n"
	       "does not compete for the CPU); `[queue] max_queued` above the backlog. `ebb submit --jobs` (1,000\n"
	       "jobs a call) fills both in steps up to each size, jobs of six classes. At each size, on the serve\n"
	       "with the scaler: `GET /metrics` and `GET /v1/dashboard` (medians of %ld and %ld, after one to warm\n"
	       "up), the mean scaler run while the submits to that size came (`ebb_scaler_run_seconds`: the view,\n"
	       "the plan and the actions; each submit wakes the scaler),\n"
	       "and serve's CPU at rest over %ld s with nothing asked (on PostgreSQL, with the server's processes that\n"
	       "work for the setup's database and those that work for all, once the server's autovacuum workers\n"
	       "have finished their passes over the burst); on the baseline, %ld leases one after another (jobs that are there: a lease's round trip,\n"
	       "its commit included, through the lease query at that backlog). One run.\n\n",
	       env_long("BENCH_SCRAPES", 20), env_long("BENCH_SCRAPES", 20) / 2, env_long("BENCH_REST_S", 10),
	       env_long("BENCH_LEASES", 200));
	printf("| queued | submit to here, jobs/s: no provider | scaler on | ratio | /metrics, ms | p90 | dashboard, ms "
	       "| scaler run, ms (runs) | lease p50, ms | p99 | CPU at rest: no provider | scaler on | RSS, MB: no "
	       "provider | scaler on |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < n; i++) {
		long added = l[i].size - (i ? l[i - 1].size : 0);
		if (added > 0)
			printf("| %ld | %.0f | %.0f | %.2f× ", l[i].size, added / l[i].submit_s[0], added / l[i].submit_s[1],
			       l[i].submit_s[1] / l[i].submit_s[0]);
		else
			printf("| %ld | - | - | - ", l[i].size);
		printf("| %.2f | %.2f | %.2f | %.2f (%ld) | %.2f | %.2f | %.1f%% | %.1f%% | %.0f | %.0f |\n", l[i].scrape_ms,
		       l[i].scrape_p90_ms, l[i].dashboard_ms, l[i].decision_ms, l[i].decisions, l[i].lease_p50_ms,
		       l[i].lease_p99_ms, l[i].rest_cpu[0], l[i].rest_cpu[1], l[i].rss_kb[0] / 1024.0,
		       l[i].rss_kb[1] / 1024.0);
	}
	printf("\n");
	if (bar[0] > 0)
		printf("The bar: %ld jobs submitted in %.1f s with the scaler on against %.1f s with no provider, %.2f× "
		       "(at most %.1f×) — %s; `/metrics` with %ld queued in %.2f ms (at most %.0f) — %s.\n\n",
		       bar_jobs, bar[1], bar[0], bar[1] / bar[0], GOAL_SUBMIT_RATIO,
		       goal_word(bar[1] / bar[0] <= GOAL_SUBMIT_RATIO), big->size, big->scrape_ms, GOAL_SCRAPE_MS,
		       goal_word(big->scrape_ms <= GOAL_SCRAPE_MS));
	printf("Goals at %ld queued: a scaler run ≤ %.0f ms (%.2f) — %s; a scrape ≤ %.0f ms (%.2f) — %s; lease p99 ≤ %.0f "
	       "ms (%.2f) — %s; CPU at rest ≤ %.0f%% of a core (%.1f%%) — %s",
	       big->size, GOAL_DECISION_MS, big->decision_ms, goal_word(big->decision_ms <= GOAL_DECISION_MS),
	       GOAL_SCRAPE_MS, big->scrape_ms, goal_word(big->scrape_ms <= GOAL_SCRAPE_MS), GOAL_LEASE_P99_MS,
	       big->lease_p99_ms, goal_word(big->lease_p99_ms <= GOAL_LEASE_P99_MS), GOAL_REST_CPU, big->rest_cpu[1],
	       goal_word(big->rest_cpu[1] <= GOAL_REST_CPU));
	if (mid && mid != big)
		printf("; against %ld queued: /metrics %.2f×, scaler run %.2f×, lease p99 %.2f× (at most 1.5×)",
		       mid->size, big->scrape_ms / mid->scrape_ms, mid->decision_ms > 0 ? big->decision_ms / mid->decision_ms : 0,
		       big->lease_p99_ms / mid->lease_p99_ms);
	printf(".\n\n");
	printf("A third serve (no provider%s) with a backlog of as many two-GPU jobs, and %ld one-GPU workers\n"
	       "long-polling it, which fit none of them: serve's CPU over %ld s while they wait, and the latency of\n"
	       "a lease of a one-GPU job submitted behind the backlog (%ld, one at a time: from the submit's request\n"
	       "to the lease reply that carries it, the submit's commit included)%s.\n\n",
	       strstr(engine, "PostgreSQL") ? ", one serve on a database of its own" : "", env_long("BENCH_POLLERS", 1000),
	       env_long("BENCH_REST_S", 10), poll_jobs(),
	       strstr(engine, "PostgreSQL") ? "; once the server's autovacuum has passed over the burst" : "");
	printf("| queued two-GPU jobs | lease behind them p50, ms | p99 | serve's CPU while the pollers wait |\n");
	printf("|---:|---:|---:|---:|\n");
	for (int i = 0; i < n; i++)
		printf("| %ld | %.2f | %.2f | %.1f%% |\n", l[i].size, l[i].poll_p50_ms, l[i].poll_p99_ms, l[i].poll_cpu);
	printf("\n");
}

/* The local provider's workers outlive serve, as a cloud's instances
 * outlive their control plane: each would wait out its orphan timeout
 * after the bench (a SIGTERM too: its sleeping job's interrupt must reach
 * a serve). Each leads its process group, its job's with it
 * (provider/local.c). */
static void stop_local_workers(const char *url)
{
	static const char ref[] = "\"provider_ref\":\"pid:";
	struct http h;

	if (http_init(&h, url) != 0)
		return;
	if (http_call(&h, "/v1/fleet", NULL) == 200)
		for (const char *p = h.body; (p = strstr(p, ref)); p += sizeof ref - 1)
			if (atol(p + sizeof ref - 1) > 1)
				kill(-(pid_t)atol(p + sizeof ref - 1), SIGKILL);
	http_free(&h);
}

/* One engine's run: 0, or -1. */
static int run_engine(const char *engine, const long *sizes, int n)
{
	struct serve s[5]; /* the last: the pollers' */
	struct level l[MAX_SIZES] = {{0}};
	char conf[3][2048];
	int done = 0, pg = strcmp(engine, "postgres") == 0, nserves = pg ? 4 : 2, started = 0;

	for (int k = 0; k < 3; k++) {
		char store[900] = "";
		if (pg) {
			if (pg_create(setup_db(k)) != 0)
				return -1;
			snprintf(store, sizeof store, "[store]\nkind = postgres\n[postgres]\nurl = %s dbname=%s\n%s", pg_url,
				 setup_db(k), k == 1 ? "active = on\n" : "");
		}
		snprintf(conf[k], sizeof conf[k], "%s[queue]\nmax_queued = %ld\nlanes = express,standard,batch\n%s", store,
			 sizes[n - 1] + 100000,
			 k == 1 ? "[provider]\nkind = local\n[local]\ngpus = 0\n[scaler]\ninterval = 500ms\n"
			     "[offer.one]\ngpus = 1\nprice_ondemand = 1.0\nmax_instances = 1\n"
			   : "");
	}
	/* s[1] first of the three on its database: it leads. */
	while (started < nserves && serve_start(&s[started], conf[started ? 1 : 0]) == 0)
		started++;
	if (started == nserves && serve_start(&s[nserves], conf[2]) == 0)
		started++;
	for (int i = 0; i < n && started == nserves + 1; i++) {
		l[i].size = sizes[i];
		fprintf(stderr, "backlog: %s\n", engine);
		if (measure(s, nserves, &l[i], i ? sizes[i - 1] : 0, s[0].dir) != 0 ||
		    measure_pollers(&s[nserves], &l[i], i ? sizes[i - 1] : 0, s[0].dir) != 0)
			break;
		done++;
	}
	if (started > 1)
		stop_local_workers(s[1].url);
	while (started > 0)
		serve_stop(&s[--started]);
	if (done)
		report(pg ? "PostgreSQL: the baseline one serve, the scaler three active serves" : "SQLite", l, done);
	return done == n ? 0 : -1;
}

int main(void)
{
	const char *engines = getenv("BENCH_BACKLOG_ENGINES") ? getenv("BENCH_BACKLOG_ENGINES") : "sqlite,postgres";
	long sizes[MAX_SIZES];
	int n = parse_sizes(sizes), rc = 0;
	struct rlimit rl;

	/* A descriptor per poller. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);

	printf("## 8. A million queued jobs\n\n");
	if (strstr(engines, "sqlite") && run_engine("sqlite", sizes, n) != 0)
		rc = 1;
	if (strstr(engines, "postgres")) {
		if (pg_start() != 0) {
			printf("### PostgreSQL\n\nSkipped: no PostgreSQL 15 could be started (scripts/pg.sh).\n\n");
		} else {
			if (run_engine("postgres", sizes, n) != 0)
				rc = 1;
			pg_stop();
		}
	}
	return rc;
}
