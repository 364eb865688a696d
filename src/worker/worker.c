/* The worker agent's main loop (see worker.h): register, lease, run, and
 * exit when idle or orphaned. */
#include "worker/worker_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/instance.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/handler.h"

static struct worker_signals signals_seen = {.wake = {-1, -1}};

/* How long a lease request cut short may still bring its reply. */
#define LEASE_CUT_GRACE_MS 250

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig == SIGTERM || sig == SIGINT)
		signals_seen.stop = 1;
	signals_seen.cut = 1;
	if (write(signals_seen.wake[1], &c, 1) < 0) {
		/* the pipe is full: a wake-up is pending anyway */
	}
	errno = saved;
}

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	if (pipe(signals_seen.wake) == 0) {
		for (int i = 0; i < 2; i++) {
			fcntl(signals_seen.wake[i], F_SETFD, FD_CLOEXEC);
			fcntl(signals_seen.wake[i], F_SETFL, O_NONBLOCK);
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL); /* a runner's handler waits: its GPUs are free */
	signal(SIGPIPE, SIG_IGN);
}

/* serve's own notice wants the worker's token; a cloud's must not get it. */
static struct notice *open_notice(struct worker *w, char *err, size_t errsize)
{
	const char *url = w->o->notice_url;
	int ours = client_owns_url(&w->client, url);

	return notice_new(url, ours ? w->client.token : NULL, ours ? w->client.cacert : NULL, w->o->notice_interval_ms,
			  err, errsize);
}

/* The worker's pipe, client and notice stay the worker's: a runner closes
 * its copy of the pipe and leaves the rest alone (freeing a client would
 * close the worker's connection to serve under it). */
void worker_renew_after_fork(struct worker *w)
{
	char err[300];
	int current = w->client.current; /* the serve that answered last */

	close(w->sig->wake[0]);
	close(w->sig->wake[1]);
	install_signals();
	w->sig->cut = 0;
	if (client_init(&w->client, w->o->conn.server, w->o->conn.token, w->o->conn.cacert) != 0)
		log_warn("runner without a client", "worker=%s error=\"%s\"", w->name, w->client.err);
	else
		client_use(&w->client, current);
	if (w->notice && !(w->notice = open_notice(w, err, sizeof err)))
		log_warn("runner without a reclaim notice", "worker=%s error=\"%s\"", w->name, err);
	w->last_contact_ms = clock_monotonic_ms();
}

void worker_wait(struct worker *w, int64_t ms)
{
	struct pollfd p = {.fd = w->sig->wake[0], .events = POLLIN};
	char buf[64];

	if (ms > 0 && !w->sig->stop)
		poll(&p, 1, (int)(ms > 60000 ? 60000 : ms));
	while (read(w->sig->wake[0], buf, sizeof buf) > 0)
		;
}

int worker_call(struct worker *w, const char *method, const char *path, json_t *body, json_t **reply)
{
	int status = client_call(&w->client, method, path, body, reply);

	if (status > 0)
		w->last_contact_ms = clock_monotonic_ms();
	return status;
}

int worker_notice(struct worker *w)
{
	int64_t term;

	if (!w->notice || w->reclaimed)
		return w->reclaimed;
	if (notice_poll(w->notice, clock_monotonic_ms(), &term) <= 0)
		return 0;
	w->reclaimed = 1;
	w->terminate_ms = term;
	log_info("reclaim notice", "worker=%s url=%s terminate_at_ms=%lld", w->name, notice_url(w->notice),
		 (long long)term);
	return 1;
}

static int orphaned(const struct worker *w)
{
	return clock_monotonic_ms() - w->last_contact_ms >= w->orphan_timeout_ms;
}

