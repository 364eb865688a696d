/* Runs one leased job (see worker.h): the command as a child process in
 * its own process group, with EBB_JOB_ID, EBB_ATTEMPT, EBB_ITEMS,
 * EBB_CHECKPOINT and EBB_CONTROL_FD, on which it writes lines
 * "progress N", "checkpoint TOKEN N" and "result JSON". Those are
 * forwarded (a result with the complete), heartbeats
 * keep the lease, the job is killed past its timeout, and its end is
 * reported with the items done. Its stdout and stderr are read as lines
 * and shipped to serve (output.h, ship.h), all of them before the end is
 * reported; a failed run's error ends with its last lines. A job stopped from outside (a spot
 * reclaim notice, the worker stopped) is reported interrupted, with its
 * last checkpoint: it resumes elsewhere and the attempt does not count.
 * A job with no command runs on its type's resident handler (handler.h)
 * instead: given as a line on its stdin once the handler is ready, ended
 * by its "done" or "failed REASON" (or its death), cancelled by "cancel
 * ID"; the rest (heartbeats, timeout, stops, the report) is the same. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/job.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/child.h"
#include "worker/control.h"
#include "worker/handler.h"
#include "worker/output.h"
#include "worker/ship.h"
#include "worker/wakeup.h"
#include "worker/worker_internal.h"

/* The longest wait, at the job's end, for serve to take the last of its
 * output before the end is reported. */
#define SHIP_FLUSH_MS 10000

struct run {
	struct worker *w;
	int64_t id, token, items, items_done;
	int64_t started_ms, timeout_ms, next_heartbeat_ms;
	pid_t pid;
	int control; /* read end of the job's control pipe */
	struct control_reader *reader; /* its lines */
	struct output *out; /* its stdout and stderr */
	struct ship *ship;  /* their lines to serve */
	int lost;             /* serve refused the lease: the job is not ours */
	int64_t term_sent_ms; /* SIGTERM sent to the job, 0 if not */
	int64_t kill_at_ms;   /* SIGKILL then, if it still runs; 0: none due */
	int64_t stop_asked_ms; /* the worker was told to stop */
	const char *killed_why;
	int interrupted;      /* stopped from outside: report an interruption */
	char *checkpoint;     /* the last checkpoint of this run, or NULL */
	json_t *result;       /* the last result it wrote, or NULL */
	char result_error[200]; /* why that last result cannot go to serve; "" if it can */
	int64_t checkpoint_items;
	char preempted[440]; /* killed_why of a preemption */
	json_t *next;         /* the lease reply that came with the report, or NULL */
	struct wakeup *wakeup; /* serve's news of the lease between heartbeats, or NULL */
	/* A payload job runs on its type's resident handler (handler.h);
	 * NULL: on its own command. */
	struct handler *h;
	int given;            /* its line was written to the handler's stdin */
	int cancel_sent;      /* "cancel ID" was */
	int said;             /* CONTROL_DONE or CONTROL_FAILED: the handler ended the job; 0: not yet */
	char said_why[150];   /* the reason of "failed REASON", cut */
	int died;             /* the handler ended while the job ran */
};

/* SIGTERM to the job's process group, SIGKILL kill_after_ms later. */
static void stop_job(struct run *r, const char *why, int64_t kill_after_ms)
{
	int64_t now = clock_monotonic_ms();

	if (!r->kill_at_ms || now + kill_after_ms < r->kill_at_ms)
		r->kill_at_ms = now + kill_after_ms;
	if (r->term_sent_ms)
		return;
	r->term_sent_ms = now;
	r->killed_why = why;
	kill(-r->pid, SIGTERM);
	log_info("stopping job", "worker=%s job=%lld reason=\"%s\" kill_in_ms=%lld", r->w->name, (long long)r->id,
		 why, (long long)kill_after_ms);
}

/* A reclaim notice: the job gets reclaim_grace for a last checkpoint, and
 * less when the notice says the instance goes sooner (a second kept to
 * report the interruption). */
static int64_t reclaim_grace_ms(const struct worker *w)
{
	struct timespec ts;
	int64_t grace = w->reclaim_grace_ms, left;

	if (w->terminate_ms > 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		left = w->terminate_ms - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) - 1000;
		if (left < grace)
			grace = left > 0 ? left : 0;
	}
	return grace;
}

