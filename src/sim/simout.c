/* Output of the simulator (see simout.h). The chart is plain SVG text:
 * three panels sharing the time axis, one colour per policy. */
#include "sim/simout_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "sim/tune.h"

const char simout_oracle_note[] =
	"# --oracle-durations: ebb's plan() was told each job's exact duration from the trace,"
	" which serve never knows: a what-if";

/* Whether ebb was told the trace's durations in one of the replays. */
static int told_oracle(const struct sim_result *r, int n)
{
	for (int k = 0; k < n; k++) {
		if (strcmp(r[k].durations, "oracle") == 0)
			return 1;
	}
	return 0;
}

void simout_table(const struct sim_result *r, int n, FILE *out)
{
	/* First, so that no figure below is read as what serve would do. */
	int width = 44; /* the policy column: as wide as its longest name, whole */

	if (told_oracle(r, n))
		fprintf(out, "%s\n", simout_oracle_note);
	for (int k = 0; k < n; k++) {
		int len = (int)strlen(r[k].policy);
		width = len > width ? len : width;
	}
	fprintf(out, "%-*s %10s %9s %9s %9s %9s %9s %6s %8s %8s %8s %8s %8s %8s %5s\n", width, "POLICY", "COST $", "TAIL $",
		"$/JOB", "GPU-H", "BUSY", "IDLE", "COLD", "RECLAIMS", "REQUEUED", "WAIT P50", "P95", "P99", "REQ P95",
		"MAX");
	for (int k = 0; k < n; k++) {
		const struct sim_result *x = &r[k];
		fprintf(out, "%-*s %10.2f %9.2f %9.5f %9.1f %9.1f %9.1f %6lld %8lld %8lld %7.1fs %7.1fs %7.1fs %7.1fs"
			" %5lld\n", width, x->policy, x->cost_usd, x->tail_cost_usd,
			x->jobs_done ? x->cost_usd / (double)x->jobs_done : 0,
			x->gpu_hours_billed, x->gpu_hours_busy, x->idle_gpu_hours, (long long)x->cold_starts,
			(long long)x->reclaims, (long long)x->requeues, x->wait_p50_s, x->wait_p95_s, x->wait_p99_s,
			x->requeue_wait_p95_s, (long long)x->max_instances);
	}
	simout_teams_table(r, n, out);
	for (int k = 0; k < n; k++) {
		if (r[k].stalled)
			fprintf(out, "note: %s stopped: no job ended from %.1f h on while work waited (spot reclaimed"
				" faster than its jobs run?); it ran %lld of %lld jobs, its figures are up to then\n",
				r[k].policy, (double)r[k].stalled_ms / 3600000.0, (long long)r[k].jobs_done,
				(long long)r[k].jobs);
		if (r[k].tail_cut)
			fprintf(out, "note: %s still held more than its standing floor %.0f days after its last job;"
				" its tail is cut there\n", r[k].policy, (double)r[k].tail_ms / 86400000.0);
		if (r[k].reclaims_missed)
			fprintf(out, "note: %s: %lld of the --reclaims found no spot instance to reclaim (not"
				" launched, gone, on demand, the job not running, or after the end)\n", r[k].policy,
				(long long)r[k].reclaims_missed);
		if (r[k].unplaceable)
			fprintf(out, "note: %s left out %lld of %lld jobs: they fit none of its offers\n", r[k].policy,
				(long long)r[k].unplaceable, (long long)r[k].jobs);
		if (!r[k].stalled && r[k].jobs_done + r[k].unplaceable < r[k].jobs)
			fprintf(out, "note: %s ran %lld of %lld jobs: the rest were queued when nothing more could"
				" happen (do its limits allow no launch?)\n", r[k].policy, (long long)r[k].jobs_done,
				(long long)r[k].jobs);
	}
}

