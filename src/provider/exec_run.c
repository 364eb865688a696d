/* See exec_run.h. A run is done when its process has exited and its
 * standard output and error are closed; a process that outlives its
 * timeout is sent SIGTERM, and SIGKILL EXEC_KILL_MS later, each to its
 * whole process group (a script's own children go with it). */
#include "provider/exec_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/mem.h"
#include "common/timer.h"

#define EXEC_KILL_MS 5000
#define ERR_KEEP 2048 /* the tail of standard error kept for its last line */

struct run {
	struct exec_runner *x;
	char *program, *arg, *input;
	size_t input_len, written;
	exec_done done;
	void *done_arg;
	pid_t pid; /* 0: waiting its turn */
	int fd_in, fd_out, fd_err;
	struct event *ev_in, *ev_out, *ev_err, *timer;
	int exited, killing;
	struct exec_result result;
	size_t out_cap;
	char err_tail[ERR_KEEP];
	size_t err_len;
	struct run *next;
};

struct exec_runner {
	struct event_base *base;
	int64_t timeout_ms;
	int concurrency, running;
	struct event *sigchld;
	struct run *runs; /* running ones and waiting ones, in arrival order */
};

static void start(struct run *r);

static void close_fd(int *fd, struct event **ev)
{
	if (*ev) {
		event_free(*ev);
		*ev = NULL;
	}
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void drop(struct run *r)
{
	struct exec_runner *x = r->x;

	for (struct run **p = &x->runs; *p; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			break;
		}
	}
	close_fd(&r->fd_in, &r->ev_in);
	close_fd(&r->fd_out, &r->ev_out);
	close_fd(&r->fd_err, &r->ev_err);
	if (r->timer)
		event_free(r->timer);
	free(r->result.out);
	free(r->program);
	free(r->arg);
	free(r->input);
	free(r);
}

/* The next waiting runs start while there is room. */
static void start_waiting(struct exec_runner *x)
{
	for (struct run *r = x->runs; r && x->running < x->concurrency; r = r->next) {
		if (!r->pid && !r->exited)
			start(r);
	}
}

static void last_line(struct run *r)
{
	char *end = r->err_tail + r->err_len, *line;

	while (end > r->err_tail && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	*end = '\0';
	line = strrchr(r->err_tail, '\n');
	line = line ? line + 1 : r->err_tail;
	if (*line)
		snprintf(r->result.err_line, sizeof r->result.err_line, "%.299s", line);
}

static void maybe_done(struct run *r)
{
	struct exec_runner *x = r->x;

	if (!r->exited || r->fd_out >= 0 || r->fd_err >= 0)
		return;
	if (r->pid > 0)
		x->running--;
	if (!r->result.err_line[0])
		last_line(r);
	r->done(r->done_arg, &r->result);
	drop(r);
	start_waiting(x);
}

static void on_input(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	ssize_t n = write(fd, r->input + r->written, r->input_len - r->written);

	(void)what;
	if (n > 0)
		r->written += (size_t)n;
	/* Written, or the program will not read it (EPIPE): its input ends. */
	if (r->written == r->input_len || (n < 0 && errno != EAGAIN && errno != EINTR))
		close_fd(&r->fd_in, &r->ev_in);
}

static void on_output(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof buf);

	(void)what;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd(&r->fd_out, &r->ev_out);
		maybe_done(r);
		return;
	}
	if (r->result.out_len + (size_t)n > EXEC_OUT_MAX) {
		r->result.out_too_long = 1;
		return; /* read and dropped, so the program is not stuck writing */
	}
	if (r->result.out_len + (size_t)n + 1 > r->out_cap) {
		size_t cap = (r->result.out_len + (size_t)n + 1) * 2;
		char *grown = mem_realloc(r->result.out, cap);
		if (!grown) {
			r->result.out_too_long = 1;
			return;
		}
		r->result.out = grown;
		r->out_cap = cap;
	}
	memcpy(r->result.out + r->result.out_len, buf, (size_t)n);
	r->result.out_len += (size_t)n;
	r->result.out[r->result.out_len] = '\0';
}

static void on_error_output(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);

	(void)what;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd(&r->fd_err, &r->ev_err);
		maybe_done(r);
		return;
	}
	/* Only the tail matters: keep the last ERR_KEEP - 1 bytes. */
	if ((size_t)n >= ERR_KEEP - 1) {
		memcpy(r->err_tail, buf + n - (ERR_KEEP - 1), ERR_KEEP - 1);
		r->err_len = ERR_KEEP - 1;
		return;
	}
	if (r->err_len + (size_t)n > ERR_KEEP - 1) {
		size_t drop_n = r->err_len + (size_t)n - (ERR_KEEP - 1);
		memmove(r->err_tail, r->err_tail + drop_n, r->err_len - drop_n);
		r->err_len -= drop_n;
	}
	memcpy(r->err_tail + r->err_len, buf, (size_t)n);
	r->err_len += (size_t)n;
}