static void run_on_exit(const struct worker *w, const char *why)
{
	char quoted[200];
	pid_t pid;

	log_info("worker exiting", "worker=%s reason=%s", w->name, log_quote(quoted, sizeof quoted, why));
	if (!w->o->on_exit || !w->o->on_exit[0])
		return;
	setenv("EBB_WORKER", w->name, 1);
	setenv("EBB_EXIT_REASON", why, 1);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", w->o->on_exit, (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
}

/* A call to serve that failed, and that the worker will make again: its
 * reason goes to the log each time, so that a worker that ends orphaned
 * has said why (serve down, its certificate not trusted, ...). */
static void log_failed(const struct worker *w, const char *msg, int status, json_t *reply)
{
	char why[600], quoted[700];

	if (status < 0)
		snprintf(why, sizeof why, "%s", w->client.err);
	else
		client_error_text(status, reply, why, sizeof why);
	log_warn(msg, "worker=%s reason=%s", w->name, log_quote(quoted, sizeof quoted, why));
}

/* The largest result serve takes, as its register reply says; a serve
 * that does not say has no limit of its own. */
static void set_result_max(struct worker *w, json_t *reply)
{
	json_t *v = json_object_get(reply, "result_max");

	w->result_max = json_is_integer(v) ? json_integer_value(v) : CONF_RESULT_MAX;
}

/* Registers the instance; the reply sets the timeouts in force. 0 on
 * success, 1 when serve says the instance is gone, -1 when orphaned. */
static int register_instance(struct worker *w)
{
	json_t *body = json_pack("{s:I}", "instance", (json_int_t)w->o->instance), *reply = NULL;
	int64_t backoff = 500;
	int status;

	for (;;) {
		status = worker_call(w, "POST", "/v1/workers/register", body, &reply);
		if (status == 200 || status == 404 || status == 409 || w->sig->stop)
			break;
		log_failed(w, "register failed", status, reply);
		if (orphaned(w))
			break;
		json_decref(reply);
		reply = NULL;
		worker_wait(w, backoff);
		backoff = backoff < 5000 ? backoff * 2 : 5000;
	}
	json_decref(body);
	if (status != 200) {
		json_decref(reply);
		return status > 0 ? 1 : -1;
	}
	if (w->o->idle_timeout_ms < 0)
		w->idle_timeout_ms = (int64_t)(json_real_value(json_object_get(reply, "idle_timeout_s")) * 1000);
	w->orphan_timeout_ms = (int64_t)(json_real_value(json_object_get(reply, "orphan_timeout_s")) * 1000);
	w->heartbeat_ms = (int64_t)(json_real_value(json_object_get(reply, "heartbeat_s")) * 1000);
	if (w->o->reclaim_grace_ms < 0 && json_is_number(json_object_get(reply, "reclaim_grace_s")))
		w->reclaim_grace_ms = (int64_t)(json_number_value(json_object_get(reply, "reclaim_grace_s")) * 1000);
	set_result_max(w, reply);
	share_read(w, reply);
	json_decref(reply);
	log_info("worker registered", "worker=%s idle_timeout_ms=%lld orphan_timeout_ms=%lld", w->name,
		 (long long)w->idle_timeout_ms, (long long)w->orphan_timeout_ms);
	return 0;
}

/* A worker started by hand registers by its name, so that serve lists it
 * (ebb workers) before its first lease; one that cannot (a serve older
 * than this) runs all the same: its lease requests name it too. */
static void register_name(struct worker *w)
{
	json_t *body = json_pack("{s:s, s:i}", "name", w->name, "gpus", w->o->gpus), *reply = NULL;
	int status = body ? worker_call(w, "POST", "/v1/workers/register", body, &reply) : -1;

	if (status != 200)
		log_failed(w, "register failed", status, reply);
	/* Its heartbeats keep its leases: at serve's pace, a third of
	 * [queue] lease_timeout, which may be shorter than the default's. */
	if (json_number_value(json_object_get(reply, "heartbeat_s")) > 0)
		w->heartbeat_ms = (int64_t)(json_number_value(json_object_get(reply, "heartbeat_s")) * 1000);
	set_result_max(w, reply);
	share_read(w, reply);
	json_decref(body);
	json_decref(reply);
}

