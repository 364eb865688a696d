/* Benchmark 6: a scrape of GET /metrics against the length of the fleet's
 * history. For each size, a store is filled with that many ledger
 * segments through the ledger itself (serve/ledger.c on a virtual clock,
 * so that the running sums are written as serve writes them): instances
 * that booted, idled and ran jobs, then ended, ten segments each, and
 * three instances still live. Then a serve starts on the store and is
 * scraped. Baseline: GET /v1/report, which walks every segment, on the
 * same serve.
 *
 * Environment: BENCH_SCRAPE_SIZES ("10,10000,1000000"), BENCH_SCRAPES
 * (20: scrapes per size, after one to warm up), BENCH_RUNS (5: reports
 * per size), EBB_BIN. */
#include "bench.h"

#include "common/clock.h"
#include "common/config.h"
#include "serve/ledger.h"
#include "store/store.h"

#define MAX_SIZES 8
#define SEGMENTS_PER_INSTANCE 10
#define LIVE 3
#define START_MS (20000LL * 86400 * 1000) /* a day in 2024, 00:00 UTC */
#define GOAL_RATIO 1.5

struct size_result {
	long segments, made;
	double db_mb, fill_s;
	double scrape_ms, scrape_p90_ms, report_ms;
};

static int fail_store(struct store *st, const char *what)
{
	fprintf(stderr, "scrape: %s: %s\n", what, store_error(st));
	return -1;
}

/* One instance's life through the ledger: boot, then idle and busy in
 * turn, a minute each, and, unless it stays live, its end. */
static int live_a_life(struct store *st, struct ledger *l, struct clock *clk, int segments, int end)
{
	struct instance inst = {.market = MARKET_SPOT, .state = INST_REQUESTED, .gpus = 1};

	snprintf(inst.offer, sizeof inst.offer, "a10");
	inst.launched_ms = inst.updated_ms = clock_now(clk);
	if (store_instance_insert(st, &inst) != 0 || ledger_transition(l, &inst, INST_REQUESTED) != 0)
		return fail_store(st, "launch");
	for (int k = 1; k < segments; k++) {
		enum instance_state to = k % 2 ? INST_IDLE : INST_BUSY;
		clock_advance(clk, 60 * 1000);
		if (ledger_transition(l, &inst, to) != 0)
			return fail_store(st, "transition");
		inst.state = to;
	}
	if (end) {
		clock_advance(clk, 60 * 1000);
		if (ledger_transition(l, &inst, INST_TERMINATED) != 0)
			return fail_store(st, "terminate");
		inst.state = INST_TERMINATED;
	}
	return store_instance_update(st, &inst) == 0 ? 0 : fail_store(st, "instance");
}

/* A store in dir/data with about `segments` segments: *made, exactly. */
static int fill(const char *dir, long segments, long *made)
{
	static const struct offer offers[] = {{.name = "a10", .gpus = 1, .price = {1.0, 0.4}}};
	struct config cfg;
	struct clock clk;
	struct store *st;
	struct ledger l;
	char err[512];
	long ended = segments > LIVE * SEGMENTS_PER_INSTANCE ? segments / SEGMENTS_PER_INSTANCE - LIVE : 0;
	int rc = 0;

	config_defaults(&cfg, NULL);
	free(cfg.data_dir);
	cfg.data_dir = malloc(strlen(dir) + 8);
	sprintf(cfg.data_dir, "%s/data", dir);
	st = store_open(&cfg, err, sizeof err);
	config_free(&cfg);
	if (!st) {
		fprintf(stderr, "scrape: %s\n", err);
		return -1;
	}
	clock_init_virtual(&clk, START_MS);
	l = (struct ledger){st, &clk, offers, 1};
	if (store_begin(st) != 0)
		rc = fail_store(st, "begin");
	/* The ended instances' segments (the billing rest is the tenth), and
	 * the few the live ones have opened so far. */
	*made = 0;
	for (long i = 0; rc == 0 && i < ended; i++, *made += SEGMENTS_PER_INSTANCE)
		rc = live_a_life(st, &l, &clk, SEGMENTS_PER_INSTANCE - 1, 1);
	for (int i = 0; rc == 0 && i < LIVE && i * 3 < segments; i++, *made += 3)
		rc = live_a_life(st, &l, &clk, 3, 0);
	if (rc == 0 && store_commit(st) != 0)
		rc = fail_store(st, "commit");
	store_close(st);
	return rc;
}

