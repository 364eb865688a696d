/* Benchmark 4: the simulator on a million jobs. A synthetic, bursty trace
 * (bursts of jobs a few seconds apart, exponential gaps between bursts,
 * lognormal durations, 1 to 8 GPUs) is written to a temporary CSV; then,
 * in this process, so that the figures are the simulator's own and not a
 * process start's, the trace is loaded (sim_load: the offers and
 * trace_load) and replayed (sim_run) against ebb's policy and against
 * keda, each BENCH_RUNS times. Peak resident memory is the process's.
 *
 * Environment: BENCH_RUNS (3), BENCH_REPLAY_JOBS (1000000),
 * BENCH_REPLAY_SEED (1). */
#include <math.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench.h"
#include "sim/sim.h"
#include "sim/spec.h"
#include "sim/simout.h"

#define MAX_RUNS 15
#define GOAL_REPLAY_S 2.0

/* Enough capacity under the limits for the load: ebb's defaults (4
 * instances, 8 GPUs) would queue most of a million jobs for days. */
static const char offers[] =
	"[scaler]\nmax_instances = 2000\nmax_gpus = 16000\nmax_spend_per_hour = 0\n"
	"[offer.small]\ngpus = 1\nprice_ondemand = 1.20\nprice_spot = 0.40\nboot = 60s\nreliability = 0.8\n"
	"[offer.quad]\ngpus = 4\nprice_ondemand = 4.50\nprice_spot = 1.60\nboot = 120s\nreliability = 0.85\n"
	"[offer.octo]\ngpus = 8\nprice_ondemand = 9.00\nprice_spot = 3.20\nboot = 240s\nreliability = 0.9\n"
	"billing = per-minute\n";

static uint64_t rng = 1;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((double)((rng * 0x2545f4914f6cdd1dULL) >> 11) + 0.5) / 9007199254740992.0;
}

static double exponential(double mean) { return -log(uniform()) * mean; }

static double normal(void) { return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform()); }

struct shape {
	double span_days, gpu_hours;
	long bursts;
};

/* Bursts of about 20 jobs (geometric), 2 s apart on average, with 5
 * minutes on average between bursts; durations lognormal around 2 min
 * (sigma 1.2, at most 6 h); 70% of jobs on 1 GPU, then 2, 4 and 8. */