json_t *worker_handlers(const struct worker *w)
{
	const struct handler *h = w->handler;
	json_t *list = json_array();

	if (h)
		json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "type", h->type, "state",
						      h->setup_ms >= 0 ? "ready" : "starting", "setup_s",
						      h->setup_ms >= 0 ? json_real((double)h->setup_ms / 1000.0)
								       : json_null()));
	runners_handlers(w, list);
	if (json_array_size(list) == 0) {
		json_decref(list);
		return NULL;
	}
	return list;
}

/* What the worker offers: its GPUs free, and the jobs its runners run
 * (serve takes back a lease on the instance that it does not name: its
 * reply was lost). A worker that runs nothing sends what it always did. */
static json_t *lease_body(const struct worker *w, int64_t wait_ms)
{
	json_t *handlers, *b = json_pack("{s:s, s:i, s:i, s:I}", "worker", w->name, "gpus",
			      w->nrunners ? runners_free_gpus(w) : w->o->gpus, "vram_gb", w->o->vram_gb, "wait_s",
			      (json_int_t)(wait_ms / 1000));

	/* The lease names the instance it runs on: serve's fleet follows it. */
	if (w->o->instance)
		json_object_set_new(b, "instance", json_integer(w->o->instance));
	if (w->nrunners) {
		json_object_set_new(b, "running", runners_jobs(w));
		share_offer(w, b);
	}
	/* Its resident handlers and their setup, for serve's fleet and lease. */
	if ((handlers = worker_handlers(w)))
		json_object_set_new(b, "handlers", handlers);
	if (w->o->labels && w->o->labels[0]) {
		json_t *labels = json_array();
		char *copy = xstrdup(w->o->labels), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			json_array_append_new(labels, json_string(t));
		free(copy);
		json_object_set_new(b, "labels", labels);
	}
	return b;
}

json_t *worker_next_request(struct worker *w)
{
	if (w->no_next || w->sig->stop || worker_notice(w))
		return NULL;
	return lease_body(w, 0);
}

/* Tells serve the worker leaves by itself, so that its instance is gone
 * at once rather than at the provider's next list. Once: a serve out of
 * reach finds out from that list. */
static void leave(struct worker *w, const char *why)
{
	json_t *body = json_pack("{s:I, s:s}", "instance", (json_int_t)w->o->instance, "reason", why), *reply = NULL;
	int status = worker_call(w, "POST", "/v1/workers/leave", body, &reply);
	char text[300], quoted[400];

	if (status != 200) {
		client_error_text(status, reply, text, sizeof text);
		log_warn("leave not told to serve", "worker=%s error=%s", w->name, log_quote(quoted, sizeof quoted, text));
	}
	json_decref(body);
	json_decref(reply);
}

/* Runs a leased job: in the worker itself when it takes every GPU, else
 * in a runner beside the others. -1 when serve was out of reach. *next:
 * the job that came back with its report (the worker's own run only: a
 * runner takes none, the worker leases for the GPUs it frees), or NULL. */
static int run_job(struct worker *w, json_t *job, json_t **next)
{
	*next = NULL;
	if (runners_wanted(w, job)) {
		/* The worker's handler holds all its GPUs: a runner needs some. */
		handler_stop(w->handler, KILL_AFTER_MS, w->name, "another job needs its GPUs");
		w->handler = NULL;
		return runners_start(w, job);
	}
	return job_run(w, job, next);
}

/* Long-polls for a job: NULL with the lease reply in *reply, or with
 * *reply NULL to ask again (serve out of reach, after a backoff; a
 * runner's end; no GPU free, until a runner's end); else the reason to
 * exit. While runners run jobs, the worker is not idle. */
