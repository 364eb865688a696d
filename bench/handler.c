/* Benchmark: a model kept loaded. Payload jobs of BENCH_WORK_MS of work
 * each behind a setup of BENCH_SETUP_S (the framework imported, the
 * model read into memory), run by one worker of one GPU started by hand
 * (one instance): as one process per job, which pays the setup every
 * time, and on a resident handler of the type (docs/JOBS.md), which pays
 * it once; then on a worker of two GPUs, where jobs run side by side in
 * runners and each keeps its handler: two setups. Side by side in one
 * run: jobs a second, instance-seconds a job (from the worker's start to
 * the last job's end), and the setup's share of those seconds. One
 * process per job runs fewer jobs (BENCH_PROCESS_JOBS): each costs the
 * whole setup, and the figures are per job.
 *
 * Environment: BENCH_HANDLER_JOBS (1000), BENCH_PROCESS_JOBS (100),
 * BENCH_SETUP_S (3), BENCH_WORK_MS (50), EBB_BIN. */
#include "bench.h"

struct way {
	const char *name;
	int jobs, setups; /* setups: how many times the setup ran */
	double seconds;
};

/* The handler: the setup, then each job's work, answered on the control
 * descriptor; it counts its starts in a file beside it. */
static int write_handler(const char *dir, double setup_s, double work_s)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof path, "%s/handler.py", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f,
		"import os, sys, time\n"
		"with open(%s, 'a') as starts:\n"
		"    starts.write('x')\n"
		"control = os.fdopen(int(os.environ['EBB_CONTROL_FD']), 'w', buffering=1)\n"
		"time.sleep(%g)\n"
		"control.write('ready\\n')\n"
		"for line in sys.stdin:\n"
		"    if line.startswith('cancel '):\n"
		"        continue\n"
		"    time.sleep(%g)\n"
		"    control.write('done\\n')\n",
		"os.path.join(os.path.dirname(os.path.abspath(__file__)), 'starts')", setup_s, work_s);
	return fclose(f);
}

