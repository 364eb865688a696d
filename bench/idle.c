/* Benchmark 2: the idle footprint of serve. Several serves start side by
 * side; some get a little traffic (jobs submitted, leased and completed,
 * stats and a listing read), the others none, which is the baseline. Then
 * all of them sit idle for BENCH_IDLE_S, and over a further window we read
 * their resident memory and count their wake-ups (context switches,
 * voluntary or not, of every thread) from /proc. Idle serves do not
 * disturb one another, so the runs share the wall-clock time.
 *
 * Environment: BENCH_RUNS (5), BENCH_IDLE_S (600, the goal's ten minutes),
 * BENCH_IDLE_WINDOW_S (60), EBB_BIN. */
#include <stddef.h>

#include "bench.h"

#define MAX_RUNS 15
#define GOAL_RSS_MB 8.0
#define GOAL_WAKEUPS_S 1.0

struct instance {
	struct serve s;
	int traffic;
	long ctx_quiet, ctx_start, ctx_end; /* quiet: when the traffic ended */
	double t_quiet, t_start, t_end;
	double rss_mb, hwm_mb, anon_mb, file_mb;
	int threads;
};

/* A few jobs through their whole life, and the reads a dashboard makes. */
static int traffic(const char *url)
{
	struct http h;
	int rc = 0;

	if (http_init(&h, url) != 0)
		return -1;
	for (int i = 0; i < 5 && rc == 0; i++) {
		char path[96], body[96];
		long long id, token;

		if (http_call(&h, "/v1/jobs", "{\"command\":[\"true\"]}") != 201 ||
		    http_call(&h, "/v1/lease", "{\"worker\":\"w1\",\"wait_s\":1,\"gpus\":1}") != 200) {
			rc = -1;
			break;
		}
		id = reply_int(h.body, "id");
		token = reply_int(h.body, "token");
		snprintf(path, sizeof path, "/v1/jobs/%lld/complete", id);
		snprintf(body, sizeof body, "{\"lease_token\":%lld}", token);
		rc = http_call(&h, path, body) == 200 ? 0 : -1;
	}
	/* A lease that finds nothing and waits out its wait_s. */
	if (rc == 0 && http_call(&h, "/v1/lease", "{\"worker\":\"w1\",\"wait_s\":1,\"gpus\":1}") != 200)
		rc = -1;
	if (rc == 0 && (http_call(&h, "/v1/stats", NULL) != 200 || http_call(&h, "/v1/jobs", NULL) != 200))
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "idle: traffic failed: %s: %.200s\n", h.url, h.body);
	http_free(&h);
	return rc;
}

static void snapshot(struct instance *in, long *ctx, double *t)
{
	*ctx = proc_ctx_switches(in->s.pid, &in->threads);
	*t = now_s();
}

static double med(struct instance *ins, int n, int traffic_, size_t off)
{
	double v[MAX_RUNS];
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (ins[i].traffic == traffic_)
			v[k++] = *(const double *)((const char *)&ins[i] + off);
	}
	return median(v, k);
}

#define MED(ins, n, t, field) med(ins, n, t, offsetof(struct instance, field))

static double wakeups_window(const struct instance *in)
{
	return (double)(in->ctx_end - in->ctx_start) / (in->t_end - in->t_start);
}

