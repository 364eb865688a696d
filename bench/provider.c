/* Benchmark 5: the API while the provider is slow. A cloud's API can take
 * a minute to answer a launch; ebb calls its provider asynchronously, so
 * that this costs serve nothing. Here serve runs the exec provider with a
 * program whose launches never answer (it sleeps) and whose list answers
 * at once; jobs are submitted until [exec] concurrency launches hang and
 * more wait their turn; then requests are timed one after another on one
 * kept-alive connection, half of them submits (of delayed jobs, so that
 * they launch nothing more) and half GET /v1/stats. The baseline is the
 * same serve, program and instances, in the same run, with launches that
 * answer at once (the instances then wait in "booting" for workers that
 * never come).
 *
 * Environment: BENCH_RUNS (5), BENCH_PROVIDER_REQUESTS (2000), EBB_BIN. */
#include "bench.h"

#define MAX_RUNS 15

struct row {
	int nruns;
	double p50[MAX_RUNS], p99[MAX_RUNS], max[MAX_RUNS];
	long pending[MAX_RUNS]; /* launches under way while measured */
};

/* The provider program: launches hang (or answer at once), lists are
 * empty (and come once a minute: nothing is marked gone meanwhile). */
static int write_program(const char *dir, int hang, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/provider", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f,
		"#!/bin/sh\n"
		"cat >/dev/null\n"
		"case $1 in\n"
		"launch) %s ;;\n"
		"list) echo '{\"version\": 1, \"instances\": []}' ;;\n"
		"esac\n",
		hang ? "exec sleep 3600" : "echo \"{\\\"version\\\": 1, \\\"ref\\\": \\\"r-$$\\\"}\"");
	fclose(f);
	return chmod(path, 0755);
}

/* Instances in state, from GET /v1/fleet. */
static long in_state(struct wire *w, const char *state)
{
	char want[64];
	const char *body, *p;
	long n = 0;

	if (wire_call(w, "/v1/fleet", NULL, &body) != 200)
		return -1;
	snprintf(want, sizeof want, "\"state\":\"%s\"", state);
	for (p = body; (p = strstr(p, want)); p++)
		n++;
	return n;
}

/* One run: the requests timed in ms into v; 0, or -1. */
static int run(int slow, int requests, double *v, long *pending)
{
	const char *state = slow ? "requested" : "booting";
	char dir[64], program[128], extra[1024];
	struct serve s;
	struct wire w;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int rc = -1;

	snprintf(dir, sizeof dir, "%s/ebb-bench-provider.XXXXXX", tmp);
	if (!mkdtemp(dir) || write_program(dir, slow, program, sizeof program) != 0)
		return -1;
	snprintf(extra, sizeof extra,
		 "[provider]\nkind = exec\n[exec]\ncommand = %s\ntimeout = 1h\nconcurrency = 4\n"
		 "[scaler]\ninterval = 100ms\nmax_instances = 8\nmax_gpus = 8\nboot_timeout = 1h\n"
		 "[lane.standard]\nwait_target = 1s\n",
		 program);
	if (serve_start(&s, extra) != 0)
		goto out;
	if (wire_open(&w, s.port, 0) != 0)
		goto stop;
	for (int k = 0; k < 8; k++) {
		const char *body;
		if (wire_call(&w, "/v1/jobs", "{\"command\":[\"true\"],\"est_s\":60}", &body) != 201)
			goto close;
	}
	for (double deadline = now_s() + 30; (*pending = in_state(&w, state)) < 8 && now_s() < deadline; sleep_s(0.05))
		;
	if (*pending < 8) {
		fprintf(stderr, "provider: %ld instances %s, 8 expected\n", *pending, state);
		goto close;
	}
	for (int k = 0; k < requests; k++) {
		const char *body;
		double t0 = now_s();
		int st = k % 2 ? wire_call(&w, "/v1/stats", NULL, &body)
			       : wire_call(&w, "/v1/jobs", "{\"command\":[\"true\"],\"delay_s\":3600}", &body);
		v[k] = (now_s() - t0) * 1000;
		if (st != (k % 2 ? 200 : 201)) {
			fprintf(stderr, "provider: request %d answered %d\n", k, st);
			goto close;
		}
	}
	if (in_state(&w, state) < 8) {
		fprintf(stderr, "provider: the instances left %s while measured\n", state);
		goto close;
	}
	rc = 0;
close:
	wire_close(&w);
stop:
	serve_stop(&s);
out:
	remove_tree(dir);
	return rc;
}

static int measure(struct row *w, int slow, int runs, int requests)
{
	double *v = malloc((size_t)requests * sizeof *v);

	w->nruns = runs;
	for (int r = 0; r < runs; r++) {
		if (run(slow, requests, v, &w->pending[r]) != 0) {
			free(v);
			return -1;
		}
		w->p50[r] = quantile(v, requests, 0.50);
		w->p99[r] = quantile(v, requests, 0.99);
		w->max[r] = v[requests - 1];
		fprintf(stderr, "provider: %s run %d: p50 %.3f p99 %.3f max %.3f ms\n", slow ? "launches hang" : "launches answered",
			r + 1, w->p50[r], w->p99[r], w->max[r]);
	}
	free(v);
	return 0;
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 5), requests = (int)env_long("BENCH_PROVIDER_REQUESTS", 2000);
	struct row base, slow;
	double p99, p99_base;

	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	if (requests < 100)
		requests = 2000;
	signal(SIGPIPE, SIG_IGN);
	if (measure(&base, 0, runs, requests) != 0 || measure(&slow, 1, runs, requests) != 0)
		return 1;
	printf("## 5. The API while the provider is slow\n\n");
	printf("serve with the exec provider and a program whose launches never answer (it sleeps;\n"
	       "`[exec] concurrency = 4`, `timeout = 1h`): 8 jobs are submitted, and once 8 instances\n"
	       "are `requested` (4 launches running, 4 waiting their turn), %d requests are timed one\n"
	       "after another on one kept-alive connection, alternately a submit (a delayed job, which\n"
	       "launches nothing) and `GET /v1/stats`. Baseline: the same, in the same run, with\n"
	       "launches that answer at once (8 instances `booting`, for workers that never come).\n"
	       "%d runs per row, medians of each run's percentiles, in milliseconds; a submit\n"
	       "includes its commit's fsync.\n\n",
	       requests, runs);
	printf("| launches | instances | p50 | p99 | max |\n");
	printf("|---|---:|---:|---:|---:|\n");
	printf("| baseline: answered at once | %ld booting | %.3f | %.3f | %.3f |\n", base.pending[0],
	       median(base.p50, runs), median(base.p99, runs), median(base.max, runs));
	printf("| hanging (4 running, 4 waiting) | %ld requested | %.3f | %.3f | %.3f |\n", slow.pending[0],
	       median(slow.p50, runs), median(slow.p99, runs), median(slow.max, runs));
	p99 = median(slow.p99, runs);
	p99_base = median(base.p99, runs);
	printf("\nNo goal is set for this figure; the issue's is that a provider that takes a minute\n"
	       "never blocks the loop. Against the baseline: p99 %.3f ms with launches hanging, %.3f ms\n"
	       "with launches answered (%+.0f%%).\n\n",
	       p99, p99_base, 100 * (p99 - p99_base) / p99_base);
	return 0;
}
