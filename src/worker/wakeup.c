/* The watch of a running job's lease, in a thread (see wakeup.h). */
#include "worker/wakeup.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"

/* How long serve holds a watch with no news: under the idle timeouts of
 * the proxies usually in between. */
#define WATCH_WAIT_S 25
#define BACKOFF_MAX_MS 5000
/* A job over within this needs no wake-up (its end tells serve as soon):
 * the watch begins after it, so that short jobs cost serve no call. */
#define FIRST_WATCH_AFTER_MS 1000

struct wakeup {
	struct client client; /* the thread's own */
	pthread_t thread;
	int64_t job, token;
	volatile sig_atomic_t quit; /* the client's abort flag: set by wakeup_stop */
	int news[2];                /* the thread writes a byte on news[1] when it has news */
	int quit_pipe[2];           /* wakeup_stop writes one to end the thread's backoff */
	/* Written by the thread before its byte, read after it. */
	char action[16], why[440];
};

/* One byte on a pipe of ours: only a full pipe refuses it, and a byte
 * there already says the same. */
static void poke(int fd)
{
	ssize_t n = write(fd, "!", 1);
	(void)n;
}

static int pipe_nonblocking(int fd[2])
{
	if (pipe(fd) != 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		fcntl(fd[i], F_SETFD, FD_CLOEXEC);
		fcntl(fd[i], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

/* Waits ms, or until wakeup_stop. */
static void backoff(struct wakeup *u, int64_t ms)
{
	struct pollfd p = {.fd = u->quit_pipe[0], .events = POLLIN};

	poll(&p, 1, (int)ms);
}

static void *watch(void *arg)
{
	struct wakeup *u = arg;
	char path[128];
	int64_t pause_ms = 250;

	snprintf(path, sizeof path, "/v1/jobs/%lld/watch?token=%lld&wait=%d", (long long)u->job,
		 (long long)u->token, WATCH_WAIT_S);
	backoff(u, FIRST_WATCH_AFTER_MS);
	while (!u->quit) {
		json_t *reply = NULL;
		int64_t asked_ms = clock_monotonic_ms();
		int status = client_call(&u->client, "GET", path, NULL, &reply);
		const char *action = json_string_value(json_object_get(reply, "action"));

		if (status == 200 && action && strcmp(action, "none") != 0) {
			const char *why = json_string_value(json_object_get(reply, "reason"));
			snprintf(u->action, sizeof u->action, "%s", action);
			snprintf(u->why, sizeof u->why, "%s", why ? why : action);
			json_decref(reply);
			poke(u->news[1]);
			return NULL;
		}
		json_decref(reply);
		if (status == 200) {
			/* A serve that answers at once (it is stopping) is asked
			 * again a second later, not in a tight loop. */
			pause_ms = 250;
			if (clock_monotonic_ms() - asked_ms < 1000)
				backoff(u, 1000 - (clock_monotonic_ms() - asked_ms));
			continue;
		}
		/* serve out of reach, restarting, or an older one without the
		 * route: the heartbeats go on meanwhile. */
		if (!u->quit)
			backoff(u, pause_ms);
		pause_ms = pause_ms * 2 < BACKOFF_MAX_MS ? pause_ms * 2 : BACKOFF_MAX_MS;
	}
	return NULL;
}

struct wakeup *wakeup_start(const struct client_args *conn, int current, int64_t job, int64_t token)
{
	struct wakeup *u = xcalloc(1, sizeof *u);
	sigset_t all, old;
	int rc;

	u->job = job;
	u->token = token;
	u->news[0] = u->news[1] = u->quit_pipe[0] = u->quit_pipe[1] = -1;
	if (client_init(&u->client, conn->server, conn->token, conn->cacert) != 0 ||
	    client_interruptible(&u->client) != 0 || pipe_nonblocking(u->news) != 0 ||
	    pipe_nonblocking(u->quit_pipe) != 0) {
		log_warn("no wake-up for the job: the heartbeat tells instead", "job=%lld error=\"%s\"",
			 (long long)job, u->client.err[0] ? u->client.err : "no pipe");
		goto fail;
	}
	client_use(&u->client, current);
	u->client.abort_flag = &u->quit;
	/* Signals stay the worker's main thread's, whose handlers wake its poll. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&u->thread, NULL, watch, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		return u;
	log_warn("no wake-up for the job: the heartbeat tells instead", "job=%lld error=\"no thread\"", (long long)job);
fail:
	for (int i = 0; i < 2; i++) {
		if (u->news[i] >= 0)
			close(u->news[i]);
		if (u->quit_pipe[i] >= 0)
			close(u->quit_pipe[i]);
	}
	client_free(&u->client);
	free(u);
	return NULL;
}

int wakeup_fd(const struct wakeup *u) { return u ? u->news[0] : -1; }

const char *wakeup_news(const struct wakeup *u, const char **why)
{
	char byte;

	if (!u || read(u->news[0], &byte, 1) != 1)
		return NULL;
	*why = u->why;
	return u->action;
}

void wakeup_stop(struct wakeup *u)
{
	if (!u)
		return;
	u->quit = 1;
	client_interrupt(&u->client);
	poke(u->quit_pipe[1]);
	pthread_join(u->thread, NULL);
	for (int i = 0; i < 2; i++) {
		close(u->news[i]);
		close(u->quit_pipe[i]);
	}
	client_free(&u->client);
	free(u);
}
