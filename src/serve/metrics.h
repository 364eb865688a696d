/* The Prometheus text format (version 0.0.4), written by hand: a growing
 * buffer of families and samples, and the histogram serve keeps in memory
 * (the lease latency). GET /metrics builds its body with these
 * (api_metrics.c); docs/METRICS.md lists what it says.
 *
 * A family is its `# HELP` and `# TYPE` lines; its samples follow, named
 * after it plus a suffix ("", "_bucket", "_sum", "_count"). The writer
 * escapes help text and label values; names are the caller's constants. */
#ifndef EBB_METRICS_H
#define EBB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom {
	char *buf;
	size_t len, cap;
	int oom; /* an allocation failed: prom_finish returns NULL */
	char family[128];
};

/* Starts a family: type is counter, gauge, histogram, summary or untyped. */
void prom_family(struct prom *p, const char *name, const char *type, const char *help);
/* One sample of the current family, named after it plus suffix: its
 * value, then label pairs (name, value, ..., NULL). */
void prom_sample(struct prom *p, const char *suffix, double value, ...) __attribute__((sentinel));
/* The body, NUL-terminated (free it); NULL if memory ran out. The writer
 * is empty again afterwards. */
char *prom_finish(struct prom *p);

#define HISTOGRAM_MAX_BOUNDS 24

/* Counts per bucket with an inclusive upper bound (le), in increasing
 * order; observations over the last bound count only in +Inf. */
struct histogram {
	const double *bounds;
	int nbounds;
	uint64_t counts[HISTOGRAM_MAX_BOUNDS + 1]; /* per bucket, not cumulative; the last is +Inf */
	uint64_t count;
	double sum;
};

void histogram_init(struct histogram *h, const double *bounds, int nbounds);
void histogram_observe(struct histogram *h, double v);
/* Writes h as the current family's _bucket (cumulative, le ending in
 * "+Inf"), _sum and _count samples. */
void prom_histogram(struct prom *p, const struct histogram *h);

/* What serve measures itself and keeps only in memory: it starts at zero
 * with every `ebb serve`. */
struct serve_metrics {
	/* Job ready (its last state change) to lease granted, seconds. */
	struct histogram lease_latency;
	/* A scaler run (reconcile, view, plan, its actions), seconds of
	 * serve's thread. */
	struct histogram scaler_run;
	/* Replies by HTTP status, counted when a request is done. */
	uint64_t http_requests[600];
};

void serve_metrics_init(struct serve_metrics *m);
/* A request is done with this status (0: it never got a reply). */
void serve_metrics_http(struct serve_metrics *m, int status);

#endif
