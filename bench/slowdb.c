/* Benchmark 7: a slow database. serve runs one thread, and with [store]
 * kind = postgres every statement is a round trip to the database server
 * that the thread waits for (docs/ARCHITECTURE.md, "A slow database").
 * This measures what the round trip's time does to it: serve on a
 * PostgreSQL 15 (a throwaway server, scripts/pg.sh) reached through a
 * proxy in this program that holds what it forwards for half of D in
 * each direction, so that every round trip takes D more, for D = 0, 1, 10
 * and 100 ms. (tc netem in a network namespace is the usual tool; the
 * kernel of the machines here has no netem qdisc, "Specified qdisc kind
 * is unknown", so the delay is made in user space. ebb's calls are one
 * request, one reply, never pipelined: holding each piece in turn delays
 * each round trip by D and no more.) Under a load of clients that cycle
 * submit → lease → complete, the jobs/s, and from one more client on its
 * own connection, the time GET /healthz takes, which serve answers from
 * memory: the time it waits for the loop.
 *
 * Environment: BENCH_SLOWDB_CLIENTS (16), BENCH_SLOWDB_S (10, seconds of
 * load per delay), PG_BIN (scripts/pg.sh's), EBB_BIN, EBB_SRC (the source
 * tree, for scripts/pg.sh; default: the working directory). */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/un.h>

#include "bench.h"
#include "pg.h"

#define MAX_PROBES 100000

/* -1: no proxy, serve on the server's unix socket (the baseline). */
static const int delays_ms[] = {-1, 0, 1, 10, 100};
#define NDELAYS (int)(sizeof delays_ms / sizeof delays_ms[0])

/* ---- the delaying proxy: TCP on loopback to the server's unix socket ---- */

struct proxy {
	int listen_fd;
	char socket_path[108]; /* sun_path's size */
	atomic_int half_delay_us;
};

struct pipe_half {
	int from, to;
	struct proxy *p;
};

/* Forwards what from sends to `to`, each piece half the delay after it
 * was read; then shuts the other way down. */