/* Sends a call about this job; a 409 means the lease is no longer ours.
 * The reply goes to *out when out is not NULL (to json_decref). */
static int job_call_reply(struct run *r, const char *what, json_t *body, json_t **out)
{
	char path[96];
	json_t *reply = NULL;
	int status;

	snprintf(path, sizeof path, "/v1/jobs/%lld/%s", (long long)r->id, what);
	json_object_set_new(body, "lease_token", json_integer(r->token));
	status = worker_call(r->w, "POST", path, body, &reply);
	json_decref(body);
	if (status == 409 || status == 404) {
		char why[300];
		client_error_text(status, reply, why, sizeof why);
		log_warn("lease lost", "worker=%s job=%lld detail=\"%s\"", r->w->name, (long long)r->id,
			 json_string_value(json_object_get(json_object_get(reply, "error"), "code")));
		r->lost = 1;
	}
	if (out)
		*out = reply;
	else
		json_decref(reply);
	return status;
}

static int job_call(struct run *r, const char *what, json_t *body)
{
	return job_call_reply(r, what, body, NULL);
}

/* A preemption stops the job as a reclaim notice does: its GPUs go to a
 * team owed them (docs/TEAMS.md). */
static void preempt(struct run *r, const char *why)
{
	if (r->term_sent_ms)
		return;
	snprintf(r->preempted, sizeof r->preempted, "preempted: %s", why);
	r->interrupted = 1;
	stop_job(r, r->preempted, reclaim_grace_ms(r->w));
}

/* A heartbeat; its reply may say "preempt". It carries the worker's
 * handler: a long setup shows as "starting" in serve's fleet while the
 * job waits for it, and its measured time reaches the scaler before the
 * job ends (docs/SCALING.md, "Warm handlers"). */
static void heartbeat(struct run *r)
{
	json_t *reply = NULL, *body = json_object(), *handlers = NULL;
	const char *why, *refused;
	int status;

	if (!r->w->no_heartbeat_handlers && (handlers = worker_handlers(r->w)))
		json_object_set_new(body, "handlers", handlers);
	status = job_call_reply(r, "heartbeat", body, &reply);
	refused = json_string_value(json_object_get(json_object_get(reply, "error"), "field"));
	if (status == 400 && handlers && refused && strcmp(refused, "handlers") == 0) {
		/* A serve older than this worker: the heartbeat goes again without. */
		r->w->no_heartbeat_handlers = 1;
		json_decref(reply);
		heartbeat(r);
		return;
	}
	if (status == 200 && (why = json_string_value(json_object_get(reply, "preempt"))))
		preempt(r, why);
	json_decref(reply);
}

/* The wake-up's news: the lease is no longer ours (cancelled), or it is
 * preempted; what the next heartbeat would have said. */
static void woken(struct run *r)
{
	const char *why, *news = wakeup_news(r->wakeup, &why);

	if (!news)
		return;
	log_info("woken by serve", "worker=%s job=%lld news=%s reason=\"%s\"", r->w->name, (long long)r->id, news,
		 why);
	if (strcmp(news, "preempt") == 0)
		preempt(r, why);
	else
		r->lost = 1;
}

/* The fail report that replaces a complete serve refused as too large
 * (its reason, serve's message), asking for the next job as it did;
 * complete is released. */
static json_t *too_large(struct run *r, json_t *complete, json_t *message)
{
	const char *why = json_string_value(message);
	json_t *fail = json_pack("{s:s, s:b, s:i}", "error", why ? why : "result: over serve's [queue] result_max",
				 "retry", 0, "exit", 0), *next = json_object_get(complete, "next");

	log_warn("result refused as too large", "worker=%s job=%lld reason=\"%s\"", r->w->name, (long long)r->id,
		 json_string_value(json_object_get(fail, "error")));
	if (next)
		json_object_set(fail, "next", next);
	json_decref(complete);
	return fail;
}

/* The end of a run must reach serve, or the job runs again once its lease
 * expires: while serve is out of reach, try again, until orphaned. With
 * ask_next, the report asks for the worker's next job too (one round trip
 * less per job), unless the worker is stopping or its instance goes away;
 * the lease reply goes to r->next. */