json_t *simout_result_json(const struct sim_result *x)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:f, s:f, s:f, s:f,"
			 " s:f, s:I, s:I, s:b}",
			 "policy", x->policy, "durations", x->durations, "jobs", (json_int_t)x->jobs_done, "jobs_left_out",
			 (json_int_t)x->unplaceable, "cost_usd", x->cost_usd, "tail_cost_usd", x->tail_cost_usd, "tail_s",
			 (double)x->tail_ms / 1000.0, "tail_cut", x->tail_cut, "cost_per_job_usd",
			 x->jobs_done ? x->cost_usd / (double)x->jobs_done : 0.0, "gpu_hours_billed",
			 x->gpu_hours_billed, "gpu_hours_busy", x->gpu_hours_busy, "idle_gpu_hours",
			 x->idle_gpu_hours, "cold_starts", (json_int_t)x->cold_starts, "reclaims",
			 (json_int_t)x->reclaims, "requeues", (json_int_t)x->requeues, "wait_p50_s", x->wait_p50_s,
			 "wait_p95_s", x->wait_p95_s, "wait_p99_s", x->wait_p99_s, "wait_mean_s", x->wait_mean_s,
			 "requeue_wait_p95_s", x->requeue_wait_p95_s, "max_instances", (json_int_t)x->max_instances,
			 "end_s", (json_int_t)(x->end_ms / 1000), "stalled", x->stalled);

	/* Only where the trace placed reclaims: the others have none. */
	if (o && x->reclaims_missed && json_object_set_new(o, "reclaims_missed", json_integer(x->reclaims_missed))) {
		json_decref(o);
		return NULL;
	}
	if (o && simout_teams_json(x, o) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void simout_json(const struct sim_result *r, int n, FILE *out)
{
	json_t *a = json_array();

	for (int k = 0; k < n; k++)
		json_array_append_new(a, simout_result_json(&r[k]));
	json_dumpf(a, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	fputc('\n', out);
	json_decref(a);
}

int64_t simout_sample_step(const struct trace *t)
{
	int64_t span = t->n ? t->jobs[t->n - 1].submit_ms : 0;
	return span / 600 > 1000 ? span / 600 : 1000;
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

#define W 960
#define PANEL_H 220
#define LEFT 80
#define RIGHT 220
#define TOP 40

/* The instance panel has one line per policy and offer: the colour
 * names the policy, the dash the offer. */
static const char *const dashes[] = {"", "7,4", "2,3", "9,3,2,3", "4,4", "1,5", "12,4", "6,2,2,2,2,2"};
#define NDASHES (sizeof dashes / sizeof *dashes)

enum panel_kind { QUEUE, INSTANCES, COST };

struct panel {
	const char *title, *unit;
	enum panel_kind kind;
};

struct timeline {
	const struct sim_result *r;
	int n;
	const struct sim_options *o;
	double t_max_h, t_step_h;
	unsigned char used[SIM_MAX_OFFERS]; /* offers some policy ran an instance of */
	int nused;
};

/* The value of one line of a panel: offer is used by INSTANCES only. */
static double value(const struct sim_sample *x, enum panel_kind kind, int offer)
{
	return kind == QUEUE ? x->queued : kind == COST ? x->cost : x->instances[offer];
}

/* Whether the policy of r ever ran an instance of offer j. */
static int ran_offer(const struct sim_result *r, int j)
{
	for (size_t s = 0; s < r->nsamples; s++) {
		if (r->samples[s].instances[j])
			return 1;
	}
	return 0;
}

/* A round number at or above v: 1, 2 or 5 times a power of ten. */
static double nice(double v)
{
	static const double steps[] = {1, 2, 5, 10};
	double p = v > 0 ? pow(10, floor(log10(v))) : 1;

	for (size_t k = 0; k < 4; k++) {
		if (steps[k] * p >= v)
			return steps[k] * p;
	}
	return 10 * p;
}

/* The lines of a panel: one per policy, or one per policy and offer. */
static void draw_lines(FILE *f, const struct timeline *tl, const struct panel *pn, int y0, double ymax)
{
	int pw = W - LEFT - RIGHT;

	for (int k = 0; k < tl->n; k++) {
		const struct sim_result *r = &tl->r[k];
		for (int j = 0; j < (pn->kind == INSTANCES ? tl->o->noffers : 1); j++) {
			if (!r->nsamples || (pn->kind == INSTANCES && !ran_offer(r, j)))
				continue;
			fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5'", colours[k % 10]);
			if (pn->kind == INSTANCES && *dashes[j % NDASHES])
				fprintf(f, " stroke-dasharray='%s'", dashes[j % NDASHES]);
			fprintf(f, " points='");
			for (size_t s = 0; s < r->nsamples; s++) {
				const struct sim_sample *x = &r->samples[s];
				double px = LEFT + (double)x->t_ms / 3600000.0 / tl->t_max_h * pw;
				double py = y0 + PANEL_H - value(x, pn->kind, j) / ymax * PANEL_H;
				fprintf(f, "%.1f,%.1f ", px, py);
			}
			fprintf(f, "'/>\n");
		}
	}
}

static void draw_panel(FILE *f, const struct timeline *tl, const struct panel *pn, int y0)
{
	double vmax = 0, ymax;
	int pw = W - LEFT - RIGHT;

	for (int k = 0; k < tl->n; k++) {
		for (size_t s = 0; s < tl->r[k].nsamples; s++) {
			for (int j = 0; j < (pn->kind == INSTANCES ? tl->o->noffers : 1); j++)
				vmax = fmax(vmax, value(&tl->r[k].samples[s], pn->kind, j));
		}
	}
	ymax = nice(vmax > 0 ? vmax : 1);
	fprintf(f, "<text x='%d' y='%d' font-size='14' font-weight='bold'>%s</text>\n", LEFT, y0 - 8, pn->title);
	fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n", LEFT, y0, pw, PANEL_H);
	for (int g = 0; g <= 4; g++) {
		int y = y0 + PANEL_H - g * PANEL_H / 4;
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#ddd'/>\n", LEFT, y, LEFT + pw, y);
		fprintf(f, "<text x='%d' y='%d' font-size='11' text-anchor='end'>%g</text>\n", LEFT - 6, y + 4,
			ymax * g / 4);
	}
	fprintf(f, "<text x='16' y='%d' font-size='12' transform='rotate(-90 16 %d)' text-anchor='middle'>%s</text>\n",
		y0 + PANEL_H / 2, y0 + PANEL_H / 2, pn->unit);
	draw_lines(f, tl, pn, y0, ymax);
	/* Ticks at round hours; the last one may fall short of the edge. */
	for (double t = 0; t <= tl->t_max_h * (1 + 1e-9); t += tl->t_step_h) {
		double x = LEFT + t / tl->t_max_h * pw;
		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#333'/>\n", x, y0 + PANEL_H, x,
			y0 + PANEL_H + 4);
		fprintf(f, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%g</text>\n", x,
			y0 + PANEL_H + 16, t);
	}
}

/* Policies by colour; below them, when more than one offer was run,
 * offers by dash. */
static void draw_legend(FILE *f, const struct timeline *tl)
{
	int y = TOP + 10, x = W - RIGHT + 14;

	for (int k = 0; k < tl->n; k++, y += 18) {
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>\n", x, y, x + 20, y,
			colours[k % 10]);
		fprintf(f, "<text x='%d' y='%d' font-size='11'>%.28s%s</text>\n", x + 26, y + 4, tl->r[k].policy,
			tl->r[k].nsamples ? "" : " (no timeline)");
	}
	if (tl->nused < 2)
		return;
	y = TOP + (PANEL_H + 60) + 10; /* beside the instance panel */
	fprintf(f, "<text x='%d' y='%d' font-size='11' font-weight='bold'>offer</text>\n", x, y);
	for (int j = 0; j < tl->o->noffers; j++) {
		if (!tl->used[j])
			continue;
		y += 18;
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333' stroke-width='1.5'%s%s%s/>\n", x, y,
			x + 28, y, *dashes[j % NDASHES] ? " stroke-dasharray='" : "", dashes[j % NDASHES],
			*dashes[j % NDASHES] ? "'" : "");
		fprintf(f, "<text x='%d' y='%d' font-size='11'>%.24s</text>\n", x + 34, y + 4, tl->o->offers[j].name);
	}
}

