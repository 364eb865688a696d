/* Benchmark 4b: `ebb tune` on 100,000 jobs. The trace is built from the
 * shared cluster trace (alibaba openb, the rows with ran=1, 15 days): as
 * many copies of it as make 100,000 jobs, each shifted in time by its own
 * offset and wrapped within the 15 days, so that the cluster is that many
 * times as busy over the same days. Then the real binary, as a user runs
 * it, with one 8-GPU offer (sim/p4d.conf) and --wait-p95 240: the search,
 * then --exhaustive, each on BENCH_TUNE_JOBS threads, BENCH_RUNS times;
 * wall and CPU time of each (the process and its threads), and whether
 * the two recommend the same settings.
 *
 * Environment: BENCH_RUNS (1), BENCH_TUNE_JOBS (2), BENCH_TUNE_ROWS
 * (100000), EBB_TRACES (the shared traces; default ../shared/traces
 * beside the source tree, EBB_SRC). */
#include <jansson.h>
#include <sys/resource.h>

#include "bench.h"
#include "sim/trace.h"

#define MAX_RUNS 15
#define GOAL_S 30.0
#define SPAN_MS (15LL * 86400 * 1000)

struct row {
	int64_t at_ms;
	size_t job;
};

static int by_time(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return (x->at_ms > y->at_ms) - (x->at_ms < y->at_ms);
}

/* The copies of the trace's jobs, shifted and wrapped: n rows into path. */
static int write_trace(const struct trace *t, long n, const char *path)
{
	struct row *rows = calloc((size_t)n, sizeof *rows);
	FILE *f = rows ? fopen(path, "w") : NULL;

	if (!f) {
		free(rows);
		return -1;
	}
	for (long k = 0; k < n; k++) {
		size_t copy = (size_t)k / t->n, job = (size_t)k % t->n;
		int64_t shift_ms = (int64_t)(copy * 293003 % 1296000) * 1000; /* into the 15 days */
		rows[k] = (struct row){(t->jobs[job].submit_ms + shift_ms) % SPAN_MS, job};
	}
	qsort(rows, (size_t)n, sizeof *rows, by_time);
	fputs("submit_time_s,duration_s,gpus\n", f);
	for (long k = 0; k < n; k++) {
		const struct trace_job *j = &t->jobs[rows[k].job];
		fprintf(f, "%.3f,%.3f,%d\n", (double)rows[k].at_ms / 1000, (double)j->duration_ms / 1000, j->gpus);
	}
	free(rows);
	return fclose(f);
}

struct tune_run {
	double wall_s, cpu_s;
	char recommended[512];
	long points;
	double cost;
};

/* One `ebb tune ... --json` into out_path, timed; 0, or -1 after a message. */
static int tune(const char *trace, const char *conf, const char *jobs, int exhaustive, const char *out_path,
		struct tune_run *r)
{
	double t0 = now_s();
	struct rusage ru;
	int status;
	pid_t pid = fork();
	const char *policy;
	json_t *json;

	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDOUT_FILENO);
		execl(getenv("EBB_BIN"), "ebb", "tune", trace, "--offers", conf, "--wait-p95", "240", "--json", "--jobs",
		      jobs, exhaustive ? "--exhaustive" : NULL, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tune: ebb tune failed\n");
		return -1;
	}
	r->wall_s = now_s() - t0;
	r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		   (double)ru.ru_stime.tv_usec / 1e6;
	if (!(json = json_load_file(out_path, 0, NULL))) {
		fprintf(stderr, "tune: %s: no JSON\n", out_path);
		return -1;
	}
	policy = json_string_value(json_object_get(json_object_get(json, "recommendation"), "policy"));
	snprintf(r->recommended, sizeof r->recommended, "%s", policy ? policy : "none");
	r->points = (long)json_array_size(json_object_get(json, "points"));
	r->cost = json_real_value(json_object_get(json_object_get(json, "recommendation"), "cost_usd"));
	json_decref(json);
	return 0;
}

