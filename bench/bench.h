/* What the benchmarks share: a throw-away `ebb serve` on a free loopback
 * port in a temporary directory, readings from /proc and perf, a libcurl
 * caller for the odd request, a plain-socket HTTP client for load, and
 * medians. Header-only because the Makefile builds each bench/NAME.c into a
 * program of its own. Every program prints a Markdown section of
 * docs/BENCHMARKS.md on stdout and its progress on stderr. */
#ifndef EBB_BENCH_H
#define EBB_BENCH_H

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : def;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (n >= 1); v is sorted in place. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The q-quantile (0..1) of n values, nearest rank; v is sorted in place. */
static inline double quantile(double *v, int n, double q)
{
	int i = (int)(q * n + 0.999999) - 1;

	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* ---- /proc ---- */

/* User plus system CPU seconds of a process, all its threads. */
static inline double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime = 0, stime = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the command, which may hold spaces, in parentheses:
	 * state is the 3rd field, utime the 14th and stime the 15th. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Seconds the main thread of pid has run, and has waited, runnable, for a
 * CPU that others held (/proc/PID/schedstat). */
static inline int proc_sched_s(pid_t pid, double *run, double *wait)
{
	char path[64];
	unsigned long long r, w;
	FILE *f;
	int n;

	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fscanf(f, "%llu %llu", &r, &w);
	fclose(f);
	if (n != 2)
		return -1;
	*run = (double)r / 1e9;
	*wait = (double)w / 1e9;
	return 0;
}

/* CPU seconds the whole machine spent busy (all cores), from /proc/stat:
 * what the benchmark's own processes did not use was used by others. */
static inline double machine_busy_s(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	/* user nice system idle iowait irq softirq steal */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

/* A "Key:  N kB"-style line of a status file, as a number; -1 if absent. */
static inline long status_field(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static inline long proc_status(pid_t pid, const char *key)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	return status_field(path, key);
}

/* Context switches, voluntary and not, summed over every thread: each one
 * is a time the process went to sleep or was put off the CPU. */
static inline long proc_ctx_switches(pid_t pid, int *nthreads)
{
	char path[300];
	struct dirent *e;
	long sum = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	*nthreads = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, e->d_name);
		sum += status_field(path, "voluntary_ctxt_switches") +
		       status_field(path, "nonvoluntary_ctxt_switches");
		(*nthreads)++;
	}
	closedir(d);
	return sum;
}

/* ---- a throw-away serve ---- */

struct serve {
	pid_t pid;
	int port;
	char dir[64];   /* temporary: config, log, data */
	char url[64];   /* http://127.0.0.1:PORT */
};

static inline void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[512];

	if (d) {
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
				remove_tree(sub);
		}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* A port free on 127.0.0.1 now. serve logs the port it bound to at level
 * info only, and the benchmarks run it at warn, so they choose the port. */