static void job_report(struct run *r, const char *what, json_t *body, int ask_next)
{
	int64_t backoff = 250;
	json_t *next = ask_next ? worker_next_request(r->w) : NULL;

	if (next)
		json_object_set_new(body, "next", next);
	for (;;) {
		json_t *reply = NULL;
		int status = job_call_reply(r, what, json_incref(body), &reply);
		const char *refused = json_string_value(json_object_get(json_object_get(reply, "error"), "field"));
		/* A serve older than this worker knows no exit status: the
		 * report goes again without it. */
		int again = status == 400 && refused && strcmp(refused, "exit") == 0;
		if (status == 200 && next)
			r->next = json_incref(json_object_get(reply, "next"));
		/* A result over serve's [queue] result_max, lowered since this
		 * worker registered: the run fails as one over the limit the
		 * worker knew does, not retried, rather than leave the job
		 * leased until its lease expires. */
		if (status == 413 && strcmp(what, "complete") == 0) {
			body = too_large(r, body, json_object_get(json_object_get(reply, "error"), "message"));
			what = "fail";
			json_decref(reply);
			continue;
		}
		json_decref(reply);
		if (again && json_object_del(body, "exit") == 0)
			continue;
		/* With the lease's token: which run's report serve took (the
		 * chaos run, bench/ha_chaos.sh, checks that one run's only). */
		if (status == 200)
			log_info("report acknowledged", "worker=%s job=%lld call=%s lease_token=%lld", r->w->name,
				 (long long)r->id, what, (long long)r->token);
		if ((status > 0 && status < 500) ||
		    clock_monotonic_ms() - r->w->last_contact_ms >= r->w->orphan_timeout_ms)
			break;
		log_warn("report failed, retrying", "worker=%s job=%lld call=%s status=%d", r->w->name,
			 (long long)r->id, what, status);
		poll(NULL, 0, (int)backoff);
		backoff = backoff < 4000 ? backoff * 2 : 4000;
	}
	json_decref(body);
}

/* A result line: kept for the complete when it is JSON within [queue]
 * result_max as serve measures it (job_stored_json), else the reason the
 * run fails. The last one written counts, good or bad. */
static void take_result(struct run *r, const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
	char *stored;
	size_t n;

	json_decref(r->result);
	r->result = NULL;
	r->result_error[0] = '\0';
	if (!v) {
		snprintf(r->result_error, sizeof r->result_error, "result is not JSON: %s at byte %d", jerr.text,
			 jerr.position);
		return;
	}
	stored = job_stored_json(v);
	n = stored ? strlen(stored) : 0;
	free(stored);
	if ((int64_t)n > r->w->result_max) {
		snprintf(r->result_error, sizeof r->result_error, "result is %zu bytes, over [queue] result_max (%lld)", n,
			 (long long)r->w->result_max);
		json_decref(v);
		return;
	}
	r->result = v;
}

/* A result line the reader refused: longer than any result_max, or with
 * a NUL byte. Either way the run must not end as if it had none. */
static int refused_result(struct run *r)
{
	const struct control_reader *cr = r->reader;

	if (strncmp(cr->line, "result ", 7) != 0)
		return 0;
	json_decref(r->result);
	r->result = NULL;
	if (cr->len - 7 > (size_t)r->w->result_max)
		snprintf(r->result_error, sizeof r->result_error, "result is %zu bytes, over [queue] result_max (%lld)",
			 cr->len - 7, (long long)r->w->result_max);
	else
		snprintf(r->result_error, sizeof r->result_error, "result is not JSON: it holds a NUL byte");
	return 1;
}

/* A handler's line about its own state ("ready"), or one that ends the
 * job ("done", "failed REASON"); 0, or -1 when it has no place here. */
static int handler_line(struct run *r, const struct control_line *c)
{
	if (!r->h)
		return -1;
	if (c->kind == CONTROL_READY) {
		if (r->h->setup_ms >= 0)
			return -1;
		r->h->setup_ms = clock_monotonic_ms() - r->h->spawned_ms;
		log_info("handler ready", "worker=%s type=%s setup_ms=%lld", r->w->name, r->h->type,
			 (long long)r->h->setup_ms);
		return 0;
	}
	if (!r->given || r->said)
		return -1;
	r->said = c->kind;
	if (c->kind == CONTROL_FAILED)
		snprintf(r->said_why, sizeof r->said_why, "%s", c->reason);
	return 0;
}