int simout_plot(const struct sim_result *r, int n, const struct sim_options *o, const char *path,
		char *err, size_t errsize)
{
	static const struct panel panels[] = {
		{"Queue depth", "jobs queued", QUEUE},
		{"Instances by offer", "instances", INSTANCES},
		{"Cumulative cost", "USD", COST},
	};
	struct timeline tl = {.r = r, .n = n, .o = o};
	FILE *f = fopen(path, "w");
	int h = TOP + 3 * (PANEL_H + 60) + 20;

	if (!f) {
		snprintf(err, errsize, "--plot %s: cannot write", path);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		if (r[k].nsamples)
			tl.t_max_h = fmax(tl.t_max_h, (double)r[k].samples[r[k].nsamples - 1].t_ms / 3600000.0);
		for (int j = 0; j < o->noffers; j++)
			tl.used[j] |= (unsigned char)ran_offer(&r[k], j);
	}
	for (int j = 0; j < o->noffers; j++)
		tl.nused += tl.used[j];
	tl.t_max_h = tl.t_max_h > 0 ? tl.t_max_h : 1;
	tl.t_step_h = nice(tl.t_max_h / 8);
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>\n"
		   "<rect width='100%%' height='100%%' fill='white'/>\n", W, h);
	for (int p = 0; p < 3; p++)
		draw_panel(f, &tl, &panels[p], TOP + p * (PANEL_H + 60));
	fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle'>time (hours from the trace's start)</text>\n",
		LEFT + (W - LEFT - RIGHT) / 2, h - 6);
	draw_legend(f, &tl);
	if (told_oracle(r, n))
		fprintf(f, "<text x='%d' y='16' font-size='11'>%s</text>\n", LEFT, simout_oracle_note + 2);
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0) {
		snprintf(err, errsize, "--plot %s: write failed", path);
		return -1;
	}
	return 0;
}

