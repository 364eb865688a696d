/* Benchmark 3: lease latency with many workers long-polling at once. N
 * connections each park a lease request (wait_s = 60) on a fresh serve;
 * once /v1/stats counts N waiting workers, jobs are submitted one at a
 * time and for each we take the time from the submit's reply (and from
 * its request) to the arrival of the lease reply that carries the job. A
 * worker that got a job asks again at once, so N stay parked throughout.
 * The baseline is the same with a single waiting worker. A third row has
 * each of the N say that a resident handler of type "warm" is ready, with
 * a job of that type queued that none fits (two GPUs): every commit's
 * warm pass (docs/SCALING.md, "Warm handlers") would try each of them and
 * find another type's job at the head; it stops after 16 such misses.
 *
 * One thread and epoll over plain sockets (struct wire), so that the client
 * adds no latency of its own.
 *
 * Environment: BENCH_RUNS (5), BENCH_WORKERS (1000), BENCH_LEASE_JOBS
 * (1000), EBB_BIN. */
#include <sys/epoll.h>
#include <sys/resource.h>

#include "bench.h"

#define MAX_RUNS 15

struct sample {
	double from_reply, from_request; /* ms */
};

/* A lease request parked on c: with a ready handler of type "warm" when
 * warm is set. */
static int park(struct wire *c, int warm)
{
	char body[256];

	if (!warm)
		return wire_lease_parked(c);
	snprintf(body, sizeof body,
		 "{\"worker\":\"w%d\",\"wait_s\":60,\"gpus\":1,\"lease_s\":3600,"
		 "\"handlers\":[{\"type\":\"warm\",\"state\":\"ready\",\"setup_s\":1}]}",
		 c->tag);
	return wire_send(c, "/v1/lease", body);
}

/* One run: n parked workers (warm: each with a ready handler, behind a
 * queued job of its type that fits none), jobs submitted one by one;
 * fills samples and serve's resident memory with the n connections
 * parked. */
