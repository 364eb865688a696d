/* The Prometheus text writer and the histogram (see metrics.h). */
#include "serve/metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

#define MAX_LABELS 8

static void put(struct prom *p, const char *s, size_t n)
{
	if (p->oom)
		return;
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		char *b;
		while (cap < p->len + n + 1)
			cap *= 2;
		if (!(b = mem_realloc(p->buf, cap))) {
			p->oom = 1;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(struct prom *p, const char *s) { put(p, s, strlen(s)); }

/* Help text escapes backslash and newline; a label value also the double
 * quote. */
static void put_escaped(struct prom *p, const char *s, int quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(p, "\\\\");
		else if (*s == '\n')
			puts_(p, "\\n");
		else if (quote && *s == '"')
			puts_(p, "\\\"");
		else
			put(p, s, 1);
	}
}

/* A float as the format spells it: "+Inf", "-Inf", "NaN", or the
 * shortest of %.15g and %.17g that reads back as the same double. */
static void prom_float(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "NaN");
	else if (isinf(v))
		snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
	else {
		snprintf(buf, size, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, size, "%.17g", v);
	}
}

void prom_family(struct prom *p, const char *name, const char *type, const char *help)
{
	snprintf(p->family, sizeof p->family, "%s", name);
	puts_(p, "# HELP ");
	puts_(p, name);
	puts_(p, " ");
	put_escaped(p, help, 0);
	puts_(p, "\n# TYPE ");
	puts_(p, name);
	puts_(p, " ");
	puts_(p, type);
	puts_(p, "\n");
}

/* labels: n names and values, alternating. */
static void sample(struct prom *p, const char *suffix, const char *const *labels, int n, double value)
{
	char num[64];

	puts_(p, p->family);
	puts_(p, suffix);
	for (int i = 0; i + 1 < n; i += 2) {
		puts_(p, i == 0 ? "{" : ",");
		puts_(p, labels[i]);
		puts_(p, "=\"");
		put_escaped(p, labels[i + 1], 1);
		puts_(p, "\"");
	}
	if (n > 0)
		puts_(p, "}");
	prom_float(num, sizeof num, value);
	puts_(p, " ");
	puts_(p, num);
	puts_(p, "\n");
}

void prom_sample(struct prom *p, const char *suffix, double value, ...)
{
	const char *labels[2 * MAX_LABELS];
	const char *s;
	int n = 0;
	va_list ap;

	va_start(ap, value);
	while ((s = va_arg(ap, const char *)) && n < 2 * MAX_LABELS)
		labels[n++] = s;
	va_end(ap);
	sample(p, suffix, labels, n, value);
}

char *prom_finish(struct prom *p)
{
	char *out = p->oom ? NULL : p->buf;

	if (p->oom)
		free(p->buf);
	else if (!out)
		out = mem_calloc(1, 1);
	memset(p, 0, sizeof *p);
	return out;
}

void histogram_init(struct histogram *h, const double *bounds, int nbounds)
{
	memset(h, 0, sizeof *h);
	h->bounds = bounds;
	h->nbounds = nbounds < HISTOGRAM_MAX_BOUNDS ? nbounds : HISTOGRAM_MAX_BOUNDS;
}

void histogram_observe(struct histogram *h, double v)
{
	int i = 0;

	while (i < h->nbounds && v > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum += v;
}

void prom_histogram(struct prom *p, const struct histogram *h)
{
	uint64_t cum = 0;
	char le[64];

	for (int i = 0; i <= h->nbounds; i++) {
		const char *labels[2] = {"le", le};
		cum += h->counts[i];
		if (i < h->nbounds)
			prom_float(le, sizeof le, h->bounds[i]);
		else
			snprintf(le, sizeof le, "+Inf");
		sample(p, "_bucket", labels, 2, (double)cum);
	}
	sample(p, "_sum", NULL, 0, h->sum);
	sample(p, "_count", NULL, 0, (double)h->count);
}

/* Wide enough for a GPU job queue: a worker long-polling gets a job within
 * milliseconds; a cold fleet takes minutes to boot. */
static const double lease_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
				      2.5,   5,    10,    30,   60,  120,  300, 600};

/* A run holds serve's only thread: milliseconds are its budget
 * (docs/ARCHITECTURE.md, "The tallies"). */
static const double run_bounds[] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1};

void serve_metrics_init(struct serve_metrics *m)
{
	memset(m, 0, sizeof *m);
	histogram_init(&m->lease_latency, lease_bounds, (int)(sizeof lease_bounds / sizeof *lease_bounds));
	histogram_init(&m->scaler_run, run_bounds, (int)(sizeof run_bounds / sizeof *run_bounds));
}

void serve_metrics_http(struct serve_metrics *m, int status)
{
	if (status >= 100 && status < 600)
		m->http_requests[status]++;
}
