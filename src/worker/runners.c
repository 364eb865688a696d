/* Several jobs at once on one instance (see worker.h): a job that leaves
 * some of the instance's GPUs free runs in a runner, a process of the
 * worker's own that runs it as the worker would (job_run) on the GPUs it
 * is given, named in its CUDA_VISIBLE_DEVICES; the worker meanwhile leases
 * for the GPUs left. A process rather than a thread: job_run blocks, and
 * a runner shares no client, pipe or clock with the worker. A runner dies
 * with its worker (a worker killed -9 leaves no job behind).
 *
 * A runner whose job ran on a resident handler (handler.h) keeps it: it
 * tells the worker that it waits, and the worker hands it the next job
 * of that type and size, so that each GPU (or share) keeps its model
 * loaded. Its GPUs are offered to serve as free while it waits; a job
 * that needs them and is not its type stops it first. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/child.h"
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

int runners_busy(const struct worker *w)
{
	int n = 0;

	for (int k = 0; k < w->nrunners; k++)
		n += w->runners[k].job != 0;
	return n;
}

int runners_idle_on(const struct worker *w, int g, double *share, int64_t *vram_gb)
{
	int whole = 0;

	for (int k = 0; k < w->nrunners; k++) {
		const struct runner *r = &w->runners[k];
		if (r->job)
			continue;
		whole |= (r->gpus >> g) & 1;
		if (r->gpu == g) {
			*share += r->share;
			*vram_gb += r->vram_gb;
		}
	}
	return whole;
}

int runners_free_gpus(const struct worker *w)
{
	int n = 0;

	for (int g = 0; g < w->ngpus; g++) {
		double idle = 0;
		int64_t vram = 0;
		n += w->gpu_job[g] == 0 || runners_idle_on(w, g, &idle, &vram) || share_only_waiting(w, g);
	}
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
	return w->nrunners > 0 || gpus_of(job) < w->ngpus || share_of(w, job, NULL) < 1;
}

/* In a runner: the worker's pipes to the other runners are the worker's. */
static void forget_others(struct worker *w)
{
	for (int k = 0; k < w->nrunners; k++) {
		if (w->runners[k].to >= 0)
			close(w->runners[k].to);
		if (w->runners[k].from >= 0)
			close(w->runners[k].from);
		free(w->runners[k].handler);
	}
	w->nrunners = 0;
}

/* In a runner whose handler is kept: tells the worker that it waits,
 * then waits for the next job (a JSON value alone on the pipe, read
 * through stdio's buffer); NULL at the end of the pipe (the worker stops
 * the runner), at a stop, or on a value that is no job. */
