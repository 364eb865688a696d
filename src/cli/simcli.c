/* See simcli.h. */
#include "sim/simcli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simout.h"

void simcli_init(struct simcli *c, const char *name)
{
	memset(c, 0, sizeof *c);
	c->name = name;
	c->o.seed = 1;
	c->to_s = INFINITY;
}

static int seconds(struct simcli *c, const char *flag, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v >= 0) || v > 1e10) {
		fprintf(stderr, "ebb %s: %s: expected seconds, got '%s'\n", c->name, flag, arg);
		return 2;
	}
	*out = v;
	return 0;
}

int simcli_option(struct simcli *c, int opt, char *arg)
{
	char *end, *eq;
	double v;

	switch (opt) {
	case SIMCLI_OFFERS: c->offers = arg; return 0;
	case SIMCLI_PLOT: c->plot = arg; return 0;
	case SIMCLI_SKIP: c->skip_bad = 1; return 0;
	case SIMCLI_JSON: c->json = 1; return 0;
	case SIMCLI_ORACLE: c->o.oracle_durations = 1; return 0;
	case SIMCLI_FROM: return seconds(c, "--from", arg, &c->from_s);
	case SIMCLI_TO: return seconds(c, "--to", arg, &c->to_s);
	case SIMCLI_SEED:
		/* strtoull takes " -1" as 2^64 - 1 and caps what overflows. */
		errno = 0;
		c->o.seed = strtoull(arg, &end, 10);
		if (*end || end == arg || !isdigit((unsigned char)arg[0]) || errno) {
			fprintf(stderr, "ebb %s: --seed: expected a whole number from 0 to %llu, got '%s'\n", c->name,
				ULLONG_MAX, arg);
			return 2;
		}
		return 0;
	case SIMCLI_CKPT:
		if (seconds(c, "--checkpoint-every", arg, &v) != 0)
			return 2;
		/* 0 ms would mean never, the opposite of what was asked. */
		if ((c->o.checkpoint_every_ms = (int64_t)(v * 1000)) < 1) {
			fprintf(stderr, "ebb %s: --checkpoint-every: expected 0.001 seconds or more, got '%s'\n", c->name,
				arg);
			return 2;
		}
		return 0;
	case SIMCLI_FILTER:
		eq = strchr(arg, '=');
		if (!eq || eq == arg || c->nfilters == 8) {
			fprintf(stderr, "ebb %s: --filter: expected COL=VALUE (8 at most), got '%s'\n", c->name, arg);
			return 2;
		}
		*eq = '\0';
		c->filters[c->nfilters++] = (struct trace_filter){arg, eq + 1};
		return 0;
	}
	return 2;
}

/* A replay of no job is a table of zeros and a tune of nothing: say why
 * there is none instead. */
static int no_jobs(const struct simcli *c, const char *trace_path, const struct trace *t, size_t windowed)
{
	fprintf(stderr, "ebb %s: %s: no jobs to replay (%zu rows", c->name, trace_path,
		t->skipped + t->filtered + windowed);
	if (t->skipped)
		fprintf(stderr, ", %zu malformed", t->skipped);
	if (t->filtered)
		fprintf(stderr, ", %zu left out by --filter", t->filtered);
	if (windowed) {
		char to[40] = "";
		if (isfinite(c->to_s))
			snprintf(to, sizeof to, " --to %g", c->to_s);
		fprintf(stderr, ", %zu outside --from %g%s", windowed, c->from_s, to);
	}
	fprintf(stderr, ")\n");
	return 1;
}

int simcli_load(struct simcli *c, const char *trace_path, struct trace *t)
{
	char err[600];
	size_t n;

	if (!(c->from_s < c->to_s)) {
		fprintf(stderr, "ebb %s: --from %g is not before --to %g\n", c->name, c->from_s, c->to_s);
		return 1;
	}
	if (sim_load(trace_path, c->offers, c->filters, c->nfilters, c->skip_bad, t, &c->o, err, sizeof err) != 0) {
		fprintf(stderr, "ebb %s: %s\n", c->name, err);
		return 1;
	}
	n = t->n;
	if (c->from_s > 0 || isfinite(c->to_s))
		trace_window(t, (int64_t)(c->from_s * 1000),
			     isfinite(c->to_s) ? (int64_t)(c->to_s * 1000) : INT64_MAX);
	if (t->n == 0) {
		no_jobs(c, trace_path, t, n - t->n);
		trace_free(t);
		return 1;
	}
	if (t->skipped)
		fprintf(stderr, "ebb %s: skipped %zu malformed rows\n", c->name, t->skipped);
	return 0;
}