static void on_line(void *arg, char *line)
{
	struct run *r = arg;
	struct control_line c;

	if (!line && refused_result(r))
		return;
	if (!line || control_parse(line, &c) != 0 ||
	    ((c.kind == CONTROL_READY || c.kind == CONTROL_DONE || c.kind == CONTROL_FAILED) && handler_line(r, &c) != 0)) {
		log_warn("bad control line",
			 "worker=%s job=%lld expected=\"progress N | checkpoint TOKEN N | result JSON%s\"%s", r->w->name,
			 (long long)r->id, r->h ? " | ready (once) | done | failed REASON" : "",
			 line ? "" : " detail=\"too long, or a NUL byte\"");
		return;
	}
	if (c.kind == CONTROL_PROGRESS)
		r->items_done = c.items;
	if (c.kind == CONTROL_RESULT)
		take_result(r, c.text);
	if (c.kind == CONTROL_CHECKPOINT) {
		r->items_done = c.items;
		free(r->checkpoint);
		r->checkpoint = xstrdup(c.token);
		r->checkpoint_items = c.items;
		job_call(r, "checkpoint", json_pack("{s:s, s:I}", "checkpoint", c.token, "items_done", (json_int_t)c.items));
	}
}

/* Reads what the job wrote on its control fd: 1 when it read some, -1
 * when there is none now, 0 at end of file. */
static int read_control(struct run *r)
{
	char buf[4096];
	ssize_t n = read(r->control, buf, sizeof buf);

	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR) ? -1 : 0;
	control_feed(r->reader, buf, (size_t)n, on_line, r);
	return 1;
}

/* At the end of the control pipe: a handler's is its own. */
static void close_control(struct run *r)
{
	close(r->control);
	r->control = -1;
	if (r->h)
		r->h->control = -1;
}

/* The job to the handler, once it is ready: one JSON line on its stdin,
 * and its output from now on the job's log. */