static int run(int n, int jobs, int warm, struct sample *samples, long *rss_kb)
{
	struct wire *conns = calloc((size_t)n + 1, sizeof *conns), *sub = &conns[n];
	struct epoll_event ev, evs[256];
	struct serve s;
	int ep = epoll_create1(0), rc = -1, done = 0;

	if (serve_start(&s, warm ? "[type.warm]\nhandler = true\n" : "") != 0)
		goto out;
	if (warm) {
		struct http h;
		int status = http_init(&h, s.url) == 0 ? http_call(&h, "/v1/jobs", "{\"type\":\"warm\",\"payload\":1,\"gpus\":2}") : -1;
		http_free(&h);
		if (status != 201) {
			fprintf(stderr, "longpoll: the warm type's job was not taken (%d)\n", status);
			goto out;
		}
	}
	for (int i = 0; i <= n; i++) {
		conns[i].tag = i < n ? i : -1;
		if (wire_open(&conns[i], s.port, 1) != 0 || (i < n && park(&conns[i], warm) != 0)) {
			fprintf(stderr, "longpoll: connection %d: %s\n", i, strerror(errno));
			goto out;
		}
		ev.events = EPOLLIN;
		ev.data.ptr = &conns[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	if (wait_parked("longpoll", s.url, n, 60) != 0)
		goto out;
	*rss_kb = proc_status(s.pid, "VmRSS");
	while (done < jobs) {
		double sent = now_s(), replied = 0, leased = 0, deadline = sent + 10;
		long long id = -1, leased_id = -2;

		if (wire_send(sub, "/v1/jobs", "{\"command\":[\"true\"]}") != 0)
			goto out;
		while ((!replied || leased_id != id) && now_s() < deadline) {
			int k = epoll_wait(ep, evs, 256, 1000);
			double t = now_s();
			for (int i = 0; i < k; i++) {
				struct wire *c = evs[i].data.ptr;
				const char *body;
				int status, r = wire_read(c, &status, &body);
				if (r < 0) {
					fprintf(stderr, "longpoll: connection %d closed\n", c->tag);
					goto out;
				}
				if (r == 0)
					continue;
				if (c == sub) {
					if (status != 201)
						goto out;
					replied = t;
					id = reply_int(body, "id");
				} else {
					if (status != 200)
						goto out;
					if (!strstr(body, "\"job\":null")) {
						leased = t;
						leased_id = reply_int(body, "id");
					}
					if (park(c, warm) != 0) /* park again */
						goto out;
				}
			}
		}
		if (!replied || leased_id != id) {
			fprintf(stderr, "longpoll: job %lld was not leased within 10 s\n", id);
			goto out;
		}
		samples[done].from_reply = (leased - replied) * 1000;
		samples[done++].from_request = (leased - sent) * 1000;
	}
	rc = 0;
out:
	for (int i = 0; i <= n; i++) {
		if (conns[i].fd > 0)
			wire_close(&conns[i]);
	}
	close(ep);
	free(conns);
	serve_stop(&s);
	return rc;
}

struct row {
	int workers, nruns;
	double p50_reply[MAX_RUNS], p99_reply[MAX_RUNS], p50_req[MAX_RUNS], p99_req[MAX_RUNS];
	double max_req[MAX_RUNS], rss_mb[MAX_RUNS];
};

static int measure(struct row *w, int workers, int warm, int runs, int jobs)
{
	struct sample *samples = calloc((size_t)jobs, sizeof *samples);
	double *v = calloc((size_t)jobs, sizeof *v);

	memset(w, 0, sizeof *w);
	w->workers = workers;
	for (int r = 0; r < runs; r++, w->nruns++) {
		long rss = 0;
		if (run(workers, jobs, warm, samples, &rss) != 0)
			return -1;
		for (int i = 0; i < jobs; i++)
			v[i] = samples[i].from_reply;
		w->p50_reply[r] = quantile(v, jobs, 0.50);
		w->p99_reply[r] = quantile(v, jobs, 0.99);
		for (int i = 0; i < jobs; i++)
			v[i] = samples[i].from_request;
		w->p50_req[r] = quantile(v, jobs, 0.50);
		w->p99_req[r] = quantile(v, jobs, 0.99);
		w->max_req[r] = v[jobs - 1];
		w->rss_mb[r] = (double)rss / 1024;
		fprintf(stderr, "longpoll: %d workers run %d: after the submit's reply p50 %.3f p99 %.3f ms;"
				" after its request p50 %.3f p99 %.3f max %.3f ms; serve RSS %.1f MB\n",
			workers, r + 1, w->p50_reply[r], w->p99_reply[r], w->p50_req[r], w->p99_req[r],
			w->max_req[r], w->rss_mb[r]);
	}
	free(samples);
	free(v);
	return 0;
}

static void print_row(struct row *w, const char *name)
{
	int n = w->nruns;

	printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f |\n", name, median(w->p50_reply, n),
	       median(w->p99_reply, n), median(w->p50_req, n), median(w->p99_req, n), median(w->max_req, n),
	       median(w->rss_mb, n));
}

int main(void)
{
	int runs = (int)env_long("BENCH_RUNS", 5), workers = (int)env_long("BENCH_WORKERS", 1000);
	int jobs = (int)env_long("BENCH_LEASE_JOBS", 1000);
	struct rlimit rl;
	struct row base, many, warm;
	char name[64];
	double p99, p99_base;

	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < (rlim_t)workers + 64) {
		fprintf(stderr, "longpoll: RLIMIT_NOFILE %llu is too low for %d workers\n",
			(unsigned long long)rl.rlim_cur, workers);
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	if (measure(&base, 1, 0, runs, jobs) != 0 || measure(&many, workers, 0, runs, jobs) != 0 ||
	    measure(&warm, workers, 1, runs, jobs) != 0)
		return 1;

	printf("## 3. Lease latency with %d workers long-polling\n\n", workers);
	printf("%d connections each park `POST /v1/lease` with wait_s = 60; once `/v1/stats` counts\n"
	       "them all, %d jobs are submitted one at a time, each when the previous one has been\n"
	       "leased. For each job: the time from the arrival of the submit's reply, and from the\n"
	       "sending of the submit, to the arrival of the lease reply that carries the job. The\n"
	       "worker that got it parks again at once. One client thread with epoll over plain\n"
	       "sockets; %d runs per row, medians of each run's percentiles, in milliseconds. Both\n"
	       "replies leave serve after the same commit, so the first column is near zero unless\n"
	       "serve handles the waiting workers one by one; the second includes the submit's\n"
	       "own round trip and fsync.\n\n",
	       workers, jobs, runs);
	printf("| waiting workers | p50 after reply | p99 after reply | p50 after request"
	       " | p99 after request | max after request | serve RSS, MB |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	print_row(&base, "baseline: 1");
	snprintf(name, sizeof name, "%d", workers);
	print_row(&many, name);
	snprintf(name, sizeof name, "%d, each with a ready handler", workers);
	print_row(&warm, name);
	p99 = median(many.p99_req, many.nruns);
	p99_base = median(base.p99_req, base.nruns);
	printf("\nNo goal is set for this figure. Against the baseline: p99 from the submit's request\n"
	       "%.3f ms with %d waiting workers, %.3f ms with one (%+.0f%%).\n\n",
	       p99, workers, p99_base, 100 * (p99 - p99_base) / p99_base);
	printf("In the third row each waiting worker says a resident handler of type `warm` is ready,\n"
	       "and a job of that type that none of them fits (two GPUs) is queued, so that each\n"
	       "commit's warm pass (docs/SCALING.md, \"Warm handlers\") finds every one of them worth\n"
	       "trying and another type's job at the head; it stops after 16 such tries. p99 from the\n"
	       "submit's request %.3f ms, against %.3f ms with no handler (%+.0f%%).\n\n",
	       median(warm.p99_req, warm.nruns), p99, 100 * (median(warm.p99_req, warm.nruns) - p99) / p99);
	curl_global_cleanup();
	return 0;
}