/* The timeout: SIGTERM, then SIGKILL; an exited program whose output
 * some child of its keeps open is done now. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;

	(void)fd;
	(void)what;
	if (r->exited) {
		close_fd(&r->fd_out, &r->ev_out);
		close_fd(&r->fd_err, &r->ev_err);
		maybe_done(r);
		return;
	}
	r->result.timed_out = 1;
	kill(-r->pid, r->killing ? SIGKILL : SIGTERM);
	if (!r->killing) {
		r->killing = 1;
		timer_add_ms(r->timer, EXEC_KILL_MS);
	}
}

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct exec_runner *x = arg;
	struct run *r, *next;
	int status;

	(void)sig;
	(void)what;
	for (r = x->runs; r; r = next) {
		next = r->next;
		if (r->pid <= 0 || r->exited || waitpid(r->pid, &status, WNOHANG) != r->pid)
			continue;
		r->exited = 1;
		r->result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		/* Its process group may linger with the pipes: bounded too. */
		if (!r->result.timed_out)
			timer_add_ms(r->timer, 1000);
		maybe_done(r);
	}
}

/* Both ends close on exec: a program inherits only the end dup2() gives
 * it, not its siblings' pipes. */
static int cloexec_pipe(int fds[2])
{
	if (pipe(fds) != 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* Could not start: done from the loop with why, as an exit 127. */
static void cannot_start(struct run *r, const char *why)
{
	snprintf(r->result.err_line, sizeof r->result.err_line, "%.200s: cannot run: %.80s", r->program, why);
	r->result.status = 127;
	r->exited = 1;
	r->pid = -1; /* never counted as running */
	close_fd(&r->fd_in, &r->ev_in);
	close_fd(&r->fd_out, &r->ev_out);
	close_fd(&r->fd_err, &r->ev_err);
	timer_add_ms(r->timer, 0);
}

static void start(struct run *r)
{
	struct exec_runner *x = r->x;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};

	if (cloexec_pipe(in) != 0 || cloexec_pipe(out) != 0 || cloexec_pipe(err) != 0) {
		int e = errno;
		for (int k = 0; k < 2; k++) {
			if (in[k] >= 0)
				close(in[k]);
			if (out[k] >= 0)
				close(out[k]);
			if (err[k] >= 0)
				close(err[k]);
		}
		cannot_start(r, strerror(e));
		return;
	}
	r->pid = fork();
	if (r->pid < 0) {
		int e = errno;
		close(in[0]), close(in[1]), close(out[0]), close(out[1]), close(err[0]), close(err[1]);
		cannot_start(r, strerror(e));
		return;
	}
	if (r->pid == 0) {
		char *argv[] = {r->program, r->arg, NULL};
		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execv(r->program, argv);
		fprintf(stderr, "%s: cannot run: %s\n", r->program, strerror(errno));
		_exit(127);
	}
	/* Also in the parent: a kill of the group must not race the child's
	 * own setpgid. */
	setpgid(r->pid, r->pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	r->fd_in = in[1];
	r->fd_out = out[0];
	r->fd_err = err[0];
	fcntl(r->fd_in, F_SETFL, O_NONBLOCK);
	fcntl(r->fd_out, F_SETFL, O_NONBLOCK);
	fcntl(r->fd_err, F_SETFL, O_NONBLOCK);
	r->ev_in = event_new(x->base, r->fd_in, EV_WRITE | EV_PERSIST, on_input, r);
	r->ev_out = event_new(x->base, r->fd_out, EV_READ | EV_PERSIST, on_output, r);
	r->ev_err = event_new(x->base, r->fd_err, EV_READ | EV_PERSIST, on_error_output, r);
	event_add(r->ev_in, NULL);
	event_add(r->ev_out, NULL);
	event_add(r->ev_err, NULL);
	timer_add_ms(r->timer, x->timeout_ms);
	x->running++;
}

int exec_run(struct exec_runner *x, const char *program, const char *arg, const char *input, exec_done done,
	     void *done_arg)
{
	struct run *r = mem_calloc(1, sizeof *r), **tail;

	if (!r)
		return -1;
	r->x = x;
	r->program = mem_strdup(program);
	r->arg = mem_strdup(arg);
	r->input = mem_strdup(input);
	r->timer = evtimer_new(x->base, on_timer, r);
	if (!r->program || !r->arg || !r->input || !r->timer) {
		free(r->program);
		free(r->arg);
		free(r->input);
		if (r->timer)
			event_free(r->timer);
		free(r);
		return -1;
	}
	r->input_len = strlen(input);
	r->done = done;
	r->done_arg = done_arg;
	r->fd_in = r->fd_out = r->fd_err = -1;
	for (tail = &x->runs; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	start_waiting(x);
	return 0;
}

struct exec_runner *exec_runner_new(struct event_base *base, int64_t timeout_ms, int concurrency)
{
	struct exec_runner *x = mem_calloc(1, sizeof *x);

	if (!x)
		return NULL;
	x->base = base;
	x->timeout_ms = timeout_ms;
	x->concurrency = concurrency > 0 ? concurrency : 1;
	x->sigchld = evsignal_new(base, SIGCHLD, on_sigchld, x);
	event_add(x->sigchld, NULL);
	return x;
}

void exec_runner_free(struct exec_runner *x)
{
	if (!x)
		return;
	while (x->runs) {
		struct run *r = x->runs;
		if (r->pid > 0 && !r->exited) {
			kill(-r->pid, SIGKILL);
			waitpid(r->pid, NULL, 0);
		}
		r->result.cancelled = 1;
		r->done(r->done_arg, &r->result);
		drop(r);
	}
	event_free(x->sigchld);
	free(x);
}