static void medians(struct tune_run *runs, int n, struct tune_run *out)
{
	double w[MAX_RUNS], c[MAX_RUNS];

	for (int k = 0; k < n; k++) {
		w[k] = runs[k].wall_s;
		c[k] = runs[k].cpu_s;
	}
	*out = runs[0];
	out->wall_s = median(w, n);
	out->cpu_s = median(c, n);
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 1);
	long rows = env_long("BENCH_TUNE_ROWS", 100000);
	const char *jobs = getenv("BENCH_TUNE_JOBS") ? getenv("BENCH_TUNE_JOBS") : "2";
	const char *src = getenv("EBB_SRC") ? getenv("EBB_SRC") : ".", *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char traces[4096], openb[4200], conf[4200], dir[256], trace_path[300], out_path[300], err[600];
	struct trace_filter ran = {"ran", "1"};
	struct tune_run searched[MAX_RUNS], whole[MAX_RUNS], s, w;
	struct trace t;

	runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
	snprintf(traces, sizeof traces, "%s", getenv("EBB_TRACES") ? getenv("EBB_TRACES") : "");
	if (!traces[0])
		snprintf(traces, sizeof traces, "%s/../shared/traces", src);
	snprintf(openb, sizeof openb, "%s/alibaba_openb_gpu_pods_days00-14.csv", traces);
	snprintf(conf, sizeof conf, "%s/sim/p4d.conf", src);
	printf("## ebb tune: %ld jobs\n\n", rows);
	if (trace_load(openb, &ran, 1, 0, &t, err, sizeof err) != 0) {
		printf("Skipped: no shared cluster trace here (%s).\n\n", err);
		return 0;
	}
	snprintf(dir, sizeof dir, "%s/ebb-bench-tune.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror("tune: temporary directory");
		return 1;
	}
	snprintf(trace_path, sizeof trace_path, "%s/trace.csv", dir);
	snprintf(out_path, sizeof out_path, "%s/tune.json", dir);
	fprintf(stderr, "tune: writing a trace of %ld jobs from %zu\n", rows, t.n);
	if (write_trace(&t, rows, trace_path) != 0) {
		perror("tune: writing the trace");
		remove_tree(dir);
		return 1;
	}
	for (int r = 0; r < runs; r++) {
		if (tune(trace_path, conf, jobs, 0, out_path, &searched[r]) != 0 ||
		    tune(trace_path, conf, jobs, 1, out_path, &whole[r]) != 0) {
			remove_tree(dir);
			return 1;
		}
		fprintf(stderr, "tune: run %d: search %.1f s, exhaustive %.1f s\n", r + 1, searched[r].wall_s,
			whole[r].wall_s);
	}
	remove_tree(dir);
	medians(searched, runs, &s);
	medians(whole, runs, &w);
	printf("`ebb tune TRACE --offers sim/p4d.conf --wait-p95 240 --jobs %s` on a trace of %ld\n"
	       "jobs built from the shared cluster trace (alibaba openb, the %zu rows with ran=1,\n"
	       "15 days): copies of it, each shifted by its own offset and wrapped within the\n"
	       "15 days, a cluster %.0f times as busy. One 8-GPU offer. The real binary, as a\n"
	       "user runs it: loading, the replays on %s threads, the output. The median of %d\n"
	       "run(s); CPU is the process's, all its threads.\n\n",
	       jobs, rows, t.n, (double)rows / (double)t.n, jobs, runs);
	/* The goal is two idle cores' wall time: CPU over two, which the
	 * other loads of a shared machine do not stretch as they do the wall. */
	printf("| | replays | wall | CPU | recommended | goal: CPU/2 |\n|---|---|---|---|---|---|\n");
	printf("| the search (the default) | %ld | %.1f s | %.1f s | $%.2f | within %.0f s: %s |\n", s.points,
	       s.wall_s, s.cpu_s, s.cost, GOAL_S, goal_word(s.cpu_s / 2 <= GOAL_S));
	printf("| --exhaustive | %ld | %.1f s | %.1f s | $%.2f | |\n", w.points, w.wall_s, w.cpu_s, w.cost);
	printf("\nThe same recommendation: %s (%s).\n\n", strcmp(s.recommended, w.recommended) == 0 ? "yes" : "**no**",
	       s.recommended);
	trace_free(&t);
	return 0;
}
