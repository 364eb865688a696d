/* See handler.h. */
#include "worker/handler.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/child.h"

const char *handler_type(json_t *job)
{
	const char *type = json_string_value(json_object_get(job, "type"));

	return type ? type : "";
}

char *handler_command(json_t *job) { return json_dumps(json_object_get(job, "handler"), JSON_COMPACT); }

static void handler_free(struct handler *h)
{
	if (h->in >= 0)
		close(h->in);
	if (h->control >= 0)
		close(h->control);
	output_close(h->out);
	free(h->argv_text);
	free(h);
}

static struct handler *handler_start(json_t *job, json_t *argv, const char *worker, char *why, size_t whysize)
{
	struct handler *h = xcalloc(1, sizeof *h);
	int in[2] = {-1, -1}, control[2] = {-1, -1}, outfd[2];
	size_t n = json_array_size(argv), i;
	char **args = NULL;
	json_t *arg;
	pid_t self = getpid();

	snprintf(h->type, sizeof h->type, "%s", handler_type(job));
	h->argv_text = handler_command(job);
	h->in = h->control = -1;
	h->setup_ms = -1;
	if (pipe(in) != 0 || pipe(control) != 0 || !(h->out = output_open(NULL, outfd))) {
		snprintf(why, whysize, "worker: no pipe for the handler: %s", strerror(errno));
		for (int k = 0; k < 2; k++) {
			if (in[k] >= 0)
				close(in[k]);
			if (control[k] >= 0)
				close(control[k]);
		}
		handler_free(h);
		return NULL;
	}
	for (int k = 0; k < 2; k++) {
		fcntl(in[k], F_SETFD, FD_CLOEXEC);
		fcntl(control[k], F_SETFD, FD_CLOEXEC);
	}
	args = xcalloc(n + 1, sizeof *args);
	json_array_foreach(argv, i, arg)
		args[i] = (char *)json_string_value(arg);
	h->spawned_ms = clock_monotonic_ms();
	h->pid = fork();
	if (h->pid == 0)
		child_exec(args, in[0], control[1], outfd, self);
	free(args);
	close(in[0]);
	close(control[1]);
	output_forked(h->out);
	h->in = in[1];
	h->control = control[0];
	fcntl(h->control, F_SETFL, O_NONBLOCK);
	if (h->pid < 0) {
		snprintf(why, whysize, "worker: cannot fork the handler: %s", strerror(errno));
		handler_free(h);
		return NULL;
	}
	log_info("handler started", "worker=%s type=%s pid=%d command=%s", worker, h->type, (int)h->pid,
		 h->argv_text);
	return h;
}

struct handler *handler_for(struct handler *w_handler, json_t *job, const char *worker, char *why, size_t whysize)
{
	json_t *argv = json_object_get(job, "handler");
	char *want = handler_command(job);
	int status, same = w_handler && want && strcmp(w_handler->argv_text, want) == 0 &&
			   strcmp(w_handler->type, handler_type(job)) == 0;

	free(want);
	if (same && !handler_ended(w_handler, &status))
		return w_handler;
	if (w_handler)
		handler_stop(w_handler, 5000, worker, same ? "it ended" : "another job needs its GPUs");
	return handler_start(job, argv, worker, why, whysize);
}

int handler_send(struct handler *h, const char *line) { return child_send(h->in, line, strlen(line)); }

int handler_ended(struct handler *h, int *status)
{
	if (h->pid <= 0)
		return 1;
	if (waitpid(h->pid, status, WNOHANG) != h->pid)
		return 0;
	h->pid = 0;
	return 1;
}

void handler_stop(struct handler *h, int64_t grace_ms, const char *worker, const char *why)
{
	int status;

	if (!h)
		return;
	if (h->pid > 0) {
		int64_t kill_at = clock_monotonic_ms() + grace_ms;
		log_info("stopping handler", "worker=%s type=%s pid=%d reason=\"%s\"", worker, h->type, (int)h->pid, why);
		/* Its stdin at its end too: a handler reading its next job
		 * sees that there is none. */
		close(h->in);
		h->in = -1;
		kill(-h->pid, SIGTERM);
		while (!handler_ended(h, &status)) {
			struct pollfd p[2];
			int n = output_pollfds(h->out, p);
			if (clock_monotonic_ms() >= kill_at) {
				kill(-h->pid, SIGKILL);
				waitpid(h->pid, &status, 0);
				break;
			}
			poll(p, (nfds_t)n, 100);
			output_read(h->out, p, n);
		}
		output_drain(h->out);
	}
	handler_free(h);
}
