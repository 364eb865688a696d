/* Benchmark 4: the simulator on a million jobs. A synthetic, bursty trace
 * (bursts of jobs a few seconds apart, exponential gaps between bursts,
 * lognormal durations, 1 to 8 GPUs) is written to a temporary CSV; then,
 * in this process, so that the figures are the simulator's own and not a
 * process start's, the trace is loaded (sim_load: the offers and
 * trace_load) and replayed (sim_run) against ebb's policy (told what
 * serve would know of durations, then the trace's own) and against keda,
 * each BENCH_RUNS times; then min1 on 64,000 jobs of 10^7 s, a fleet that
 * grows to as many instances. Wall and CPU time of each; peak resident
 * memory is the process's.
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
#define LONG_JOBS 64000

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

/* The CPU time of this process: on a machine shared with other work, the
 * simulator's own cost, where the wall time counts the others' turns too. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall and CPU seconds of each run of one step, and their medians. */
struct lap {
	double wall[MAX_RUNS], cpu[MAX_RUNS];
	double wall_med, cpu_med;
};

static void lap_end(struct lap *l, int r, double wall0, double cpu0)
{
	l->wall[r] = now_s() - wall0;
	l->cpu[r] = cpu_s() - cpu0;
}

static void lap_medians(struct lap *l, int runs)
{
	double w[MAX_RUNS], c[MAX_RUNS];

	memcpy(w, l->wall, sizeof w);
	memcpy(c, l->cpu, sizeof c);
	l->wall_med = median(w, runs);
	l->cpu_med = median(c, runs);
}

/* One replay of spec, timed into l at run r: 0, or -1 after a message. */
static int replay(const struct trace *t, const char *spec, const char *conf_path, struct sim_options *o,
		  struct lap *l, int r, struct sim_result *last)
{
	struct policy p;
	char err[600];
	double wall0, cpu0;

	if (policy_parse(spec, conf_path, NULL, &p, err, sizeof err) != 0) {
		fprintf(stderr, "\nreplay: %s\n", err);
		return -1;
	}
	wall0 = now_s();
	cpu0 = cpu_s();
	sim_run(t, &p, o, last);
	lap_end(l, r, wall0, cpu0);
	policy_free(&p);
	sim_result_free(last);
	fprintf(stderr, ", %s%s %.3f s", spec, o->oracle_durations ? " (oracle)" : "", l->wall[r]);
	return 0;
}

static void row(const char *what, const struct lap *l)
{
	printf("| %s | %.2f s | %.2f s | |\n", what, l->wall_med, l->cpu_med);
}

static void goal_row(const char *what, double wall, double cpu)
{
	printf("| %s | %.2f s | %.2f s | at most %.0f s: %s |\n", what, wall, cpu, GOAL_REPLAY_S,
	       goal_word(cpu <= GOAL_REPLAY_S));
}

/* min1 on jobs that all outlive the next arrivals (64,000 of 10^7 s, one
 * a second): its fleet grows to 64,000, and each of its looks, and each
 * instance that idles and goes, used to walk that fleet. */
static int long_jobs(const char *dir, int runs)
{
	static const char conf[] = "[scaler]\nmax_instances = 100000\nmax_gpus = 100000\n"
				   "[offer.a]\nprice_ondemand = 1.01\nboot = 60s\n";
	char trace_path[300], conf_path[300], err[600];
	struct sim_options o = {.seed = 1};
	struct sim_result res;
	struct lap l;
	struct trace t;
	FILE *f;

	snprintf(trace_path, sizeof trace_path, "%s/long.csv", dir);
	snprintf(conf_path, sizeof conf_path, "%s/long.conf", dir);
	if (!(f = fopen(trace_path, "w")))
		return -1;
	fputs("submit_time_s,duration_s\n", f);
	for (long k = 0; k < LONG_JOBS; k++)
		fprintf(f, "%ld,10000000\n", k);
	if (fclose(f) != 0 || !(f = fopen(conf_path, "w")))
		return -1;
	fputs(conf, f);
	fclose(f);
	if (sim_load(trace_path, conf_path, NULL, 0, 0, &t, &o, err, sizeof err) != 0) {
		fprintf(stderr, "replay: %s\n", err);
		return -1;
	}
	fprintf(stderr, "replay: %d jobs of 10^7 s", LONG_JOBS);
	for (int r = 0; r < runs; r++) {
		if (replay(&t, "min1", conf_path, &o, &l, r, &res) != 0) {
			trace_free(&t);
			return -1;
		}
	}
	fputc('\n', stderr);
	trace_free(&t);
	lap_medians(&l, runs);
	printf("min1 on %d jobs of 10^7 s, one submitted each second (one instance each, %lld at\n"
	       "most; %lld jobs ran): the replay alone, the median of %d runs.\n\n"
	       "| | wall | CPU | goal |\n|---|---|---|---|\n",
	       LONG_JOBS, (long long)res.max_instances, (long long)res.jobs_done, runs);
	printf("| replay: min1, %d jobs of 10^7 s | %.2f s | %.2f s | at most 1 s: %s |\n\n", LONG_JOBS, l.wall_med,
	       l.cpu_med, goal_word(l.cpu_med <= 1.0));
	return 0;
}