static void give(struct run *r, json_t *job)
{
	json_t *line = json_pack("{s:I, s:I, s:O?, s:O?, s:I}", "id", (json_int_t)r->id, "attempt",
				 json_integer_value(json_object_get(job, "attempts")), "payload",
				 json_object_get(job, "payload"), "checkpoint", json_object_get(job, "checkpoint"),
				 "items", (json_int_t)r->items);
	char *text = line ? json_dumps(line, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	char *ended = text ? xmalloc(strlen(text) + 2) : NULL;

	r->given = 1;
	output_drain(r->h->out); /* what it wrote before the job is the worker's */
	output_set_ship(r->h->out, r->ship);
	if (ended) {
		sprintf(ended, "%s\n", text);
		handler_send(r->h, ended); /* one gone is seen by the wait */
	}
	free(ended);
	free(text);
	json_decref(line);
}

/* Cancelled: a plain job is stopped; a handler is told, and killed if it
 * has not ended the job within the grace (a job not yet given to it is
 * over at once). */
static void cancel_job(struct run *r)
{
	char line[64];

	if (!r->h) {
		stop_job(r, "its lease is gone (cancelled, or leased again)", KILL_AFTER_MS);
		return;
	}
	if (r->cancel_sent || !r->given)
		return;
	r->cancel_sent = 1;
	r->killed_why = "its lease is gone (cancelled, or leased again)";
	r->kill_at_ms = clock_monotonic_ms() + KILL_AFTER_MS;
	snprintf(line, sizeof line, "cancel %lld\n", (long long)r->id);
	handler_send(r->h, line);
	log_info("cancel sent to the handler", "worker=%s job=%lld kill_in_ms=%lld", r->w->name, (long long)r->id,
		 (long long)KILL_AFTER_MS);
}

/* Whether the job has ended: its process exited, or its handler said so
 * or ended. */
static int ended(struct run *r, json_t *job, int *status)
{
	if (!r->h)
		return waitpid(r->pid, status, WNOHANG) == r->pid;
	if (handler_ended(r->h, status))
		return r->died = 1;
	if (r->said || (r->lost && !r->given)) {
		*status = 0;
		return 1;
	}
	if (!r->given && r->h->setup_ms >= 0 && !r->term_sent_ms)
		give(r, job);
	return 0;
}

static char **command_argv(json_t *command)
{
	size_t n = json_array_size(command), i;
	char **argv = xcalloc(n + 1, sizeof *argv);
	json_t *arg;

	json_array_foreach(command, i, arg)
		argv[i] = (char *)json_string_value(arg);
	return argv;
}

static void set_env_int(const char *name, long long v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", v);
	setenv(name, buf, 1);
}

/* The child: the job's environment, then its command (child.h). */
static void exec_job(json_t *job, char **argv, int control_w, const int out[2], pid_t worker)
{
	json_t *checkpoint = json_object_get(job, "checkpoint"), *payload = json_object_get(job, "payload");

	set_env_int("EBB_JOB_ID", json_integer_value(json_object_get(job, "id")));
	set_env_int("EBB_ATTEMPT", json_integer_value(json_object_get(job, "attempts")));
	set_env_int("EBB_ITEMS", json_integer_value(json_object_get(job, "items")));
	setenv("EBB_CHECKPOINT", json_is_string(checkpoint) ? json_string_value(checkpoint) : "", 1);
	if (payload) {
		char *text = json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY);
		setenv("EBB_PAYLOAD", text, 1);
		free(text);
	}
	child_exec(argv, -1, control_w, out, worker);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Waits for the job to end, doing what is due meanwhile; returns its wait
 * status, or -1 when serve was out of reach for orphan_timeout. */
static int supervise(struct run *r, json_t *job)
{
	struct worker *w = r->w;
	int status;

	for (;;) {
		int64_t now = clock_monotonic_ms(), wait_ms = 1000;
		struct pollfd p[5] = {{.fd = w->sig->wake[0], .events = POLLIN},
				      {.fd = wakeup_fd(r->wakeup), .events = POLLIN},
				      {.fd = r->control, .events = POLLIN}};
		int nout = output_pollfds(r->out, &p[3]);

		if (ended(r, job, &status))
			return status;
		if (r->lost)
			cancel_job(r);
		if (!r->term_sent_ms && worker_notice(w)) {
			r->interrupted = 1;
			stop_job(r, "spot reclaim notice", reclaim_grace_ms(w));
		}
		if (w->sig->stop && !r->stop_asked_ms)
			r->stop_asked_ms = now;
		if (r->stop_asked_ms && now - r->stop_asked_ms >= w->o->grace_ms && !r->term_sent_ms) {
			r->interrupted = 1;
			stop_job(r, "the worker is stopping and the grace period is over", KILL_AFTER_MS);
		}
		if (now - r->started_ms >= r->timeout_ms)
			stop_job(r, "timed out", KILL_AFTER_MS);
		if (r->kill_at_ms && now >= r->kill_at_ms) {
			kill(-r->pid, SIGKILL);
			r->kill_at_ms = 0; /* done: its exit wakes the poll */
		}
		if (!r->lost && now >= r->next_heartbeat_ms) {
			heartbeat(r);
			r->next_heartbeat_ms = now + w->heartbeat_ms;
		}
		if (now - w->last_contact_ms >= w->orphan_timeout_ms) {
			kill(-r->pid, SIGKILL);
			waitpid(r->pid, &status, 0);
			if (r->h)
				r->h->pid = 0;
			return -1;
		}
		wait_ms = min64(wait_ms, r->next_heartbeat_ms - now);
		if (!r->term_sent_ms)
			wait_ms = min64(wait_ms, r->started_ms + r->timeout_ms - now);
		if (r->kill_at_ms)
			wait_ms = min64(wait_ms, r->kill_at_ms - now);
		if (w->notice && !r->term_sent_ms)
			wait_ms = min64(wait_ms, notice_wait_ms(w->notice, now));
		if (r->control < 0) /* no fd: poll leaves it be */
			p[2].fd = -1;
		poll(p, 3 + (nout > 0 ? nout : 0), (int)(wait_ms > 0 ? wait_ms : 0));
		output_read(r->out, &p[3], nout);
		if (p[0].revents) {
			char buf[64];
			while (read(w->sig->wake[0], buf, sizeof buf) > 0)
				;
		}
		if (p[1].revents)
			woken(r);
		if (r->control >= 0 && p[2].revents && read_control(r) == 0)
			close_control(r);
	}
}

/* Whether the job did all it was to: its command exited 0, or its
 * handler said "done"; and nothing stopped it first. */
static int succeeded(const struct run *r, int status)
{
	if (r->killed_why)
		return 0;
	return r->h ? r->said == CONTROL_DONE : WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void report(struct run *r, int status)
{
	char why[160], last[400], error[sizeof why + sizeof last + 2];
	int64_t run_ms = clock_monotonic_ms() - r->started_ms;

	if (r->lost)
		return;
	if (r->interrupted) {
		/* Whatever its exit: the job was stopped before its end. */
		json_t *body = json_pack("{s:s, s:I, s:b}", "reason", r->killed_why, "items_done",
					 (json_int_t)r->items_done, "reclaim", r->w->reclaimed);
		if (r->checkpoint) {
			json_object_set_new(body, "checkpoint", json_string(r->checkpoint));
			json_object_set_new(body, "checkpoint_items", json_integer(r->checkpoint_items));
		}
		log_info("job interrupted", "worker=%s job=%lld run_ms=%lld items_done=%lld reason=\"%s\"", r->w->name,
			 (long long)r->id, (long long)run_ms, (long long)r->items_done, r->killed_why);
		job_report(r, "interrupt", body, 0);
		return;
	}
	if (succeeded(r, status) && r->result_error[0]) {
		/* Not retried: the same run would write the same result. */
		log_info("job failed", "worker=%s job=%lld run_ms=%lld error=\"%s\"", r->w->name, (long long)r->id,
			 (long long)run_ms, r->result_error);
		job_report(r, "fail", json_pack("{s:s, s:b, s:i}", "error", r->result_error, "retry", 0, "exit", 0), 1);
		return;
	}
	if (succeeded(r, status)) {
		json_t *done = json_pack("{s:I}", "items_done", (json_int_t)r->items_done);
		log_info("job done", "worker=%s job=%lld run_ms=%lld items_done=%lld", r->w->name,
			 (long long)r->id, (long long)run_ms, (long long)r->items_done);
		if (done && r->result)
			json_object_set(done, "result", r->result);
		job_report(r, "complete", done, 1);
		return;
	}
	if (r->killed_why)
		snprintf(why, sizeof why, "%s after %llds", r->killed_why, (long long)(run_ms / 1000));
	else if (r->said == CONTROL_FAILED)
		snprintf(why, sizeof why, "%s", r->said_why);
	else if (r->died && WIFEXITED(status))
		snprintf(why, sizeof why, "the handler died: exit status %d", WEXITSTATUS(status));
	else if (r->died)
		snprintf(why, sizeof why, "the handler died: killed by signal %d", WTERMSIG(status));
	else if (WIFEXITED(status))
		snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
	log_info("job failed", "worker=%s job=%lld run_ms=%lld error=\"%s\"", r->w->name, (long long)r->id,
		 (long long)run_ms, why);
	/* What the job said last, most often why it failed. */
	output_last_lines(r->out, last, sizeof last);
	snprintf(error, sizeof error, "%s%s%s", why, last[0] ? ": " : "", last);
	json_t *fail = json_pack("{s:s, s:b}", "error", error, "retry", 1);
	/* Its exit status, when it exited: what the job's attempt shows. */
	if (fail && !r->h && WIFEXITED(status) && !r->killed_why)
		json_object_set_new(fail, "exit", json_integer(WEXITSTATUS(status)));
	job_report(r, "fail", fail, 1);
}

/* Fails the job before it ran (no report of a run: nothing ran). */
static void fail_unrun(struct run *r, const char *why, int retry)
{
	job_call(r, "fail", json_pack("{s:s, s:b}", "error", why, "retry", retry));
}

/* Starts the job's own command: 0, or -1 when it could not be (the job
 * was failed). */
static int start_command(struct run *r, json_t *job, json_t *command)
{
	int pipefd[2], outfd[2];
	char **argv;
	pid_t worker = getpid();

	if (pipe(pipefd) != 0 || fcntl(pipefd[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC) != 0) {
		fail_unrun(r, "worker: no pipe", 1);
		return -1;
	}
	if (!(r->out = output_open(r->ship, outfd))) {
		close(pipefd[0]);
		close(pipefd[1]);
		fail_unrun(r, "worker: no pipe", 1);
		return -1;
	}
	argv = command_argv(command);
	r->reader = xcalloc(1, sizeof *r->reader);
	r->pid = fork();
	if (r->pid == 0)
		exec_job(job, argv, pipefd[1], outfd, worker);
	close(pipefd[1]);
	output_forked(r->out);
	free(argv);
	r->control = pipefd[0];
	fcntl(r->control, F_SETFL, O_NONBLOCK);
	if (r->pid < 0) {
		fail_unrun(r, "worker: cannot fork", 1);
		return -1;
	}
	return 0;
}

/* Takes the type's handler for the job, started if it is not running:
 * 0, or -1 when it could not be (the job was failed). */
static int start_on_handler(struct run *r, json_t *job)
{
	char why[300];

	if (!(r->h = r->w->handler = handler_for(r->w->handler, job, r->w->name, why, sizeof why))) {
		fail_unrun(r, why, 1);
		return -1;
	}
	r->pid = r->h->pid;
	r->control = r->h->control;
	r->reader = &r->h->reader;
	r->out = r->h->out;
	return 0;
}

/* After the run on a handler: its output is the worker's again; one that
 * ended (died, or was killed) is gone, and the next job starts another. */
static void leave_handler(struct run *r)
{
	output_set_ship(r->h->out, NULL);
	if (r->died || r->h->pid <= 0) {
		handler_stop(r->h, 0, r->w->name, "it ended");
		r->w->handler = NULL;
	}
}

int job_run(struct worker *w, json_t *job, json_t **next)
{
	json_t *command = json_object_get(job, "command");
	struct run r = {
		.w = w,
		.id = json_integer_value(json_object_get(job, "id")),
		.token = json_integer_value(json_object_get(json_object_get(job, "lease"), "token")),
		.items = json_integer_value(json_object_get(job, "items")),
		.timeout_ms = json_integer_value(json_object_get(job, "timeout_s")) * 1000,
		.control = -1,
	};
	int status = 0, rc;

	r.items_done = r.items;
	if (!json_is_array(command) && !json_is_array(json_object_get(job, "handler"))) {
		fail_unrun(&r, "the job has no command to run, and its type no handler", 0);
		return 0;
	}
	/* The jobs the worker runs itself take all its GPUs: a handler of
	 * another type, or of none, leaves them first. */
	if (json_is_array(command) && w->handler) {
		handler_stop(w->handler, KILL_AFTER_MS, w->name, "another job needs its GPUs");
		w->handler = NULL;
	}
	r.ship = ship_start(&w->client, r.id, r.token);
	r.started_ms = clock_monotonic_ms();
	r.next_heartbeat_ms = r.started_ms + w->heartbeat_ms;
	log_info("job started", "worker=%s job=%lld attempt=%lld lease_token=%lld%s", w->name, (long long)r.id,
		 (long long)json_integer_value(json_object_get(job, "attempts")), (long long)r.token,
		 json_is_array(command) ? "" : " on=handler");
	rc = json_is_array(command) ? start_command(&r, job, command) : start_on_handler(&r, job);
	/* A job that never writes progress did all its items when it succeeds. */
	r.items_done = json_integer_value(json_object_get(job, "items_done"));
	if (rc == 0) {
		r.wakeup = wakeup_start(&w->o->conn, w->client.current, r.id, r.token);
		status = supervise(&r, job);
		wakeup_stop(r.wakeup);
	}
	if (rc == 0 && status >= 0) {
		while (r.control >= 0 && (rc = read_control(&r)) > 0)
			;
		if (rc == 0)
			close_control(&r);
		output_drain(r.out);
		ship_finish(r.ship, SHIP_FLUSH_MS);
		r.ship = NULL;
		if (succeeded(&r, status) && r.items_done == 0)
			r.items_done = r.items;
		report(&r, status);
	}
	if (r.ship)
		ship_finish(r.ship, 0);
	if (r.h) {
		leave_handler(&r);
	} else {
		if (r.control >= 0)
			close(r.control);
		output_close(r.out);
		free(r.reader);
	}
	free(r.checkpoint);
	json_decref(r.result);
	*next = r.next;
	return status < 0 ? -1 : 0;
}
