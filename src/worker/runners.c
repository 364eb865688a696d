/* Several jobs at once on one instance (see worker.h): a job that leaves
 * some of the instance's GPUs free runs in a runner, a process of the
 * worker's own that runs it as the worker would (job_run) on the GPUs it
 * is given, named in its CUDA_VISIBLE_DEVICES; the worker meanwhile leases
 * for the GPUs left. A process rather than a thread: job_run blocks, and
 * a runner shares no client, pipe or clock with the worker. A runner dies
 * with its worker (a worker killed -9 leaves no job behind). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/handler.h"
#include "worker/worker_internal.h"

/* The exit status of a runner whose job ended because serve was out of
 * reach for orphan_timeout. */
#define RUNNER_ORPHANED 3

void runners_init(struct worker *w)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	char *copy = xstrdup(env ? env : ""), *save = NULL;
	int n = 0;

	w->ngpus = w->o->gpus < INSTANCE_GPUS_MAX ? w->o->gpus : INSTANCE_GPUS_MAX;
	for (char *t = strtok_r(copy, ",", &save); t && n < w->ngpus; t = strtok_r(NULL, ",", &save))
		snprintf(w->gpu_names[n++], sizeof w->gpu_names[0], "%s", t);
	if (n < w->ngpus) /* the list does not name them all: by index */
		for (n = 0; n < w->ngpus; n++)
			snprintf(w->gpu_names[n], sizeof w->gpu_names[0], "%d", n);
	free(copy);
}

int runners_free_gpus(const struct worker *w)
{
	int n = 0;

	for (int g = 0; g < w->ngpus; g++)
		n += w->gpu_job[g] == 0;
	return n;
}

/* The GPUs a job takes: what it asks, at least one. */
static int gpus_of(json_t *job)
{
	json_int_t n = json_integer_value(json_object_get(job, "gpus"));

	return n > 1 ? (int)n : 1;
}

int runners_wanted(const struct worker *w, json_t *job)
{
	return w->nrunners > 0 || gpus_of(job) < w->ngpus;
}

/* In the runner: a process of its own, then the job as the worker runs
 * it, on its GPUs. */
static int run_alone(struct worker *w, json_t *job, const char *gpu_ids, pid_t worker)
{
	int rc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != worker) /* gone before prctl */
		return RUNNER_ORPHANED;
	worker_renew_after_fork(w);
	w->nrunners = 0;
	setenv("CUDA_VISIBLE_DEVICES", gpu_ids, 1);
	w->no_next = 1;
	rc = job_run(w, job, &(json_t *){NULL});
	/* A runner lives for one job: so does a handler it started. */
	handler_stop(w->handler, KILL_AFTER_MS, w->name, "its runner ends");
	return rc < 0 ? RUNNER_ORPHANED : 0;
}

int runners_start(struct worker *w, json_t *job)
{
	int64_t id = json_integer_value(json_object_get(job, "id"));
	int want = gpus_of(job), taken = 0, rc;
	char ids[INSTANCE_GPUS_MAX * 17] = "";
	size_t len = 0;
	pid_t pid, worker = getpid();

	/* serve leased it for the GPUs free; a job asking more than that
	 * (a serve older than packing) gets those free. */
	for (int g = 0; g < w->ngpus && taken < want; g++) {
		if (w->gpu_job[g])
			continue;
		w->gpu_job[g] = id;
		len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%s", taken++ ? "," : "", w->gpu_names[g]);
	}
	pid = fork();
	if (pid == 0)
		_exit(run_alone(w, job, ids, worker));
	if (pid < 0) {
		log_warn("no runner, the job runs alone", "worker=%s job=%lld error=\"%s\"", w->name, (long long)id,
			 strerror(errno));
		for (int g = 0; g < w->ngpus; g++)
			if (w->gpu_job[g] == id)
				w->gpu_job[g] = 0;
		w->no_next = 1;
		rc = job_run(w, job, &(json_t *){NULL});
		w->no_next = 0;
		return rc;
	}
	w->runners[w->nrunners++] = (struct runner){.pid = pid, .job = id};
	log_info("runner started", "worker=%s job=%lld pid=%d gpus=%s", w->name, (long long)id, (int)pid, ids);
	return 0;
}

int runners_reap(struct worker *w)
{
	int ended = 0;

	for (int k = 0; k < w->nrunners;) {
		struct runner *r = &w->runners[k];
		int status;

		if (waitpid(r->pid, &status, WNOHANG) != r->pid) {
			k++;
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_ORPHANED)
			w->runner_orphaned = 1;
		else /* its job's end reached serve: contact, as when the worker runs one */
			w->last_contact_ms = clock_monotonic_ms();
		for (int g = 0; g < w->ngpus; g++)
			if (w->gpu_job[g] == r->job)
				w->gpu_job[g] = 0;
		*r = w->runners[--w->nrunners];
		ended++;
	}
	return ended;
}

json_t *runners_jobs(const struct worker *w)
{
	json_t *ids = json_array();

	for (int k = 0; k < w->nrunners; k++)
		json_array_append_new(ids, json_integer(w->runners[k].job));
	return ids;
}

void runners_wait_all(struct worker *w)
{
	int passed_on = 0;

	while (runners_reap(w), w->nrunners) {
		if (w->sig->stop && !passed_on) {
			for (int k = 0; k < w->nrunners; k++)
				kill(w->runners[k].pid, SIGTERM);
			passed_on = 1;
		}
		worker_wait(w, 1000); /* a runner's end wakes it */
	}
}
