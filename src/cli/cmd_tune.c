/* `ebb tune TRACE --wait-p95 S [options] [--write FILE]`: sweeps the
 * policies' knobs over a trace and recommends ebb settings (see tune.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/simcli.h"
#include "cli/tune_history.h"
#include "common/mem.h"
#include "sim/simout.h"
#include "sim/tune.h"

struct tune_args {
	struct simcli sim;
	double wait;            /* --wait-p95 */
	const char *write_path; /* --write */
	int jobs;               /* --jobs; 0: the online CPUs */
	int exhaustive;         /* --exhaustive */
	int64_t history;        /* --history: Unix seconds; 0: a trace file instead */
	int publish;            /* --publish */
	struct client_args conn; /* the serve --history reads */
};

static const struct option_spec options[] = {
	{"wait-p95", 0, OPTION_SECONDS, "S", OPTION_AT(struct tune_args, wait), "the p95 wait to meet, seconds",
	 /* inf would pass for a number and fail in the JSON. */
	 .fmax = 1e10, .required = 1},
	{"write", 0, OPTION_STRING, "FILE", OPTION_AT(struct tune_args, write_path),
	 "write the recommended settings as a config fragment"},
	{"jobs", 0, OPTION_INT, "N", OPTION_AT(struct tune_args, jobs),
	 "replays at once, on as many threads (default: the online CPUs)", .min = 1, .max = 1024},
	{"exhaustive", 0, OPTION_FLAG, NULL, OPTION_AT(struct tune_args, exhaustive),
	 "replay every point of the grid, not the search"},
	{"history", 0, OPTION_CALL, "WHEN", OPTION_AT(struct tune_args, history),
	 "tune on serve's own jobs that finished since WHEN (30d,\n"
	 "@UNIX_SECONDS, YYYY-MM-DD) in place of a trace, and print\n"
	 "what the running settings (--offers: serve's config) did",
	 .parse = history_when},
	{"publish", 0, OPTION_FLAG, NULL, OPTION_AT(struct tune_args, publish),
	 "with --history: keep the comparison in serve for its\ndashboard (an admin token)"},
	{.kind = OPTION_GROUP, .group = simcli_options, .at = OPTION_AT(struct tune_args, sim)},
	{.kind = OPTION_GROUP, .group = cli_server_options, .at = OPTION_AT(struct tune_args, conn)},
	{0},
};

static const struct usage usage = {"ebb tune TRACE --wait-p95 S [OPTIONS]\n"
	"ebb tune --history WHEN --offers CONFIG --wait-p95 S [OPTIONS]",
	"Sweeps the knobs of ebb's policy and of each baseline over a trace, prints each\n"
	"one's cost against p95-wait frontier and ebb's cost against the best baseline at\n"
	"the same p95 or shorter (and against keda's defaults, the clairvoyant and the\n"
	"bound), the share of the gap from the best baseline within the wait to\n"
	"clairvoyant:wait at the wait that ebb closes, and recommends ebb settings\n"
	"meeting the wait. ebb's settings are searched (coordinate descent toward the\n"
	"waits compared at, from the grid's corners), the baselines' replayed whole. On\n"
	"a trace of 20,000 jobs or more, every setting is replayed first on the first\n"
	"eighth of the trace's time, and only the leaders there at each wait are\n"
	"replayed whole, the baselines' and the warm floors' then descended from them.\n"
	"--exhaustive replays every setting whole. On a terminal, a progress line on\n"
	"stderr.",
	options,
	.max_words = 1,
};

/* Each family's frontier from the shortest wait to the longest; settings
 * that reach the very same cost and wait share a line. */
static void print_table(const struct tune *t, FILE *out)
{
	const struct tune_point **pts = xcalloc(t->n ? t->n : 1, sizeof *pts);

	const char *families[TUNE_MAX_FAMILIES];
	int nfamilies = tune_families(families);

	fprintf(out, "%-10s %10s %10s  %s\n", "POLICY", "COST $", "P95 WAIT", "SETTINGS (frontier points)");
	for (int f = 0; f < nfamilies; f++) {
		size_t n = tune_frontier(t, families[f], pts);
		for (size_t k = 0, alike; k < n; k += alike) {
			const struct tune_point *p = pts[k];
			int recommended = 0;
			for (alike = 0; k + alike < n && pts[k + alike]->cost_usd == p->cost_usd &&
					pts[k + alike]->wait_p95_s == p->wait_p95_s; alike++)
				recommended |= pts[k + alike] - t->points == t->recommended;
			fprintf(out, "%-10s %10.2f %9.1fs  %s", p->family, p->cost_usd, p->wait_p95_s, p->spec);
			if (alike > 1)
				fprintf(out, " (and %zu alike)", alike - 1);
			fprintf(out, "%s\n", recommended ? "   <- recommended" : "");
		}
	}
	free(pts);
}