static void *forward(void *arg)
{
	struct pipe_half *h = arg;
	struct sched_param rt = {.sched_priority = 1};
	char buf[65536];
	ssize_t n;

	/* The machine is shared: a piece must not wait for a core on top of
	 * its delay. Real-time priority needs root; without it, the proxy's
	 * own cost (the second row) shows. */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
	while ((n = read(h->from, buf, sizeof buf)) > 0) {
		double due = now_s() + atomic_load(&h->p->half_delay_us) / 1e6;
		ssize_t off = 0;
		if (due > now_s())
			sleep_s(due - now_s());
		while (off < n) {
			ssize_t w = write(h->to, buf + off, (size_t)(n - off));
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	shutdown(h->to, SHUT_WR);
	shutdown(h->from, SHUT_RD);
	free(h);
	return NULL;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(a.sun_path, path, sizeof a.sun_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void start_half(struct proxy *p, int from, int to)
{
	struct pipe_half *h = malloc(sizeof *h);
	pthread_t t;

	*h = (struct pipe_half){from, to, p};
	if (pthread_create(&t, NULL, forward, h) == 0)
		pthread_detach(t);
	else
		free(h);
}

/* Two threads per connection: serve keeps one connection open. */
static void *accept_loop(void *arg)
{
	struct proxy *p = arg;
	int c, s;

	while ((c = accept(p->listen_fd, NULL, NULL)) >= 0) {
		int one = 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if ((s = connect_unix(p->socket_path)) < 0) {
			close(c);
			continue;
		}
		start_half(p, c, s);
		start_half(p, s, c);
	}
	return NULL;
}

static int proxy_start(struct proxy *p, int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	pthread_t t;

	if ((p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(p->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(p->listen_fd, 16) != 0 ||
	    getsockname(p->listen_fd, (struct sockaddr *)&a, &len) != 0 ||
	    pthread_create(&t, NULL, accept_loop, p) != 0)
		return -1;
	pthread_detach(t);
	*port = ntohs(a.sin_port);
	return 0;
}

/* ---- the load and the probe ---- */

static atomic_int stop, errors;
static atomic_long cycles;

static void *client_main(void *arg)
{
	const struct serve *s = arg;
	struct wire w;
	const char *reply;
	char path[96], body[96];

	if (wire_open(&w, s->port, 0) != 0) {
		atomic_fetch_add(&errors, 1);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		if (wire_call(&w, "/v1/jobs", "{\"command\":[\"true\"]}", &reply) != 201 ||
		    wire_call(&w, "/v1/lease", "{\"worker\":\"w\",\"wait_s\":1,\"gpus\":1,\"lease_s\":600}", &reply) !=
			    200) {
			atomic_fetch_add(&errors, 1);
			break;
		}
		if (strstr(reply, "\"job\":null"))
			continue;
		snprintf(path, sizeof path, "/v1/jobs/%lld/complete", reply_int(reply, "id"));
		snprintf(body, sizeof body, "{\"lease_token\":%lld}", reply_int(reply, "token"));
		if (wire_call(&w, path, body, &reply) != 200) {
			atomic_fetch_add(&errors, 1);
			break;
		}
		atomic_fetch_add(&cycles, 1);
	}
	wire_close(&w);
	return NULL;
}

struct result {
	double jobs_s, p50_ms, p99_ms, max_ms;
	int probes;
};

/* One delay: serve on its own database behind the proxy, the load for
 * seconds, /healthz timed every 20 ms meanwhile. */
static int measure(struct proxy *p, int proxy_port, int delay_ms, int nclients, double seconds,
		   struct result *out)
{
	static double probe_ms[MAX_PROBES];
	char extra[1600], db[32];
	struct serve s;
	struct wire w;
	const char *reply;
	pthread_t threads[256];
	double t0, until;
	int n = 0, rc = -1;
	long c0;

	snprintf(db, sizeof db, "slowdb_%d", delay_ms + 1);
	if (pg_create(db) != 0)
		return -1;
	atomic_store(&p->half_delay_us, 0); /* the schema made at full speed */
	if (delay_ms < 0)
		snprintf(extra, sizeof extra, "[store]\nkind = postgres\n[postgres]\nurl = %s dbname=%s\n", pg_url, db);
	else
		snprintf(extra, sizeof extra,
			 "[store]\nkind = postgres\n[postgres]\nurl = host=127.0.0.1 port=%d user=ebb dbname=%s\n",
			 proxy_port, db);
	if (serve_start(&s, extra) != 0)
		return -1;
	atomic_store(&p->half_delay_us, delay_ms > 0 ? delay_ms * 500 : 0);
	atomic_store(&stop, 0);
	atomic_store(&errors, 0);
	if (wire_open(&w, s.port, 0) != 0)
		goto out;
	for (int i = 0; i < nclients; i++)
		pthread_create(&threads[i], NULL, client_main, &s);
	sleep_s(seconds / 5); /* the load settles */
	c0 = atomic_load(&cycles);
	t0 = now_s();
	for (until = t0 + seconds; now_s() < until && n < MAX_PROBES; sleep_s(0.02)) {
		double a = now_s();
		if (wire_call(&w, "/healthz", NULL, &reply) != 200)
			break;
		probe_ms[n++] = (now_s() - a) * 1000;
	}
	out->jobs_s = (double)(atomic_load(&cycles) - c0) / (now_s() - t0);
	atomic_store(&stop, 1);
	for (int i = 0; i < nclients; i++)
		pthread_join(threads[i], NULL);
	wire_close(&w);
	if (n == 0 || atomic_load(&errors)) {
		fprintf(stderr, "slowdb: %d ms: %d probes, %d client errors\n", delay_ms, n, atomic_load(&errors));
		goto out;
	}
	out->probes = n;
	out->max_ms = quantile(probe_ms, n, 1.0);
	out->p99_ms = quantile(probe_ms, n, 0.99);
	out->p50_ms = quantile(probe_ms, n, 0.5);
	rc = 0;
out:
	atomic_store(&p->half_delay_us, 0);
	serve_stop(&s);
	return rc;
}

int main(void)
{
	int nclients = (int)env_long("BENCH_SLOWDB_CLIENTS", 16), proxy_port, failed = 0;
	double seconds = (double)env_long("BENCH_SLOWDB_S", 10);
	struct proxy p = {0};
	struct result r[NDELAYS];

	signal(SIGPIPE, SIG_IGN);
	if (nclients < 1 || nclients > 256) {
		fprintf(stderr, "slowdb: BENCH_SLOWDB_CLIENTS: 1 to 256\n");
		return 1;
	}
	if (pg_start() != 0) {
		fprintf(stderr, "slowdb: no PostgreSQL (scripts/pg.sh start failed; scripts/deps.sh installs it)\n");
		return 1;
	}
	/* pg.sh's url: host=DIR/sock port=PORT user=ebb */
	if (snprintf(p.socket_path, sizeof p.socket_path, "%s/sock/.s.PGSQL.%d", pg_dir,
		     atoi(strstr(pg_url, "port=") + 5)) >= (int)sizeof p.socket_path) {
		fprintf(stderr, "slowdb: %s: too long a path for a unix socket\n", pg_dir);
		pg_stop();
		return 1;
	}
	if (proxy_start(&p, &proxy_port) != 0) {
		perror("slowdb: proxy");
		pg_stop();
		return 1;
	}
	for (int i = 0; i < NDELAYS && !failed; i++) {
		fprintf(stderr, "slowdb: %d ms more per round trip (-1: no proxy), %d clients, %.0f s\n", delays_ms[i],
			nclients, seconds);
		failed = measure(&p, proxy_port, delays_ms[i], nclients, seconds, &r[i]) != 0;
	}
	pg_stop();
	if (failed)
		return 1;

	printf("## 7. A slow database\n\n"
	       "serve on the PostgreSQL store, the database server reached through a proxy that\n"
	       "adds a delay to every round trip (half each way; the kernel here has no `tc netem`).\n"
	       "%d clients cycle submit → lease → complete, each on its own connection, for %.0f s\n"
	       "per delay; one more client times `GET /healthz`, which serve answers from memory, every\n"
	       "20 ms meanwhile: that time is the wait for serve's one thread. The baseline is the\n"
	       "first row: the same server on its unix socket, no proxy; the second is the proxy's\n"
	       "own cost (two threads hand every piece on, over TCP).\n\n",
	       nclients, seconds);
	printf("| delay per round trip | jobs/s | × baseline | /healthz p50, ms | p99, ms | max, ms | probes |\n"
	       "|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < NDELAYS; i++) {
		char what[32];
		snprintf(what, sizeof what, delays_ms[i] < 0 ? "none (unix socket)" : "%d ms", delays_ms[i]);
		printf("| %s | %.0f | %.2f | %.1f | %.1f | %.1f | %d |\n", what, r[i].jobs_s,
		       r[i].jobs_s / r[0].jobs_s, r[i].p50_ms, r[i].p99_ms, r[i].max_ms, r[i].probes);
	}
	printf("\nNo goal: the figures say what a database farther away costs (docs/ARCHITECTURE.md).\n\n");
	return 0;
}