static int write_trace(const char *path, long n, struct shape *sh)
{
	FILE *f = fopen(path, "w");
	double t = 0;
	long left_in_burst = 0;

	if (!f)
		return -1;
	memset(sh, 0, sizeof *sh);
	fputs("submit_time_s,duration_s,gpus,team,job_class\n", f);
	for (long k = 0; k < n; k++) {
		double u = uniform(), d;
		int gpus = u < 0.70 ? 1 : u < 0.82 ? 2 : u < 0.92 ? 4 : 8;
		if (left_in_burst-- <= 0) {
			t += exponential(300);
			left_in_burst = (long)exponential(20);
			sh->bursts++;
		} else {
			t += exponential(2);
		}
		d = fmin(120 * exp(1.2 * normal()), 6 * 3600);
		sh->gpu_hours += d * gpus / 3600;
		fprintf(f, "%.3f,%.3f,%d,t%d,%s\n", t, d, gpus, (int)(uniform() * 50), gpus > 1 ? "train" : "infer");
	}
	sh->span_days = t / 86400;
	return fclose(f);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(void)
{
	static const char *const specs[] = {"ebb", "keda:offer=octo"};
	int runs = (int)env_long("BENCH_RUNS", 3);
	long n = env_long("BENCH_REPLAY_JOBS", 1000000);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double load_s[MAX_RUNS], replay_s[2][MAX_RUNS];
	struct sim_result last[2];
	char dir[256], trace_path[300], conf_path[300], err[600];
	struct shape sh;
	struct stat st;
	FILE *f;

	runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
	rng = (uint64_t)env_long("BENCH_REPLAY_SEED", 1) | 1;
	snprintf(dir, sizeof dir, "%s/ebb-bench-replay.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror("replay: temporary directory");
		return 1;
	}
	snprintf(trace_path, sizeof trace_path, "%s/trace.csv", dir);
	snprintf(conf_path, sizeof conf_path, "%s/offers.conf", dir);
	fprintf(stderr, "replay: writing a trace of %ld jobs\n", n);
	if (write_trace(trace_path, n, &sh) != 0 || !(f = fopen(conf_path, "w"))) {
		perror("replay: writing the trace");
		remove_tree(dir);
		return 1;
	}
	fputs(offers, f);
	fclose(f);
	stat(trace_path, &st);

	for (int r = 0; r < runs; r++) {
		struct sim_options o = {.seed = 1};
		struct trace t;
		double t0 = now_s();

		if (sim_load(trace_path, conf_path, NULL, 0, 0, &t, &o, err, sizeof err) != 0) {
			fprintf(stderr, "replay: %s\n", err);
			remove_tree(dir);
			return 1;
		}
		load_s[r] = now_s() - t0;
		fprintf(stderr, "replay: run %d: load %.3f s", r + 1, load_s[r]);
		for (int k = 0; k < 2; k++) {
			struct policy p;
			struct sim_result res;
			if (policy_parse(specs[k], conf_path, NULL, &p, err, sizeof err) != 0) {
				fprintf(stderr, "\nreplay: %s\n", err);
				remove_tree(dir);
				return 1;
			}
			t0 = now_s();
			sim_run(&t, &p, &o, &res);
			replay_s[k][r] = now_s() - t0;
			policy_free(&p);
			sim_result_free(&res);
			last[k] = res;
			fprintf(stderr, ", %s %.3f s", specs[k], replay_s[k][r]);
		}
		fputc('\n', stderr);
		trace_free(&t);
	}
	remove_tree(dir);

	double med_load = median(load_s, runs), med_ebb = median(replay_s[0], runs),
	       med_keda = median(replay_s[1], runs), total[2][MAX_RUNS];
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < runs; r++)
			total[k][r] = load_s[r] + replay_s[k][r];
	double tot_ebb = median(total[0], runs), tot_keda = median(total[1], runs);
	printf("## Simulator replay: %ld jobs\n\n"
	       "`ebb sim` on a synthetic trace of %ld jobs written by bench/replay.c: bursts of\n"
	       "about 20 jobs 2 s apart, 5 minutes apart on average (%ld bursts over %.0f days),\n"
	       "durations lognormal around 2 minutes (at most 6 h), 70%% of jobs on 1 GPU and\n"
	       "the rest on 2, 4 or 8; %.0f GPU-hours of work; a %.0f MB CSV. Three offers (1, 4\n"
	       "and 8 GPUs, spot and on demand) and limits high enough for the load. The load\n"
	       "and the replays run in the benchmark's own process (sim_load, sim_run), so the\n"
	       "figures are the simulator's; each is the median of %d runs. The goal holds\n"
	       "for the whole of what `ebb sim` does with one policy: the load and the replay.\n"
	       "Baseline: keda, the simplest policy, on the same trace in the same runs.\n\n",
	       n, n, sh.bursts, sh.span_days, sh.gpu_hours, (double)st.st_size / 1e6, runs);
	printf("| | median | goal |\n|---|---|---|\n");
	printf("| load: offers and trace (%ld rows) | %.2f s | |\n", n, med_load);
	printf("| replay: ebb (plan() on every change) | %.2f s | |\n", med_ebb);
	printf("| replay: keda (8-GPU offer), the baseline | %.2f s | |\n", med_keda);
	printf("| load and replay: ebb | %.2f s | at most %.0f s: %s |\n", tot_ebb, GOAL_REPLAY_S,
	       goal_word(tot_ebb <= GOAL_REPLAY_S));
	printf("| load and replay: keda | %.2f s | at most %.0f s: %s |\n", tot_keda, GOAL_REPLAY_S,
	       goal_word(tot_keda <= GOAL_REPLAY_S));
	printf("| ebb's replay against keda's | %.2f× | |\n", med_keda > 0 ? med_ebb / med_keda : 0);
	printf("| peak resident memory of the process | %.0f MB | |\n\n", (double)peak_rss_kb() / 1024);
	printf("What the replays found (the same every run, for the same seed):\n\n"
	       "| policy | jobs | cost | cold starts | reclaims | most instances | wait p50 | wait p99 |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < 2; k++)
		printf("| %s | %lld | $%.0f | %lld | %lld | %lld | %.0f s | %.0f s |\n", specs[k],
		       (long long)last[k].jobs_done, last[k].cost_usd, (long long)last[k].cold_starts,
		       (long long)last[k].reclaims, (long long)last[k].max_instances, last[k].wait_p50_s,
		       last[k].wait_p99_s);
	printf("\n");
	return 0;
}