/* "$C (p95 W s)" of a point; "none" without one. */
static const char *priced(const struct tune_point *p, char *buf, size_t size)
{
	if (!p)
		return "none";
	snprintf(buf, size, "%s: $%.2f (p95 %.0f s)", p->spec, p->cost_usd, p->wait_p95_s);
	return buf;
}

/* ebb's cheapest at the wait, against the best baseline there and, if
 * given, the references. */
static void print_at(FILE *out, const char *what, const struct tune_at *a, const struct tune_point *const *refs,
		     const char *const *ref_names, int nrefs)
{
	char buf[600];

	fprintf(out, "at %s (%.0f s) or shorter: ", what, a->wait_s);
	if (!a->ebb) {
		fprintf(out, "ebb reaches no such p95; the best baseline there: %s\n", priced(a->best, buf, sizeof buf));
		return;
	}
	fprintf(out, "ebb $%.2f (p95 %.0f s)", a->ebb->cost_usd, a->ebb->wait_p95_s);
	if (a->best)
		fprintf(out, " = %.2f x the best baseline there, %s", a->ebb->cost_usd / a->best->cost_usd,
			priced(a->best, buf, sizeof buf));
	else
		fprintf(out, "; no baseline reaches it");
	for (int k = 0; k < nrefs; k++) {
		if (refs[k] && refs[k]->cost_usd > 0)
			fprintf(out, "; %.2f x %s ($%.2f)", a->ebb->cost_usd / refs[k]->cost_usd, ref_names[k],
				refs[k]->cost_usd);
	}
	fputc('\n', out);
}

/* How much of what is left to gain at the target ebb's recommendation
 * gains: from the best baseline there to clairvoyant:wait (tune.h). */
static void print_gap(FILE *out, const struct tune_ratios *r)
{
	const struct tune_at *a = &r->at_target;
	char base[600], ref[600];
	double share;

	if (!a->ebb || !r->clairvoyant_wait)
		return;
	priced(a->best, base, sizeof base);
	priced(r->clairvoyant_wait, ref, sizeof ref);
	if (tune_gap_closed(r, &share) == 0)
		fprintf(out, "ebb's recommendation closes %.0f%% of the gap between the best tuned baseline within the"
			" target (%s) and %s", 100 * share, base, ref);
	else if (!a->best)
		fprintf(out, "ebb's recommendation: no tuned baseline reaches the target, no gap to %s", ref);
	else
		fprintf(out, "ebb's recommendation: the gap to %s is not meaningful, it is not cheaper than the best"
			" tuned baseline within the target (%s)", ref, base);
	/* Its plan keeps the target; a spot reclaim, not foreseen, can delay
	 * its jobs past it. */
	fprintf(out, "%s\n", r->clairvoyant_wait->wait_p95_s > a->wait_s ? " (past the target: spot reclaims it did"
		" not foresee)" : "");
}

static void print_ratios(const struct tune *t, const struct sim_options *o, FILE *out)
{
	static const char *const names[] = {"keda's defaults", "the clairvoyant", "the bound"};
	struct tune_ratios r;

	tune_ratios(t, (double)o->offers[0].boot_ms / 1000.0, &r);
	fprintf(out, "\n");
	print_at(out, "keda-default's p95", &r.at_keda, (const struct tune_point *[]){r.keda}, names, 1);
	print_at(out, "two boots", &r.at_two_boots, (const struct tune_point *[]){r.keda, r.clairvoyant, r.bound},
		 names, 3);
	if (r.at_target.wait_s != r.at_two_boots.wait_s)
		print_at(out, "the target", &r.at_target,
			 (const struct tune_point *[]){r.keda, r.clairvoyant, r.bound}, names, 3);
	print_at(out, "the clairvoyant's p95", &r.at_clairvoyant, (const struct tune_point *[]){r.clairvoyant},
		 names + 1, 1);
	print_gap(out, &r);
	fprintf(out, "baseline points below ebb's frontier: %d%s%s\n", r.below_frontier, r.below_frontier ? ": " : "",
		r.below);
}