static inline int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Can we connect to 127.0.0.1:port? */
static inline int port_open(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The serve's log so far, on stderr. */
static inline void serve_print_log(const struct serve *s)
{
	char path[128], line[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/serve.log", s->dir);
	if (!(f = fopen(path, "r")))
		return;
	fprintf(stderr, "bench: the log of serve on port %d:\n", s->port);
	while (fgets(line, sizeof line, f))
		fputs(line, stderr);
	fclose(f);
}

/* Starts EBB_BIN serve with log_level warn on a free loopback port and
 * waits until it accepts connections. extra: more config lines, appended
 * as they are (may be ""). */
static inline int serve_start(struct serve *s, const char *extra)
{
	const char *bin = getenv("EBB_BIN") ? getenv("EBB_BIN") : "build/ebb";
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char conf[128], log[128];
	double deadline;
	FILE *f;

	memset(s, 0, sizeof *s);
	snprintf(s->dir, sizeof s->dir, "%s/ebb-bench.XXXXXX", tmp);
	if (!mkdtemp(s->dir) || (s->port = free_port()) < 0) {
		perror("bench: temporary directory or port");
		return -1;
	}
	snprintf(conf, sizeof conf, "%s/ebb.conf", s->dir);
	snprintf(log, sizeof log, "%s/serve.log", s->dir);
	if (!(f = fopen(conf, "w")))
		return -1;
	fprintf(f, "[server]\nlisten = 127.0.0.1:%d\ndata_dir = %s/data\nlog_level = warn\n"
		   "max_connections = 4096\n%s", s->port, s->dir, extra);
	fclose(f);
	s->pid = fork();
	if (s->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, "ebb", "serve", "-c", conf, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
	for (deadline = now_s() + 10; now_s() < deadline; sleep_s(0.01)) {
		int status;
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		if (port_open(s->port))
			return 0;
	}
	fprintf(stderr, "bench: %s serve did not start on port %d\n", bin, s->port);
	serve_print_log(s);
	return -1;
}

static inline void serve_stop(struct serve *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	if (s->dir[0])
		remove_tree(s->dir);
	s->dir[0] = '\0';
}

/* ---- HTTP through libcurl: one kept-alive connection per struct http ---- */

struct http {
	CURL *curl;
	struct curl_slist *headers;
	char base[64];
	char url[256];
	char body[16384]; /* the last reply, truncated, NUL-terminated */
	size_t len;
};

static inline size_t http_collect(char *data, size_t size, size_t n, void *arg)
{
	struct http *h = arg;
	size_t room = sizeof h->body - 1 - h->len, take = size * n < room ? size * n : room;

	memcpy(h->body + h->len, data, take);
	h->len += take;
	h->body[h->len] = '\0';
	return size * n;
}

static inline int http_init(struct http *h, const char *base)
{
	memset(h, 0, sizeof *h);
	snprintf(h->base, sizeof h->base, "%s", base);
	if (!(h->curl = curl_easy_init()))
		return -1;
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT, 120L);
	return 0;
}

static inline void http_free(struct http *h)
{
	curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
}

/* POST body (or GET when body is NULL) to path; the HTTP status, or -1. */
static inline int http_call(struct http *h, const char *path, const char *body)
{
	long status = 0;

	snprintf(h->url, sizeof h->url, "%s%s", h->base, path);
	h->len = 0;
	h->body[0] = '\0';
	curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
	if (body)
		curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	else
		curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
	if (curl_easy_perform(h->curl) != CURLE_OK)
		return -1;
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	return (int)status;
}

/* The integer after the first "key": in a reply; -1 if absent. */
static inline long long reply_int(const char *text, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, "\"%s\":", key);
	p = strstr(text, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* ---- fsync counting through perf's syscall tracepoints ---- */

struct fsync_count {
	pid_t perf;
	char out[96];
};

/* Starts counting the fsync and fdatasync calls of the n processes in
 * pids. perf needs some milliseconds to attach, so a count taken over a
 * few seconds is short by well under 1%. */
static inline void fsync_count_start(struct fsync_count *c, const pid_t *pids, int n)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char list[1024] = "";

	snprintf(c->out, sizeof c->out, "%s/ebb-bench-perf.%d", tmp, (int)getpid());
	for (int i = 0, len = 0; i < n && len < (int)sizeof list - 16; i++)
		len += snprintf(list + len, sizeof list - (size_t)len, "%s%d", i ? "," : "", (int)pids[i]);
	c->perf = fork();
	if (c->perf == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execlp("perf", "perf", "stat", "-x", ",", "-o", c->out, "-e",
		       "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync", "-p", list, (char *)NULL);
		_exit(127);
	}
}

/* The calls counted since the start; -1 when perf is missing or may not
 * trace here. */
static inline long fsync_count_stop(struct fsync_count *c)
{
	char line[256];
	long sum = 0;
	int found = 0, status;
	FILE *f;

	if (c->perf <= 0)
		return -1;
	kill(c->perf, SIGINT);
	waitpid(c->perf, &status, 0);
	if (!(f = fopen(c->out, "r")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "syscalls:sys_enter_f") && line[0] >= '0' && line[0] <= '9') {
			sum += strtol(line, NULL, 10);
			found++;
		}
	}
	fclose(f);
	unlink(c->out);
	return found == 2 ? sum : -1;
}

/* ---- HTTP/1.1 over a plain socket: the cheapest client, for load ---- */

/* One kept-alive connection to serve. libcurl costs about as much CPU per
 * request as serve itself, and the load shares serve's two cores, so the
 * load generators speak the little HTTP that serve's replies need: a
 * request written in one call, a reply known complete by Content-Length. */
struct wire {
	int fd;
	int tag; /* the caller's */
	size_t len;
	char in[16384];
};

static inline int wire_open(struct wire *w, int port, int nonblocking)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;

	w->len = 0;
	if ((w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(w->fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(w->fd);
		w->fd = -1;
		return -1;
	}
	setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (nonblocking)
		fcntl(w->fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static inline void wire_close(struct wire *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* Sends a POST with body, or a GET when body is NULL; small enough to fit
 * any socket buffer in one write. */
static inline int wire_send(struct wire *w, const char *path, const char *body)
{
	char req[1024];
	int n = body ? snprintf(req, sizeof req,
				"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
				"Content-Length: %zu\r\n\r\n%s",
				path, strlen(body), body)
		     : snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);

	w->len = 0;
	return n < (int)sizeof req && write(w->fd, req, (size_t)n) == n ? 0 : -1;
}

/* Reads what has arrived: 1 when the whole reply is in (its status in
 * *status, its NUL-terminated body at *body), 0 when more is to come, -1
 * when the connection failed or closed. */
static inline int wire_read(struct wire *w, int *status, const char **body)
{
	ssize_t n = read(w->fd, w->in + w->len, sizeof w->in - 1 - w->len);
	char *end, *cl;
	size_t head, blen;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1;
	if (n > 0)
		w->len += (size_t)n;
	w->in[w->len] = '\0';
	if (!(end = strstr(w->in, "\r\n\r\n")))
		return w->len == sizeof w->in - 1 ? -1 : 0;
	head = (size_t)(end + 4 - w->in);
	for (cl = w->in; (cl = strchr(cl, '\n')) && cl < end; cl++) {
		if (strncasecmp(cl + 1, "content-length:", 15) == 0)
			break;
	}
	blen = cl && cl < end ? (size_t)strtoul(cl + 16, NULL, 10) : 0;
	if (w->len < head + blen)
		return w->len == sizeof w->in - 1 ? -1 : 0;
	*status = atoi(w->in + 9);
	*body = w->in + head;
	return 1;
}

/* A whole request and reply on a blocking connection: the status, or -1. */
static inline int wire_call(struct wire *w, const char *path, const char *body, const char **reply)
{
	int status, r;

	if (wire_send(w, path, body) != 0)
		return -1;
	while ((r = wire_read(w, &status, reply)) == 0)
		;
	return r < 0 ? -1 : status;
}

/* A parked worker's lease request on w: one GPU, waiting up to a minute
 * (benchmarks 3 and 8's long-pollers). */
static inline int wire_lease_parked(struct wire *w)
{
	char body[128];

	snprintf(body, sizeof body, "{\"worker\":\"w%d\",\"wait_s\":60,\"gpus\":1,\"lease_s\":3600}", w->tag);
	return wire_send(w, "/v1/lease", body);
}

/* The stats reply's waiting_workers at url, polled until it reaches n
 * or timeout_s pass: 0, or -1 after saying so as who. */
static inline int wait_parked(const char *who, const char *url, int n, double timeout_s)
{
	struct http h;
	long long got = -1;

	http_init(&h, url);
	for (double deadline = now_s() + timeout_s; now_s() < deadline; sleep_s(0.05)) {
		if (http_call(&h, "/v1/stats", NULL) == 200 && (got = reply_int(h.body, "waiting_workers")) >= n)
			break;
	}
	http_free(&h);
	if (got < n) {
		fprintf(stderr, "%s: only %lld of %d workers parked\n", who, got, n);
		return -1;
	}
	return 0;
}

/* How a goal reads in the report. */
static inline const char *goal_word(int met) { return met ? "**pass**" : "**miss**"; }

#endif