int simout_jobs(const struct sim_result *r, int n, const struct trace *t, const char *path, char *err,
		size_t errsize)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errsize, "--jobs %s: cannot write", path);
		return -1;
	}
	fprintf(f, "policy,job,submit_s,start_s,wait_s,last_start_s\n");
	for (int k = 0; k < n; k++) {
		for (size_t j = 0; r[k].first_start_ms && j < t->n; j++) {
			int64_t at = r[k].first_start_ms[j], submit = t->jobs[j].submit_ms;
			fprintf(f, "\"%s\",%zu,%.3f,", r[k].policy, j, (double)submit / 1000.0);
			if (at >= 0)
				fprintf(f, "%.3f,%.3f,%.3f\n", (double)at / 1000.0, (double)(at - submit) / 1000.0,
					(double)r[k].last_start_ms[j] / 1000.0);
			else
				fprintf(f, ",,\n");
		}
	}
	if (fclose(f) != 0) {
		snprintf(err, errsize, "--jobs %s: write failed", path);
		return -1;
	}
	return 0;
}

/* Log scales: waits and costs span orders of magnitude (an always-on
 * fleet waits 0 s and costs ten times the rest). */
struct logaxis {
	double lo, hi; /* powers of ten */
	int from, to;  /* pixels */
};

static double log_pos(const struct logaxis *a, double v)
{
	double x = log10(v > pow(10, a->lo) ? v : pow(10, a->lo));
	return a->from + (x - a->lo) / (a->hi - a->lo) * (a->to - a->from);
}