static double wakeups_idle(const struct instance *in)
{
	return (double)(in->ctx_end - in->ctx_quiet) / (in->t_end - in->t_quiet);
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 5), n;
	double idle_s = (double)env_long("BENCH_IDLE_S", 600);
	double window_s = (double)env_long("BENCH_IDLE_WINDOW_S", 60);
	/* This program links the libraries serve links: its own footprint now,
	 * before it has done anything, is the floor that loading them costs. */
	double floor_rss = (double)proc_status(getpid(), "VmRSS") / 1024;
	double floor_file = (double)proc_status(getpid(), "RssFile") / 1024;
	struct instance ins[2 * MAX_RUNS];
	double w_win[2][MAX_RUNS], w_idle[2][MAX_RUNS], rss, wake;
	int nw[2] = {0, 0};

	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	n = 2 * runs;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	memset(ins, 0, sizeof ins);
	for (int i = 0; i < n; i++) {
		ins[i].traffic = i < runs;
		if (serve_start(&ins[i].s, "") != 0)
			return 1;
	}
	for (int i = 0; i < n; i++) {
		if (ins[i].traffic && traffic(ins[i].s.url) != 0)
			return 1;
	}
	for (int i = 0; i < n; i++)
		snapshot(&ins[i], &ins[i].ctx_quiet, &ins[i].t_quiet);
	fprintf(stderr, "idle: %d serves (%d with traffic) idle for %.0f s, then measured for %.0f s\n", n,
		runs, idle_s, window_s);
	sleep_s(idle_s);
	for (int i = 0; i < n; i++)
		snapshot(&ins[i], &ins[i].ctx_start, &ins[i].t_start);
	sleep_s(window_s);
	for (int i = 0; i < n; i++) {
		struct instance *in = &ins[i];
		snapshot(in, &in->ctx_end, &in->t_end);
		in->rss_mb = (double)proc_status(in->s.pid, "VmRSS") / 1024;
		in->hwm_mb = (double)proc_status(in->s.pid, "VmHWM") / 1024;
		in->anon_mb = (double)proc_status(in->s.pid, "RssAnon") / 1024;
		in->file_mb = (double)proc_status(in->s.pid, "RssFile") / 1024;
		w_win[in->traffic][nw[in->traffic]] = wakeups_window(in);
		w_idle[in->traffic][nw[in->traffic]++] = wakeups_idle(in);
		fprintf(stderr, "idle: serve %d (traffic %d): VmRSS %.1f MB, VmHWM %.1f MB, %d thread(s),"
				" %.3f wake-ups/s in the window, %.3f over the whole idle time\n",
			i, in->traffic, in->rss_mb, in->hwm_mb, in->threads, wakeups_window(in), wakeups_idle(in));
	}
	for (int i = 0; i < n; i++)
		serve_stop(&ins[i].s);

	printf("## 2. Idle footprint of serve\n\n");
	printf("%d serves with traffic (5 jobs submitted, leased and completed, a lease that waits\n"
	       "1 s for nothing, stats and a job listing read, then the connection closed) and %d\n"
	       "without any, the baseline, all started together; then %.0f s with no traffic, then a\n"
	       "window of %.0f s. Memory is read from /proc/PID/status at the end of the window;\n"
	       "wake-ups are the voluntary and involuntary context switches of all of serve's threads\n"
	       "over the window, per second (and, in brackets, over the whole idle time and the\n"
	       "window). Medians over the serves of each kind.\n\n",
	       runs, runs, idle_s, window_s);
	printf("| serve | VmRSS, MB | VmHWM, MB | of which anonymous, MB | of which files (libraries), MB"
	       " | wake-ups/s |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (int t = 1; t >= 0; t--) {
		printf("| %s | %.1f | %.1f | %.1f | %.1f | %.3f (%.3f) |\n",
		       t ? "after traffic" : "baseline: no traffic", MED(ins, n, t, rss_mb), MED(ins, n, t, hwm_mb),
		       MED(ins, n, t, anon_mb), MED(ins, n, t, file_mb), median(w_win[t], nw[t]),
		       median(w_idle[t], nw[t]));
	}
	printf("| floor: a program that only loads the same libraries | %.1f | | | %.1f | |\n\n", floor_rss,
	       floor_file);
	rss = MED(ins, n, 1, rss_mb);
	wake = median(w_win[1], nw[1]);
	printf("Goal: after 10 minutes with no traffic, at most %.0f MB resident — %.1f MB, %s; and at most\n"
	       "%.0f wake-up per second — %.3f, %s.%s\n\n",
	       GOAL_RSS_MB, rss, goal_word(rss <= GOAL_RSS_MB), GOAL_WAKEUPS_S, wake, goal_word(wake <= GOAL_WAKEUPS_S),
	       idle_s < 600 ? " Measured after a shorter idle time than the goal's (BENCH_IDLE_S), so"
			      " this is not yet the goal's figure." : "");
	curl_global_cleanup();
	return 0;
}
