/* beanstalkd beside ebb in the cycle benchmark (bench/cycle.c): a
 * throw-away `beanstalkd` (Debian's, scripts/deps.sh installs it) on a
 * free loopback port, its binlog in a temporary directory and fsynced on
 * every write (`-b DIR -f 0`: as ebb's commit and Redis' `appendfsync
 * always`), and the job cycle of its protocol (doc/protocol.txt in
 * beanstalkd's source), spoken here over a plain socket since it is a few
 * text lines: `put` the job, `reserve-with-timeout` it (the lease: the
 * job comes back to the queue if its worker dies), `delete` it (the
 * complete). Header-only like bench.h. */
#ifndef EBB_BENCH_BEANSTALK_H
#define EBB_BENCH_BEANSTALK_H

#include "bench.h"

struct beanstalk {
	pid_t pid;
	int port;
	char dir[64];
};

/* Starts beanstalkd; 0 once it accepts connections, -1 (its output on
 * stderr) if it does not within 10 s, e.g. where it is not installed. */
static inline int beanstalk_start(struct beanstalk *bs)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char log[128], port[16], line[512];
	double deadline;
	FILE *f;

	memset(bs, 0, sizeof *bs);
	snprintf(bs->dir, sizeof bs->dir, "%s/ebb-bench-beanstalk.XXXXXX", tmp);
	if (!mkdtemp(bs->dir) || (bs->port = free_port()) < 0) {
		perror("bench: temporary directory or port for beanstalkd");
		return -1;
	}
	snprintf(log, sizeof log, "%s/beanstalkd.log", bs->dir);
	snprintf(port, sizeof port, "%d", bs->port);
	bs->pid = fork();
	if (bs->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("beanstalkd", "beanstalkd", "-l", "127.0.0.1", "-p", port, "-b", bs->dir, "-f", "0",
		       (char *)NULL);
		fprintf(stderr, "exec beanstalkd: %s (scripts/deps.sh installs beanstalkd)\n", strerror(errno));
		_exit(127);
	}
	for (deadline = now_s() + 10; now_s() < deadline; sleep_s(0.01)) {
		int status;
		if (waitpid(bs->pid, &status, WNOHANG) == bs->pid) {
			bs->pid = 0;
			break;
		}
		if (port_open(bs->port))
			return 0;
	}
	fprintf(stderr, "bench: beanstalkd did not start on port %d; its output:\n", bs->port);
	if ((f = fopen(log, "r"))) {
		while (fgets(line, sizeof line, f))
			fputs(line, stderr);
		fclose(f);
	}
	return -1;
}

static inline void beanstalk_stop(struct beanstalk *bs)
{
	if (bs->pid > 0) {
		kill(bs->pid, SIGTERM);
		waitpid(bs->pid, NULL, 0);
		bs->pid = 0;
	}
	if (bs->dir[0])
		remove_tree(bs->dir);
	bs->dir[0] = '\0';
}

/* One client's connection: struct wire's socket and buffer, with the
 * protocol's framing instead of HTTP's. */
struct beanstalk_client {
	struct wire w;
	long next_id; /* for unique job bodies */
	int n;        /* the client's number */
	char error[256];
};

static inline int beanstalk_client_open(struct beanstalk_client *bc, int port, int n)
{
	bc->n = n;
	bc->next_id = 0;
	if (wire_open(&bc->w, port, 0) != 0) {
		snprintf(bc->error, sizeof bc->error, "connect: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static inline void beanstalk_client_close(struct beanstalk_client *bc) { wire_close(&bc->w); }

/* Sends a request of len bytes and reads its reply whole: a line, and
 * for RESERVED the job's bytes and their CRLF after it. The reply,
 * NUL-terminated, in bc->w.in; 0, or -1 (in bc->error). */
static inline int beanstalk_call(struct beanstalk_client *bc, const char *req, int len)
{
	struct wire *w = &bc->w;
	char *eol = NULL;
	size_t need = 0;

	w->len = 0;
	w->in[0] = '\0';
	if (write(w->fd, req, (size_t)len) != len) {
		snprintf(bc->error, sizeof bc->error, "write: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n;
		if (!eol && (eol = strstr(w->in, "\r\n"))) {
			unsigned long bytes;
			need = (size_t)(eol + 2 - w->in);
			if (sscanf(w->in, "RESERVED %*u %lu", &bytes) == 1)
				need += bytes + 2;
		}
		if (eol && w->len >= need)
			return 0;
		if (w->len == sizeof w->in - 1 ||
		    (n = read(w->fd, w->in + w->len, sizeof w->in - 1 - w->len)) <= 0) {
			snprintf(bc->error, sizeof bc->error, "read: %s", w->len ? "reply too long" : "connection closed");
			return -1;
		}
		w->len += (size_t)n;
		w->in[w->len] = '\0';
	}
}

/* One put, reserve, delete: 1 when a job was completed, 0 when the
 * reserve found none within its wait, -1 on an error (in bc->error). */
static inline int beanstalk_cycle(struct beanstalk_client *bc)
{
	char job[96], req[192];
	unsigned long long id;
	int len, n;

	/* A job as small as ebb's: an id and a command. */
	len = snprintf(job, sizeof job, "{\"id\":\"%d-%ld\",\"command\":[\"true\"]}", bc->n, bc->next_id++);
	/* Priority 0, no delay, 600 s to run before it is given to another. */
	n = snprintf(req, sizeof req, "put 0 0 600 %d\r\n%s\r\n", len, job);
	if (beanstalk_call(bc, req, n) != 0)
		return -1;
	if (strncmp(bc->w.in, "INSERTED ", 9) != 0)
		goto unexpected;
	if (beanstalk_call(bc, "reserve-with-timeout 5\r\n", 24) != 0)
		return -1;
	if (strncmp(bc->w.in, "TIMED_OUT\r\n", 11) == 0)
		return 0;
	if (sscanf(bc->w.in, "RESERVED %llu", &id) != 1)
		goto unexpected;
	n = snprintf(req, sizeof req, "delete %llu\r\n", id);
	if (beanstalk_call(bc, req, n) != 0)
		return -1;
	if (strcmp(bc->w.in, "DELETED\r\n") != 0)
		goto unexpected;
	return 1;
unexpected:
	snprintf(bc->error, sizeof bc->error, "unexpected reply: %.200s", bc->w.in);
	return -1;
}

#endif