int simout_frontier_plot(const struct tune *t, const char *path, char *err, size_t errsize)
{
	const struct tune_point **pts = xcalloc(t->n ? t->n : 1, sizeof *pts);
	const char *families[TUNE_MAX_FAMILIES];
	int nfamilies = tune_families(families);
	const int w = 900, h = 560, left = 80, right = 160, top = 40, bottom = 60;
	double cmin = INFINITY, cmax = 0, wmax = 1;
	struct logaxis xa, ya;
	FILE *f = fopen(path, "w");

	if (!f) {
		free(pts);
		snprintf(err, errsize, "--plot %s: cannot write", path);
		return -1;
	}
	for (size_t k = 0; k < t->n; k++) {
		const struct tune_point *p = &t->points[k];
		if (!p->on_frontier || p->cost_usd <= 0)
			continue;
		cmin = fmin(cmin, p->cost_usd);
		cmax = fmax(cmax, p->cost_usd);
		wmax = fmax(wmax, p->wait_p95_s);
	}
	if (!(cmax > 0))
		cmin = 1, cmax = 10;
	xa = (struct logaxis){0, fmax(1, ceil(log10(wmax))), left, w - right};
	ya = (struct logaxis){floor(log10(cmin)), fmax(floor(log10(cmin)) + 1, ceil(log10(cmax))), h - bottom, top};
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>\n"
		   "<rect width='100%%' height='100%%' fill='white'/>\n"
		   "<text x='%d' y='24' font-size='14' font-weight='bold'>Cost against p95 wait: each policy's frontier"
		   " (log scales; lower left is better)</text>\n"
		   "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n",
		w, h, left, left, top, w - left - right, h - top - bottom);
	for (double e = xa.lo; e <= xa.hi; e++) {
		double x = log_pos(&xa, pow(10, e));
		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#eee'/>\n", x, top, x, h - bottom);
		fprintf(f, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%s%g</text>\n", x, h - bottom + 16,
			e == xa.lo ? "&#8804;" : "", pow(10, e));
	}
	for (double e = ya.lo; e <= ya.hi; e++) {
		double y = log_pos(&ya, pow(10, e));
		fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#eee'/>\n", left, y, w - right, y);
		fprintf(f, "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n", left - 6, y + 4,
			pow(10, e));
	}
	fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle'>p95 wait (seconds)</text>\n",
		left + (w - left - right) / 2, h - 20);
	fprintf(f, "<text x='18' y='%d' font-size='12' transform='rotate(-90 18 %d)' text-anchor='middle'>cost (USD)</text>\n",
		h / 2, h / 2);
	for (int fam = 0; pts && fam < nfamilies; fam++) {
		const char *col = colours[fam % 10];
		size_t m = tune_frontier(t, families[fam], pts);
		if (!m)
			continue;
		/* The points in order of wait, joined by a line. */
		fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", col);
		for (size_t k = 0; k < m; k++)
			fprintf(f, "%.1f,%.1f ", log_pos(&xa, pts[k]->wait_p95_s), log_pos(&ya, pts[k]->cost_usd));
		fprintf(f, "'/>\n");
		for (size_t k = 0; k < m; k++)
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'><title>%s: $%.2f, p95 %.0f s</title></circle>\n",
				log_pos(&xa, pts[k]->wait_p95_s), log_pos(&ya, pts[k]->cost_usd), col, pts[k]->spec,
				pts[k]->cost_usd, pts[k]->wait_p95_s);
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>"
			   "<text x='%d' y='%d' font-size='12'>%s</text>\n",
			w - right + 12, top + 14 + fam * 18, w - right + 32, top + 14 + fam * 18, col, w - right + 38,
			top + 18 + fam * 18, families[fam]);
	}
	free(pts);
	if (t->oracle_durations)
		fprintf(f, "<text x='%d' y='%d' font-size='11'>%s</text>\n", left, h - 4, simout_oracle_note + 2);
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0) {
		snprintf(err, errsize, "--plot %s: write failed", path);
		return -1;
	}
	return 0;
}