static pid_t start_worker(const char *url, const char *dir, int gpus)
{
	const char *bin = getenv("EBB_BIN") ? getenv("EBB_BIN") : "build/ebb";
	char log[160];
	pid_t pid = fork();

	if (pid == 0) {
		int fd;
		snprintf(log, sizeof log, "%s/worker.log", dir);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("CUDA_VISIBLE_DEVICES", gpus > 1 ? "0,1" : "0", 1);
		execl(bin, "ebb", "worker", "--server", url, "--name", "bench", "--gpus", gpus > 1 ? "2" : "1",
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Submits n jobs (body: one job's JSON), starts a worker of gpus GPUs
 * and waits for all of them to succeed: the seconds from its start to
 * the last. */
static int run(struct serve *s, const char *body, int n, int gpus, double *seconds)
{
	struct http h;
	double t0, deadline;
	pid_t worker;
	int rc = -1;

	if (http_init(&h, s->url) != 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (http_call(&h, "/v1/jobs", body) != 201) {
			fprintf(stderr, "handler: submit: %.200s\n", h.body);
			goto out;
		}
	t0 = now_s();
	if ((worker = start_worker(s->url, s->dir, gpus)) < 0)
		goto out;
	for (deadline = t0 + 3600; now_s() < deadline; sleep_s(0.02)) {
		if (http_call(&h, "/v1/stats", NULL) != 200)
			break;
		if (reply_int(h.body, "succeeded") == n) {
			*seconds = now_s() - t0;
			rc = 0;
			break;
		}
		if (reply_int(h.body, "failed") > 0 || reply_int(h.body, "dead") > 0) {
			fprintf(stderr, "handler: a job failed: %.300s\n", h.body);
			break;
		}
	}
	kill(worker, SIGTERM);
	waitpid(worker, NULL, 0);
out:
	http_free(&h);
	return rc;
}

static int count_starts(const char *dir)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof path, "%s/starts", dir);
	return stat(path, &st) == 0 ? (int)st.st_size : 0;
}

/* Its figures; instance-seconds are the worker's seconds times its GPUs
 * over one (an instance of two GPUs costs twice one of one). */
static void row(const struct way *w, int gpus, double setup_s)
{
	printf("| %s | %d | %d | %.1f | %.2f | %.3f | %d | %.0f%% |\n", w->name, gpus, w->jobs, w->seconds,
	       w->jobs / w->seconds, gpus * w->seconds / w->jobs, w->setups, 100 * w->setups * setup_s / (gpus * w->seconds));
}

int main(void)
{
	double setup_s = (double)env_long("BENCH_SETUP_S", 3), work_s = (double)env_long("BENCH_WORK_MS", 50) / 1000;
	struct way process = {"one process per job", (int)env_long("BENCH_PROCESS_JOBS", 100), 0, 0},
		   handler = {"a resident handler", (int)env_long("BENCH_HANDLER_JOBS", 1000), 0, 0},
		   runners = {"a resident handler in each runner", (int)env_long("BENCH_HANDLER_JOBS", 1000), 0, 0};
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[128], body[512], extra[512];
	struct serve s = {0};
	int rc = 1;

	snprintf(dir, sizeof dir, "%s/ebb-bench-handler.XXXXXX", tmp);
	if (!mkdtemp(dir) || write_handler(dir, setup_s, work_s) != 0) {
		perror("handler: the handler's directory");
		return 1;
	}

	/* One process per job: a job's command does the setup, then the work. */
	fprintf(stderr, "handler: %d jobs, one process each\n", process.jobs);
	snprintf(body, sizeof body, "{\"command\":[\"sh\",\"-c\",\"sleep %g; sleep %g\"]}", setup_s, work_s);
	if (serve_start(&s, "") != 0 || run(&s, body, process.jobs, 1, &process.seconds) != 0)
		goto out;
	process.setups = process.jobs;
	serve_stop(&s);

	/* The same work as payload jobs of a type with a handler. */
	fprintf(stderr, "handler: %d jobs on a resident handler\n", handler.jobs);
	snprintf(extra, sizeof extra, "[type.slow]\nhandler = /usr/bin/python3 %s/handler.py\n", dir);
	if (serve_start(&s, extra) != 0 ||
	    run(&s, "{\"type\":\"slow\",\"payload\":{\"text\":\"a line to embed\"}}", handler.jobs, 1, &handler.seconds) != 0)
		goto out;
	handler.setups = count_starts(dir);
	serve_stop(&s);

	/* The same on a worker of two GPUs: two runners side by side. */
	fprintf(stderr, "handler: %d jobs on two GPUs\n", runners.jobs);
	if (serve_start(&s, extra) != 0 ||
	    run(&s, "{\"type\":\"slow\",\"payload\":{\"text\":\"a line to embed\"}}", runners.jobs, 2, &runners.seconds) != 0)
		goto out;
	runners.setups = count_starts(dir) - handler.setups;

	printf("## 10. A model kept loaded: a resident handler against a process per job\n\n"
	       "Payload jobs of %g ms of work each behind a setup of %g s (a Python program that sleeps\n"
	       "for both), on one worker of one GPU started by hand: as a process per job (`sh -c 'sleep\n"
	       "%g; sleep %g'`: the setup paid by every job; %d jobs) and on a resident handler of the\n"
	       "type (`[type.NAME] handler`, docs/JOBS.md: started once, it takes job after job; %d\n"
	       "jobs); then the handler's jobs on one worker of two GPUs, run side by side in runners\n"
	       "that each keep their handler. Instance-seconds are the worker's, from its start to the\n"
	       "last job's end, in GPU-seconds; the setup's share is the setups' seconds over them. One\n"
	       "run.\n\n",
	       work_s * 1000, setup_s, setup_s, work_s, process.jobs, handler.jobs);
	printf("| how | GPUs | jobs | seconds | jobs/s | GPU-seconds a job | setups | setup's share |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|\n");
	row(&process, 1, setup_s);
	row(&handler, 1, setup_s);
	row(&runners, 2, setup_s);
	printf("\nThe handler: %.1f times the jobs a second, %.1f%% of the instance-seconds a job.\n\n",
	       (handler.jobs / handler.seconds) / (process.jobs / process.seconds),
	       100 * (handler.seconds / handler.jobs) / (process.seconds / process.jobs));
	printf("On two GPUs: %d setups (one a runner), %.1f times the jobs a second of one GPU's handler.\n\n",
	       runners.setups, (runners.jobs / runners.seconds) / (handler.jobs / handler.seconds));
	rc = 0;
out:
	serve_stop(&s);
	remove_tree(dir);
	return rc;
}