static const char *ask_lease(struct worker *w, int64_t *idle_since, int64_t *backoff, json_t **reply)
{
	int64_t now, wait_ms = 20000;
	json_t *body;
	int status;

	*reply = NULL;
	w->sig->cut = 0;
	if (runners_reap(w) > 0) {
		*idle_since = clock_monotonic_ms();
		if (w->runner_orphaned)
			return WORKER_ORPHANED;
	}
	now = clock_monotonic_ms();
	if (runners_busy(w))
		*idle_since = now;
	if (w->sig->stop)
		return "stopped by signal";
	if (worker_notice(w))
		return "spot reclaim notice";
	if (w->notice) {
		/* Look again before the next poll is due; a lease request
		 * waits at least a second. */
		int64_t next = notice_wait_ms(w->notice, now);
		wait_ms = next < 1000 ? 1000 : next < wait_ms ? next : wait_ms;
	}
	if (w->idle_timeout_ms > 0) {
		int64_t left = w->idle_timeout_ms - (now - *idle_since);
		if (left <= 0)
			return "idle";
		if (left < wait_ms)
			wait_ms = left < 1000 ? 1000 : left;
	}
	if (w->nrunners && ((!runners_free_gpus(w) && !share_room(w)) || runners_busy(w) == INSTANCE_GPUS_MAX)) {
		worker_wait(w, wait_ms); /* a runner's end wakes it */
		return NULL;
	}
	body = lease_body(w, wait_ms);
	/* A signal cuts a long-poll short: SIGTERM, or a runner's end (its
	 * GPUs are offered again within LEASE_CUT_GRACE_MS). A lease it would
	 * have brought is taken back by serve when the reply finds nobody,
	 * or when the next request does not name it. Only this call: a job's
	 * last report must still go out after SIGTERM. */
	w->client.abort_flag = &w->sig->cut;
	status = worker_call(w, "POST", "/v1/lease", body, reply);
	w->client.abort_flag = NULL;
	json_decref(body);
	if (status == 200) {
		*backoff = 500;
		return NULL;
	}
	if (status < 0 && w->sig->cut && !w->sig->stop) {
		json_decref(*reply);
		*reply = NULL;
		return NULL;
	}
	/* A 4xx is about the request itself (a bad name or label, a token
	 * that is not a worker's): asking again changes nothing, and the
	 * instance would idle on forever. */
	if (status >= 400 && status < 500) {
		char text[300];
		client_error_text(status, *reply, text, sizeof text);
		json_decref(*reply);
		*reply = NULL;
		snprintf(w->refused, sizeof w->refused, "lease refused: %s", text);
		return w->refused;
	}
	log_failed(w, "lease failed", status, *reply);
	json_decref(*reply);
	*reply = NULL;
	/* Runners judge for themselves, by their own calls. */
	if (!runners_busy(w) && orphaned(w))
		return WORKER_ORPHANED;
	worker_wait(w, *backoff);
	*backoff = *backoff < 5000 ? *backoff * 2 : 5000;
	return NULL;
}

/* Lease, run, repeat; returns the reason to exit. A job that came with
 * the last one's report runs next, without a lease call. */
static const char *serve_jobs(struct worker *w)
{
	int64_t idle_since = clock_monotonic_ms(), backoff = 500;
	json_t *next = NULL;

	for (;;) {
		json_t *reply = next, *job;
		const char *why;
		int rc;

		next = NULL;
		if (!json_is_object(json_object_get(reply, "job"))) {
			json_decref(reply);
			if ((why = ask_lease(w, &idle_since, &backoff, &reply)))
				return why;
			if (!reply)
				continue;
		}
		if (w->o->idle_timeout_ms < 0 && json_is_number(json_object_get(reply, "idle_timeout_s")))
			w->idle_timeout_ms = (int64_t)(json_number_value(json_object_get(reply, "idle_timeout_s")) * 1000);
		job = json_object_get(reply, "job");
		if (json_is_object(job)) {
			rc = run_job(w, job, &next);
			idle_since = clock_monotonic_ms();
			json_decref(reply);
			if (rc < 0 || w->reclaimed) {
				/* A next job would have been asked for only without a notice. */
				json_decref(next);
				return rc < 0 ? WORKER_ORPHANED : "spot reclaim notice";
			}
			continue;
		}
		json_decref(reply);
	}
}