static json_t *point_json(const struct tune_point *p)
{
	if (!p)
		return json_null();
	return json_pack("{s:s, s:s, s:f, s:f, s:b}", "family", p->family, "policy", p->spec, "cost_usd",
			 p->cost_usd, "wait_p95_s", p->wait_p95_s, "on_frontier", p->on_frontier);
}

/* ebb's cost over a point's; null without both. */
static json_t *ratio_json(const struct tune_point *ebb, const struct tune_point *p)
{
	return ebb && p && p->cost_usd > 0 ? json_real(ebb->cost_usd / p->cost_usd) : json_null();
}

static json_t *at_json(const struct tune_at *a, const struct tune_ratios *r)
{
	return json_pack("{s:f, s:o, s:o, s:o, s:o, s:o, s:o}", "wait_p95_s", a->wait_s, "ebb", point_json(a->ebb),
			 "best_baseline", point_json(a->best), "ebb_over_best_baseline", ratio_json(a->ebb, a->best),
			 "ebb_over_keda_defaults", ratio_json(a->ebb, r->keda), "ebb_over_clairvoyant",
			 ratio_json(a->ebb, r->clairvoyant), "ebb_over_bound", ratio_json(a->ebb, r->bound));
}

static json_t *ratios_json(const struct tune *t, double boot_s)
{
	struct tune_ratios r;
	double share;

	tune_ratios(t, boot_s, &r);
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:s}", "keda_defaults", point_json(r.keda),
			 "clairvoyant", point_json(r.clairvoyant), "bound", point_json(r.bound), "clairvoyant_wait",
			 point_json(r.clairvoyant_wait), "at_keda_wait", at_json(&r.at_keda, &r), "at_two_boots",
			 at_json(&r.at_two_boots, &r), "at_target", at_json(&r.at_target, &r), "at_clairvoyant_wait",
			 at_json(&r.at_clairvoyant, &r), "gap_closed_at_target",
			 tune_gap_closed(&r, &share) == 0 ? json_real(share) : json_null(), "baseline_points_below_ebb",
			 r.below_frontier, "below", r.below);
}

/* Every point in sweep order, and each family's frontier in order of wait. */
static json_t *tune_json(const struct tune *t, double wait, double boot_s)
{
	json_t *frontiers = json_object(), *all = json_array(), *rec = json_null();
	const struct tune_point **pts = xcalloc(t->n ? t->n : 1, sizeof *pts);
	const char *families[TUNE_MAX_FAMILIES];
	int nfamilies = tune_families(families);

	for (size_t k = 0; k < t->n; k++)
		json_array_append_new(all, point_json(&t->points[k]));
	for (int f = 0; f < nfamilies; f++) {
		size_t n = tune_frontier(t, families[f], pts);
		json_t *list = json_array();
		for (size_t k = 0; k < n; k++)
			json_array_append_new(list, point_json(pts[k]));
		if (n)
			json_object_set_new(frontiers, families[f], list);
		else
			json_decref(list);
	}
	free(pts);
	if (t->recommended >= 0) {
		const struct tune_point *p = &t->points[t->recommended];
		rec = json_pack("{s:s, s:f, s:f, s:s}", "policy", p->spec, "cost_usd", p->cost_usd, "wait_p95_s",
				p->wait_p95_s, "config", t->fragment);
	}
	return json_pack("{s:f, s:s, s:o, s:o, s:o, s:I, s:o}", "wait_p95_target_s", wait, "durations",
			 t->oracle_durations ? "oracle" : "estimated", "frontiers", frontiers, "points", all,
			 "recommendation", rec, "settings_left_out", (json_int_t)t->partial, "ratios",
			 ratios_json(t, boot_s));
}

/* --write: the recommended settings into path. 0, or 1 after a message. */
static int write_fragment(const struct tune *t, const char *path)
{
	FILE *f;
	int failed;

	if (t->recommended < 0) {
		fprintf(stderr, "ebb tune: --write %s: nothing to write, no setting meets the wait\n", path);
		return 1;
	}
	failed = !(f = fopen(path, "w"));
	if (f) {
		failed = fputs(t->fragment, f) < 0;
		failed |= fclose(f) != 0; /* closed whether fputs failed or not */
	}
	if (failed)
		fprintf(stderr, "ebb tune: --write %s: cannot write\n", path);
	return failed;
}

