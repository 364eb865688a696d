/* See simcli.h. */
#include "cli/simcli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"

/* --seed: the whole range of a uint64_t. strtoull takes " -1" as
 * 2^64 - 1 and caps what overflows: both refused. */
static int seed(void *at, const char *arg, char *why, size_t size)
{
	char *end;

	errno = 0;
	*(uint64_t *)at = strtoull(arg, &end, 10);
	if (*end || end == arg || !isdigit((unsigned char)arg[0]) || errno)
		return options_why(why, size, "expected a whole number from 0 to %llu, got '%s'", ULLONG_MAX, arg);
	return 0;
}

static int add_filter(void *at, const char *arg, char *why, size_t size)
{
	struct simcli_filters *fs = at;
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : 0;

	if (len == 0 || len >= sizeof fs->columns[0] || fs->n == SIMCLI_FILTERS_MAX)
		return options_why(why, size, "expected COL=VALUE (%d at most), got '%s'", SIMCLI_FILTERS_MAX, arg);
	memcpy(fs->columns[fs->n], arg, len);
	fs->columns[fs->n][len] = '\0';
	fs->f[fs->n] = (struct trace_filter){fs->columns[fs->n], eq + 1};
	fs->n++;
	return 0;
}

#define SIM(member) OPTION_AT(struct simcli, member)
/* Seconds into a trace, or between checkpoints: finite, for the JSON. */
#define SECONDS_MAX 1e10

const struct option_spec simcli_options[] = {
	{"offers", 0, OPTION_STRING, "FILE", SIM(offers), "an ebb config: its [offer.*] sections and ebb's settings"},
	{"seed", 0, OPTION_CALL, "N", SIM(o.seed), "seed of the spot reclaims", .def = "1", .parse = seed},
	{"reclaims", 0, OPTION_STRING, "FILE.csv", SIM(reclaims),
	 "spot reclaims at chosen times instead of random ones:\n"
	 "CSV time_s,instance (the Nth launched, from 1) or\n"
	 "time_s,job (the instance running job N of --jobs)"},
	{"checkpoint-every", 0, OPTION_SECONDS, "S", SIM(checkpoint_s), "jobs checkpoint every S seconds (default: never)",
	 /* 0 ms would mean never, the opposite of what was asked. */
	 .fmin = 0.001, .fmax = SECONDS_MAX},
	{"filter", 0, OPTION_CALL, "COL=VALUE", SIM(filters), "keep rows whose COL is VALUE (repeatable)",
	 .parse = add_filter},
	{"skip-bad", 0, OPTION_FLAG, NULL, SIM(skip_bad), "skip malformed rows (and count them) instead of stopping"},
	{"from", 0, OPTION_SECONDS, "S", SIM(from_s), "only jobs submitted S seconds into the trace or later",
	 .fmax = SECONDS_MAX},
	{"to", 0, OPTION_SECONDS, "S", SIM(to_s), "only jobs submitted before S seconds into the trace",
	 .fmax = SECONDS_MAX},
	{"oracle-durations", 0, OPTION_FLAG, NULL, SIM(o.oracle_durations),
	 "tell ebb each job's exact duration from the trace, a what-if\n"
	 "(default: what serve knows, the est_s column, else the\n"
	 "median of the newest finished jobs of the type)"},
	{"json", 0, OPTION_FLAG, NULL, SIM(json), "print JSON for scripts"},
	{"plot", 0, OPTION_STRING, "FILE.svg", SIM(plot), "draw a chart"},
	{0},
};

/* A replay of no job is a table of zeros and a tune of nothing: say why
 * there is none instead. */
static int no_jobs(const struct simcli *c, const char *trace_path, const struct trace *t, size_t windowed)
{
	fprintf(stderr, "%s: %s: no jobs to replay (%zu rows", c->name, trace_path,
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
		fprintf(stderr, "%s: --from %g is not before --to %g\n", c->name, c->from_s, c->to_s);
		return 1;
	}
	c->o.checkpoint_every_ms = (int64_t)(c->checkpoint_s * 1000);
	if (sim_load(trace_path, c->offers, c->filters.f, c->filters.n, c->skip_bad, t, &c->o, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", c->name, err);
		return 1;
	}
	if (c->reclaims && trace_load_reclaims(c->reclaims, t, err, sizeof err) != 0) {
		fprintf(stderr, "%s: --reclaims %s\n", c->name, err);
		trace_free(t);
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
		fprintf(stderr, "%s: skipped %zu malformed rows\n", c->name, t->skipped);
	return 0;
}

int simcli_parse(struct simcli *c, const struct usage *u, void *args, int argc, char **argv)
{
	/* What "not given" means; the defaults are the table's. */
	memset(c, 0, sizeof *c);
	c->name = argv[0];
	c->to_s = INFINITY;
	c->o.plugins = &cmd_plugins;
	return options_parse(u, args, argc, argv);
}

int simcli_start(struct simcli *c, const struct usage *u, void *args, int argc, char **argv, struct trace *t)
{
	int rc;

	if ((rc = simcli_parse(c, u, args, argc, argv)) != OPTIONS_GO_ON)
		return rc;
	if (optind == argc)
		return options_usage_error(argv[0], "expected one trace file");
	return simcli_load(c, argv[optind], t) == 0 ? OPTIONS_GO_ON : 1;
}