int main(void)
{
	static const char *const specs[] = {"ebb", "keda:offer=octo", "ebb"};
	int runs = (int)env_long("BENCH_RUNS", 3);
	long n = env_long("BENCH_REPLAY_JOBS", 1000000);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct lap load, laps[3];
	struct sim_result last[3];
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
		double wall0 = now_s(), cpu0 = cpu_s();

		if (sim_load(trace_path, conf_path, NULL, 0, 0, &t, &o, err, sizeof err) != 0) {
			fprintf(stderr, "replay: %s\n", err);
			remove_tree(dir);
			return 1;
		}
		lap_end(&load, r, wall0, cpu0);
		fprintf(stderr, "replay: run %d: load %.3f s", r + 1, load.wall[r]);
		/* The third: ebb told the trace's durations, the what-if. */
		for (int k = 0; k < 3; k++) {
			o.oracle_durations = k == 2;
			if (replay(&t, specs[k], conf_path, &o, &laps[k], r, &last[k]) != 0) {
				remove_tree(dir);
				return 1;
			}
		}
		fputc('\n', stderr);
		trace_free(&t);
	}
	lap_medians(&load, runs);
	for (int k = 0; k < 3; k++)
		lap_medians(&laps[k], runs);
	printf("## Simulator replay: %ld jobs\n\n"
	       "`ebb sim` on a synthetic trace of %ld jobs written by bench/replay.c: bursts of\n"
	       "about 20 jobs 2 s apart, 5 minutes apart on average (%ld bursts over %.0f days),\n"
	       "durations lognormal around 2 minutes (at most 6 h), 70%% of jobs on 1 GPU and\n"
	       "the rest on 2, 4 or 8; %.0f GPU-hours of work; a %.0f MB CSV. Three offers (1, 4\n"
	       "and 8 GPUs, spot and on demand) and limits high enough for the load. The load\n"
	       "and the replays run in the benchmark's own process (sim_load, sim_run), so the\n"
	       "figures are the simulator's; each is the median of %d runs. The goal holds\n"
	       "for the whole of what `ebb sim` does with one policy: the load and the replay,\n"
	       "in CPU time (the machine is shared: the wall time counts the other\n"
	       "processes' turns too; alone, the two are the same). ebb is told what serve\n"
	       "would know of durations (the median of each type's finished jobs), as `ebb sim`\n"
	       "does by default. Baseline: keda, the simplest policy, on the same trace in the\n"
	       "same runs.\n\n",
	       n, n, sh.bursts, sh.span_days, sh.gpu_hours, (double)st.st_size / 1e6, runs);
	printf("| | wall | CPU | goal |\n|---|---|---|---|\n");
	printf("| load: offers and trace (%ld rows) | %.2f s | %.2f s | |\n", n, load.wall_med, load.cpu_med);
	row("replay: ebb (plan() on every change)", &laps[0]);
	row("replay: ebb told the durations (--oracle-durations)", &laps[2]);
	row("replay: keda (8-GPU offer), the baseline", &laps[1]);
	goal_row("load and replay: ebb", load.wall_med + laps[0].wall_med, load.cpu_med + laps[0].cpu_med);
	goal_row("load and replay: keda", load.wall_med + laps[1].wall_med, load.cpu_med + laps[1].cpu_med);
	printf("| ebb's replay against keda's | %.2f× | %.2f× | |\n",
	       laps[1].wall_med > 0 ? laps[0].wall_med / laps[1].wall_med : 0,
	       laps[1].cpu_med > 0 ? laps[0].cpu_med / laps[1].cpu_med : 0);
	printf("| peak resident memory of the process | %.0f MB | | |\n\n", (double)peak_rss_kb() / 1024);
	printf("What the replays found (the same every run, for the same seed):\n\n"
	       "| policy | jobs | cost | cold starts | reclaims | most instances | wait p50 | wait p99 |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < 3; k++)
		printf("| %s%s | %lld | $%.0f | %lld | %lld | %lld | %.0f s | %.0f s |\n", specs[k],
		       k == 2 ? " (oracle durations)" : "", (long long)last[k].jobs_done, last[k].cost_usd,
		       (long long)last[k].cold_starts, (long long)last[k].reclaims, (long long)last[k].max_instances,
		       last[k].wait_p50_s, last[k].wait_p99_s);
	printf("\n");
	if (long_jobs(dir, runs) != 0) {
		perror("replay: the long jobs");
		remove_tree(dir);
		return 1;
	}
	remove_tree(dir);
	return 0;
}