/* The progress line, on stderr when it is a terminal: redrawn in place
 * at most five times a second, and when a round of replays ends. */
struct progress_line {
	double drawn_s;
};

static void draw_progress(const struct tune_progress *p, void *arg)
{
	struct progress_line *line = arg;

	if (p->done < p->queued && p->elapsed_s - line->drawn_s < 0.2)
		return;
	line->drawn_s = p->elapsed_s;
	fprintf(stderr, "\r\033[Kebb tune: %zu/%zu replays (the grid: %zu), ", p->done, p->queued, p->grid);
	if (p->best)
		fprintf(stderr, "best ebb within the wait $%.2f (p95 %.0f s)", p->best->cost_usd, p->best->wait_p95_s);
	else
		fprintf(stderr, "no ebb within the wait yet");
	fprintf(stderr, ", %.0f s so far, about %.0f s left", p->elapsed_s, p->left_s);
	fflush(stderr);
}

/* The trace: the word, or serve's history into h. OPTIONS_GO_ON, or the
 * exit code. */
static int load(struct tune_args *a, int argc, char **argv, struct tune_history *h, struct trace *tr)
{
	struct simcli *cli = &a->sim;
	int rc;

	if ((rc = simcli_parse(cli, &usage, a, argc, argv)) != OPTIONS_GO_ON)
		return rc;
	if (!a->history) {
		if (a->publish)
			return options_usage_error(argv[0], "--publish needs --history");
		if (optind == argc)
			return options_usage_error(argv[0], "expected one trace file, or --history WHEN");
		return simcli_load(cli, argv[optind], tr) == 0 ? OPTIONS_GO_ON : 1;
	}
	if (optind < argc)
		return options_usage_error(argv[0], "give a trace file or --history, not both");
	if (tune_history_fetch(h, argv[0], &a->conn, a->history) != 0)
		return 1;
	return simcli_load(cli, h->path, tr) == 0 ? OPTIONS_GO_ON : 1;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_args a = {.write_path = NULL};
	struct simcli *cli = &a.sim;
	struct progress_line line = {0};
	struct tune_options to = {0};
	struct tune_history h = {.path = ""};
	struct tune t;
	struct trace tr;
	char err[600];
	int rc;

	if ((rc = load(&a, argc, argv, &h, &tr)) != OPTIONS_GO_ON) {
		tune_history_done(&h);
		return rc;
	}
	to.jobs = a.jobs ? a.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	to.exhaustive = a.exhaustive;
	if (isatty(STDERR_FILENO)) { /* scripts and tests see the output unchanged */
		to.progress = draw_progress;
		to.arg = &line;
	}
	rc = tune_run(&tr, &cli->o, cli->offers, a.wait, &to, &t, err, sizeof err);
	if (to.progress)
		fprintf(stderr, "\r\033[K");
	if (rc != 0 || (a.history && tune_history_replay(&h, &tr, cli, err, sizeof err) != 0)) {
		fprintf(stderr, "ebb tune: %s\n", err);
		tune_history_done(&h);
		trace_free(&tr);
		return 1;
	}
	if (t.partial)
		fprintf(stderr, "ebb tune: note: %zu settings left out: their replay ran only part of the trace"
			" (`ebb sim --policy` on one says why), %s the first\n", t.partial, t.partial_spec);
	if (cli->json) {
		json_t *j = tune_json(&t, a.wait, (double)cli->o.offers[0].boot_ms / 1000.0);
		if (a.history)
			json_object_set_new(j, "history", tune_history_json(&h, &t));
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		if (t.oracle_durations)
			printf("%s\n", simout_oracle_note);
		print_table(&t, stdout);
		print_ratios(&t, &cli->o, stdout);
		if (t.recommended >= 0)
			printf("\n%s", t.fragment);
		else
			printf("\nno setting of ebb reaches a p95 wait of %.0f s on this trace\n", a.wait);
		if (a.history)
			tune_history_print(&h, &t, stdout);
	}
	rc = a.write_path ? write_fragment(&t, a.write_path) : 0;
	if (a.publish && tune_history_publish(&h, &t, argv[0], &a.conn) != 0)
		rc = 1;
	if (cli->plot && simout_frontier_plot(&t, cli->plot, err, sizeof err) != 0) {
		fprintf(stderr, "ebb tune: %s\n", err);
		rc = 1;
	}
	tune_history_done(&h);
	tune_free(&t);
	trace_free(&tr);
	return rc;
}