/* Milliseconds of one GET path on h, or -1. */
static double timed_get(struct http *h, const char *path)
{
	double t0 = now_s();

	if (http_call(h, path, NULL) != 200) {
		fprintf(stderr, "scrape: GET %s failed: %.200s\n", path, h->body);
		return -1;
	}
	return (now_s() - t0) * 1000;
}

static int measure(struct size_result *r, int scrapes, int reports)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[128], extra[256], db[160];
	double v[256], t0;
	struct serve s;
	struct http h;
	struct stat sb;
	int rc = -1;

	snprintf(dir, sizeof dir, "%s/ebb-bench-scrape.XXXXXX", tmp);
	if (!mkdtemp(dir))
		return -1;
	t0 = now_s();
	if (fill(dir, r->segments, &r->made) != 0)
		goto out;
	r->fill_s = now_s() - t0;
	snprintf(db, sizeof db, "%s/data/ebb.db", dir);
	r->db_mb = stat(db, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
	/* [server] data_dir again: the last one counts. */
	snprintf(extra, sizeof extra, "data_dir = %s/data\n", dir);
	if (serve_start(&s, extra) != 0)
		goto out;
	if (http_init(&h, s.url) == 0) {
		if (timed_get(&h, "/metrics") >= 0) {
			int k;
			for (k = 0; k < scrapes && (v[k] = timed_get(&h, "/metrics")) >= 0; k++)
				;
			r->scrape_p90_ms = quantile(v, k, 0.9);
			r->scrape_ms = median(v, k);
			for (k = 0; k < reports && (v[k] = timed_get(&h, "/v1/report")) >= 0; k++)
				;
			r->report_ms = median(v, k);
			rc = k == reports ? 0 : -1;
		}
		http_free(&h);
	}
	serve_stop(&s);
out:
	remove_tree(dir);
	return rc;
}

int main(void)
{
	const char *sizes = getenv("BENCH_SCRAPE_SIZES") ? getenv("BENCH_SCRAPE_SIZES") : "10,10000,1000000";
	int scrapes = (int)env_long("BENCH_SCRAPES", 20), reports = (int)env_long("BENCH_RUNS", 5), n = 0;
	struct size_result r[MAX_SIZES] = {{0}};
	double ratio;

	if (scrapes < 1 || scrapes > 256)
		scrapes = 20;
	if (reports < 1 || reports > 256)
		reports = 5;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (const char *p = sizes; *p && n < MAX_SIZES; n++) {
		char *end;
		r[n].segments = strtol(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
		fprintf(stderr, "scrape: %ld segments\n", r[n].segments);
		if (measure(&r[n], scrapes, reports) != 0)
			return 1;
		fprintf(stderr, "scrape: %ld segments: filled in %.1f s, %.1f MB; /metrics %.2f ms, /v1/report %.1f ms\n",
			r[n].segments, r[n].fill_s, r[n].db_mb, r[n].scrape_ms, r[n].report_ms);
	}
	printf("## 6. A scrape against the length of history\n\n");
	printf("For each size a store is filled with that many ledger segments through the ledger itself\n"
	       "(`ledger_transition` on a virtual clock, so that the running sums are written as serve\n"
	       "writes them): instances that booted, idled and ran jobs a minute at a time and ended, ten\n"
	       "segments each, and three still live. Then a fresh serve on that store is scraped %d times\n"
	       "(after one scrape to warm up): the time from request to the whole reply, over one\n"
	       "kept-alive connection. Baseline: `GET /v1/report`, which walks every segment, %d times on\n"
	       "the same serve. Medians; p90 of the scrapes.\n\n",
	       scrapes, reports);
	printf("| segments | ebb.db, MB | filled in, s | GET /metrics, ms | p90, ms | baseline: GET /v1/report, ms |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < n; i++)
		printf("| %ld | %.1f | %.1f | %.2f | %.2f | %.1f |\n", r[i].made, r[i].db_mb, r[i].fill_s,
		       r[i].scrape_ms, r[i].scrape_p90_ms, r[i].report_ms);
	ratio = r[n - 1].scrape_ms / r[0].scrape_ms;
	printf("\nGoal: a scrape with %ld segments costs what it costs with %ld, within %.1f× — %.2f×, %s.\n\n",
	       r[n - 1].made, r[0].made, GOAL_RATIO, ratio, goal_word(ratio <= GOAL_RATIO));
	curl_global_cleanup();
	return 0;
}