int worker_run(const struct worker_options *o)
{
	struct worker w = {.o = o, .sig = &signals_seen};
	const char *why;
	char host[64];

	install_signals();
	if (client_init(&w.client, o->conn.server, o->conn.token, o->conn.cacert) != 0 ||
	    client_interruptible(&w.client) != 0) {
		fprintf(stderr, "ebb worker: %s\n", w.client.err);
		return 1;
	}
	/* A long-poll cut short still reads a reply already on its way: a
	 * lease lost so would wait for serve to take it back. */
	w.client.abort_grace_ms = LEASE_CUT_GRACE_MS;
	if (o->instance)
		snprintf(w.name, sizeof w.name, "i-%lld", (long long)o->instance);
	else if (o->name)
		snprintf(w.name, sizeof w.name, "%s", o->name);
	else if (gethostname(host, sizeof host) == 0)
		snprintf(w.name, sizeof w.name, "%.40s-%d", host, (int)getpid());
	w.reclaim_grace_ms = o->reclaim_grace_ms < 0 ? 25000 : o->reclaim_grace_ms;
	if (o->notice_url && o->notice_url[0]) {
		char err[300];
		if (!(w.notice = open_notice(&w, err, sizeof err))) {
			fprintf(stderr, "ebb worker: --notice-url: %s\n", err);
			client_free(&w.client);
			return 2;
		}
	}
	runners_init(&w);
	w.idle_timeout_ms = o->idle_timeout_ms < 0 ? 0 : o->idle_timeout_ms;
	w.orphan_timeout_ms = o->orphan_timeout_ms;
	w.heartbeat_ms = 10000;
	w.last_contact_ms = clock_monotonic_ms();
	if (o->boot_delay_ms > 0) {
		int64_t until = clock_monotonic_ms() + o->boot_delay_ms;
		while (!w.sig->stop && clock_monotonic_ms() < until)
			worker_wait(&w, until - clock_monotonic_ms());
	}
	w.last_contact_ms = clock_monotonic_ms();
	if (w.sig->stop) {
		why = "stopped by signal";
	} else if (o->instance && register_instance(&w) != 0) {
		why = orphaned(&w) ? WORKER_ORPHANED : "serve says the instance is gone";
	} else {
		if (!o->instance)
			register_name(&w);
		/* While a job runs its heartbeats are the only contact with serve:
		 * they must come well within orphan_timeout, or a job longer than
		 * it is killed as if serve were gone. */
		if (w.heartbeat_ms > w.orphan_timeout_ms / 3)
			w.heartbeat_ms = w.orphan_timeout_ms / 3 > 100 ? w.orphan_timeout_ms / 3 : 100;
		log_info("worker ready", "worker=%s server=%s", w.name, w.client.server);
		why = serve_jobs(&w);
		handler_stop(w.handler, KILL_AFTER_MS, w.name, "the worker stops");
		runners_wait_all(&w);
		if (o->instance && (strcmp(why, "idle") == 0 || strcmp(why, "spot reclaim notice") == 0))
			leave(&w, why);
	}
	/* A stop by signal is the provider's or a person's: no power-off. */
	if (strcmp(why, "stopped by signal") == 0)
		log_info("worker exiting", "worker=%s reason=%s", w.name, "\"stopped by signal\"");
	else
		run_on_exit(&w, why);
	notice_free(w.notice);
	json_decref(w.gpu_shares);
	client_free(&w.client);
	return w.refused[0] ? 1 : 0;
}