static json_t *next_job(struct worker *w, FILE *in, int out, pid_t worker)
{
	char line[64];
	json_error_t err;
	int len = snprintf(line, sizeof line, "idle %lld\n", (long long)w->handler->setup_ms);

	if (child_send(out, line, (size_t)len) != 0)
		return NULL;
	kill(worker, SIGUSR1); /* a lease it long-polls offers the GPUs at once */
	while (!w->sig->stop) {
		struct pollfd p[2] = {{.fd = fileno(in), .events = POLLIN}, {.fd = w->sig->wake[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		worker_wait(w, 0); /* drains the self-pipe */
		if (p[0].revents) {
			json_t *job = json_loadf(in, JSON_DISABLE_EOF_CHECK, &err);
			if (json_is_object(job))
				return job;
			json_decref(job);
			return NULL;
		}
	}
	return NULL;
}

/* In the runner: a process of its own, then the job as the worker runs
 * it, on its GPUs; with its handler kept, the next ones the worker hands
 * it (in, out: its pipes; -1 for a plain job's runner). */
static int run_alone(struct worker *w, json_t *job, const char *gpu_ids, pid_t worker, int in, int out)
{
	FILE *jobs = in >= 0 ? fdopen(in, "r") : NULL;
	int rc = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != worker) /* gone before prctl */
		return RUNNER_ORPHANED;
	worker_renew_after_fork(w);
	forget_others(w);
	setenv("CUDA_VISIBLE_DEVICES", gpu_ids, 1);
	w->no_next = 1;
	/* The worker tells serve of all its runners' handlers, on its lease
	 * requests: one runner's list would stand for the instance's. */
	w->no_heartbeat_handlers = 1;
	json_incref(job);
	while (job) {
		rc = job_run(w, job, &(json_t *){NULL});
		json_decref(job);
		job = rc >= 0 && w->handler && jobs && !w->sig->stop ? next_job(w, jobs, out, worker) : NULL;
	}
	if (jobs)
		fclose(jobs);
	handler_stop(w->handler, KILL_AFTER_MS, w->name, "its runner ends");
	return rc < 0 ? RUNNER_ORPHANED : 0;
}

/* Gives back the GPUs (or the share) runner r holds. */
static void give_back(struct worker *w, struct runner *r)
{
	for (int g = 0; g < w->ngpus; g++)
		if ((r->gpus >> g) & 1)
			w->gpu_job[g] = 0;
	r->gpus = 0;
	if (r->gpu >= 0)
		share_release(w, r->gpu, r->share, r->vram_gb);
	r->gpu = -1;
}

/* Gives back what runner k holds and drops it (its process is gone). */
static void drop(struct worker *w, int k)
{
	struct runner *r = &w->runners[k];

	give_back(w, r);
	if (r->to >= 0)
		close(r->to);
	if (r->from >= 0)
		close(r->from);
	free(r->handler);
	*r = w->runners[--w->nrunners];
}

/* Waits for runner k to end, then drops it. */
static void reap(struct worker *w, int k)
{
	int status;

	while (waitpid(w->runners[k].pid, &status, 0) < 0 && errno == EINTR)
		;
	drop(w, k);
}

/* Tells waiting runner k to stop (the end of its pipe: it stops its
 * handler) and takes back what it holds at once; whoever tells it waits
 * for it (reap) before a job runs there: a job must not meet its
 * handler's memory on its GPUs. */
static void tell_stop(struct worker *w, int k, const char *why)
{
	struct runner *r = &w->runners[k];

	log_info("stopping a waiting handler", "worker=%s type=%s pid=%d reason=\"%s\"", w->name, r->type, (int)r->pid,
		 why);
	close(r->to);
	r->to = -1;
	give_back(w, r);
}

/* The waiting runner (one not yet told to stop) that has waited
 * longest, of the kind wanted (shared or whole) if one waits, else of
 * any; -1 when none waits. */
static int longest_idle(const struct worker *w, int shared)
{
	int best = -1;

	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (int k = 0; k < w->nrunners; k++) {
			const struct runner *r = &w->runners[k];
			if (!r->job && r->to >= 0 && (pass || (r->gpu >= 0) == shared) &&
			    (best < 0 || r->idle_since < w->runners[best].idle_since))
				best = k;
		}
	return best;
}

static int free_whole(const struct worker *w)
{
	int n = 0;

	for (int g = 0; g < w->ngpus; g++)
		n += w->gpu_job[g] == 0;
	return n;
}

/* A runner whose handler waits for a job like this one: the same type
 * and command, on as many GPUs or the same share; -1 for none. */
static int waiting_for(const struct worker *w, json_t *job, double share)
{
	char *want;
	int found = -1;

	if (json_is_array(json_object_get(job, "command")) || !json_is_array(json_object_get(job, "handler")))
		return -1;
	want = handler_command(job);
	for (int k = 0; k < w->nrunners && found < 0 && want; k++) {
		const struct runner *r = &w->runners[k];
		if (!r->job && r->to >= 0 && strcmp(r->type, handler_type(job)) == 0 && strcmp(r->handler, want) == 0 &&
		    (share < 1 ? r->gpu >= 0 : r->gpu < 0 && __builtin_popcountll(r->gpus) == gpus_of(job)))
			found = k;
	}
	free(want);
	return found;
}

/* Hands the job to runner k, whose handler waits: 0, or -1 when the
 * runner is gone (its handler died, and it with it). */
static int hand_over(struct worker *w, int k, json_t *job)
{
	struct runner *r = &w->runners[k];
	int64_t id = json_integer_value(json_object_get(job, "id"));
	char *text = json_dumps(job, JSON_COMPACT);
	int sent = text && child_send(r->to, text, strlen(text)) == 0;

	free(text);
	if (!sent) { /* gone, or no memory: it must not take a half job */
		kill(r->pid, SIGKILL);
		reap(w, k);
		return -1;
	}
	r->job = id;
	for (int g = 0; g < w->ngpus; g++)
		if ((r->gpus >> g) & 1)
			w->gpu_job[g] = id;
	log_info("job handed to a waiting handler", "worker=%s job=%lld pid=%d type=%s", w->name, (long long)id,
		 (int)r->pid, r->type);
	return 0;
}

/* The pipes to a runner of a handler job: ours in ends[0] (to), ends[1]
 * (from); its own in ends[2], ends[3]. -1 in all for a plain job. */
static void pipes_for(json_t *job, int ends[4])
{
	int to[2], from[2];

	ends[0] = ends[1] = ends[2] = ends[3] = -1;
	if (json_is_array(json_object_get(job, "command")) || pipe(to) != 0)
		return;
	if (pipe(from) != 0) {
		close(to[0]);
		close(to[1]);
		return;
	}
	for (int k = 0; k < 2; k++) {
		fcntl(to[k], F_SETFD, FD_CLOEXEC);
		fcntl(from[k], F_SETFD, FD_CLOEXEC);
	}
	fcntl(from[0], F_SETFL, O_NONBLOCK);
	ends[0] = to[1];
	ends[1] = from[0];
	ends[2] = to[0];
	ends[3] = from[1];
}

/* Waiting handlers leave what a job of `want` whole GPUs (or of a
 * share) needs, and a runner's slot, the longest waiting first. All are
 * told before any is waited for, so that they unload side by side: the
 * job waits for the slowest of them, not for all of them in turn. */
static void make_room(struct worker *w, double share, int64_t vram_gb, int want)
{
	pid_t told[INSTANCE_GPUS_MAX];
	int n = 0, k;

	while ((w->nrunners - n == INSTANCE_GPUS_MAX ||
		(share < 1 ? share_fit(w, share, vram_gb) < 0 : free_whole(w) < want)) &&
	       (k = longest_idle(w, share < 1)) >= 0) {
		told[n++] = w->runners[k].pid;
		tell_stop(w, k, "another job needs its GPUs");
	}
	for (int i = 0; i < n; i++)
		for (k = 0; k < w->nrunners; k++)
			if (w->runners[k].pid == told[i]) {
				reap(w, k);
				break;
			}
}

int runners_start(struct worker *w, json_t *job)
{
	int64_t id = json_integer_value(json_object_get(job, "id")), vram_gb;
	int want = gpus_of(job), taken = 0, rc, shared = -1, k, ends[4];
	double share = share_of(w, job, &vram_gb);
	char ids[INSTANCE_GPUS_MAX * 17] = "";
	uint64_t gpus = 0;
	size_t len = 0;
	pid_t pid, worker = getpid();

	while ((k = waiting_for(w, job, share)) >= 0)
		if (hand_over(w, k, job) == 0)
			return 0;
	make_room(w, share, vram_gb, want);
	if (share < 1 && (shared = share_place(w, share, vram_gb)) >= 0) {
		snprintf(ids, sizeof ids, "%s", w->gpu_names[shared]);
		want = 0;
	}
	/* serve leased it for the GPUs free; a job asking more than that
	 * (a serve older than packing) gets those free. */
	for (int g = 0; g < w->ngpus && taken < want; g++) {
		if (w->gpu_job[g])
			continue;
		w->gpu_job[g] = id;
		gpus |= (uint64_t)1 << g;
		len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%s", taken++ ? "," : "", w->gpu_names[g]);
	}
	/* None at all: serve leased a whole-GPU job onto a shared GPU's room
	 * (with several serves, one whose tallies had not yet seen its type
	 * queued). Run, it would see no GPU; left out of the next lease
	 * request's `running`, it goes back to the queue at once. */
	if (want > 0 && taken == 0) {
		log_warn("job given back: no GPU free for it", "worker=%s job=%lld gpus=%d", w->name, (long long)id,
			 gpus_of(job));
		return 0;
	}
	pipes_for(job, ends);
	pid = w->nrunners < INSTANCE_GPUS_MAX ? fork() : (errno = EAGAIN, -1);
	if (pid == 0) {
		if (ends[0] >= 0) {
			close(ends[0]);
			close(ends[1]);
		}
		_exit(run_alone(w, job, ids, worker, ends[2], ends[3]));
	}
	if (ends[2] >= 0) {
		close(ends[2]);
		close(ends[3]);
	}
	if (pid < 0) {
		log_warn("no runner, the job runs alone", "worker=%s job=%lld error=\"%s\"", w->name, (long long)id,
			 strerror(errno));
		for (int g = 0; g < w->ngpus; g++)
			if ((gpus >> g) & 1)
				w->gpu_job[g] = 0;
		if (shared >= 0)
			share_release(w, shared, share, vram_gb);
		if (ends[0] >= 0) {
			close(ends[0]);
			close(ends[1]);
		}
		w->no_next = 1;
		rc = job_run(w, job, &(json_t *){NULL});
		w->no_next = 0;
		return rc;
	}
	w->runners[w->nrunners++] = (struct runner){
		.pid = pid,
		.job = id,
		.gpus = gpus,
		.gpu = shared,
		.share = share,
		.vram_gb = vram_gb,
		.to = ends[0],
		.from = ends[1],
		.handler = ends[0] >= 0 ? handler_command(job) : NULL,
		.setup_ms = -1,
	};
	snprintf(w->runners[w->nrunners - 1].type, sizeof w->runners[0].type, "%s", handler_type(job));
	log_info("runner started", "worker=%s job=%lld pid=%d gpus=%s", w->name, (long long)id, (int)pid, ids);
	return 0;
}

/* Whether runner r said that its handler now waits (a line it writes
 * once a job, shorter than a pipe's atomic write). */
static int said_idle(struct runner *r)
{
	char buf[64];
	ssize_t n;

	if (r->from < 0 || !r->job || (n = read(r->from, buf, sizeof buf - 1)) <= 0)
		return 0;
	buf[n] = '\0';
	if (strncmp(buf, "idle ", 5) != 0)
		return 0;
	r->setup_ms = strtoll(buf + 5, NULL, 10);
	return 1;
}

int runners_reap(struct worker *w)
{
	int ended = 0;

	for (int k = 0; k < w->nrunners;) {
		struct runner *r = &w->runners[k];
		int status;

		if (said_idle(r)) {
			/* its job's end reached serve: contact, as when the worker runs one */
			w->last_contact_ms = r->idle_since = clock_monotonic_ms();
			r->job = 0;
			ended++;
		}
		if (waitpid(r->pid, &status, WNOHANG) != r->pid) {
			k++;
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_ORPHANED)
			w->runner_orphaned = 1;
		else if (r->job)
			w->last_contact_ms = clock_monotonic_ms();
		ended += r->job != 0;
		drop(w, k);
	}
	return ended;
}

json_t *runners_jobs(const struct worker *w)
{
	json_t *ids = json_array();

	for (int k = 0; k < w->nrunners; k++)
		if (w->runners[k].job)
			json_array_append_new(ids, json_integer(w->runners[k].job));
	return ids;
}

/* serve's list of a worker's handlers holds this many types. */
#define HANDLER_TYPES_TOLD 4

void runners_handlers(const struct worker *w, json_t *list)
{
	for (int k = 0; k < w->nrunners; k++) {
		const struct runner *r = &w->runners[k];
		json_t *seen = NULL, *h;
		size_t i;

		if (!r->handler)
			continue;
		json_array_foreach(list, i, h)
			if (strcmp(json_string_value(json_object_get(h, "type")), r->type) == 0)
				seen = h;
		if (!seen && json_array_size(list) == HANDLER_TYPES_TOLD)
			continue;
		if (!seen)
			json_array_append_new(list, seen = json_pack("{s:s, s:s, s:n}", "type", r->type, "state",
								     "starting", "setup_s"));
		/* One ready makes the type's ready, with the longest setup. */
		if (r->setup_ms >= 0 &&
		    (json_number_value(json_object_get(seen, "setup_s")) * 1000 < (double)r->setup_ms ||
		     strcmp(json_string_value(json_object_get(seen, "state")), "ready") != 0)) {
			json_object_set_new(seen, "state", json_string("ready"));
			json_object_set_new(seen, "setup_s", json_real((double)r->setup_ms / 1000.0));
		}
	}
}

void runners_wait_all(struct worker *w)
{
	int passed_on = 0;

	/* The end of their pipes: a waiting handler stops now, a busy one
	 * after its job. */
	for (int k = 0; k < w->nrunners; k++)
		if (w->runners[k].to >= 0) {
			close(w->runners[k].to);
			w->runners[k].to = -1;
		}
	while (runners_reap(w), w->nrunners) {
		if (w->sig->stop && !passed_on) {
			for (int k = 0; k < w->nrunners; k++)
				kill(w->runners[k].pid, SIGTERM);
			passed_on = 1;
		}
		worker_wait(w, 1000); /* a runner's end wakes it */
	}
}
