/* See view.h. */
#include "serve/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "policy/classes.h"
#include "policy/durations.h"
#include "policy/lease_order.h"
#include "policy/settings.h"
#include "serve/team_state.h"

/* A callback's return when memory ran out: it stops the walk. */
#define VIEW_NOMEM (-2)

/* The newest finished jobs, as policy/durations.h takes them: oldest
 * first, each type by a number, its index among the types' names sorted
 * (looked up for each row of demand). */
struct medians {
	struct durations *d;
	struct {
		char type[CONF_NAME_MAX + 1];
		int64_t run_ms;
	} rows[DURATIONS_HISTORY]; /* newest first, as the store gives them */
	int nrows;
	const char *names[DURATIONS_HISTORY];
	int nnames;
};

static int add_duration(void *arg, const char *type, int64_t run_ms)
{
	struct medians *m = arg;

	if (m->nrows == DURATIONS_HISTORY)
		return 0;
	snprintf(m->rows[m->nrows].type, sizeof m->rows[0].type, "%s", type);
	m->rows[m->nrows++].run_ms = run_ms;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The type's number, -1 for one no finished job had. */
static int type_number(const struct medians *m, const char *type)
{
	const char *const *at = bsearch(&type, m->names, (size_t)m->nnames, sizeof *m->names, by_name);

	return at ? (int)(at - m->names) : -1;
}

/* The rows read into the history, oldest first; VIEW_NOMEM or 0. */
static int medians_fill(struct medians *m)
{
	int n = 0;

	if (!(m->d = durations_new()))
		return VIEW_NOMEM;
	for (int k = 0; k < m->nrows; k++)
		m->names[k] = m->rows[k].type;
	qsort(m->names, (size_t)m->nrows, sizeof *m->names, by_name);
	for (int k = 0; k < m->nrows; k++) {
		if (n == 0 || strcmp(m->names[n - 1], m->names[k]) != 0)
			m->names[n++] = m->names[k];
	}
	m->nnames = n;
	for (int k = m->nrows; k-- > 0;) {
		if (durations_add(m->d, type_number(m, m->rows[k].type), m->rows[k].run_ms) == -2)
			return VIEW_NOMEM;
	}
	return 0;
}

/* A job's run time to expect, in seconds: its est_s, else its type's. */
static double estimate_s(const struct medians *m, const char *type, int64_t est_s, const struct plan_settings *st)
{
	return (double)durations_estimate_ms(m->d, type_number(m, type), est_s * 1000, st->default_est_ms) / 1000.0;
}

/* The view's class of (GPUs, VRAM, lane, team), added when new
 * (policy/classes.h). Without teams, every job is of team 0. */
static struct plan_class *class_for(struct view *b, int gpus, const char *type, int min_vram_gb, const char *lane,
				    const char *team_name, int64_t oldest_ms)
{
	const struct plan_settings *st = b->settings;
	int rank = lease_lane_rank(st, lane), team = teams_index(st->teams, st->nteams, team_name);
	double share = classes_gpu_share(st, type);
	struct plan_class *c = classes_find(b->classes, &b->nclasses, b->nclasses, st, gpus, share, min_vram_gb, rank,
					    team, oldest_ms), *grown;

	if (c)
		return c;
	if (!(grown = mem_realloc(b->classes, (size_t)(b->nclasses + 1) * sizeof *b->classes)))
		return NULL;
	b->classes = grown;
	return classes_find(b->classes, &b->nclasses, b->nclasses + 1, st, gpus, share, min_vram_gb, rank, team,
			    oldest_ms);
}

static int add_demand(void *arg, const struct demand_row *r)
{
	struct view *b = arg;
	struct plan_class *c = class_for(b, r->gpus, r->type, r->min_vram_gb, r->lane, r->team, r->oldest_ms);

	if (!c)
		return VIEW_NOMEM;
	classes_add_setup(c, classes_setup_ms(b->settings, b->setups, r->type));
	classes_add_queued(c, r->priority, r->jobs, r->items,
			   (double)r->est_s + (double)r->jobs_without_est * estimate_s(b->med, r->type, 0, b->settings),
			   r->oldest_ms);
	return 0;
}

/* Arrivals count with weight exp(-age / arrival_window), as the
 * simulator's running sums do; the rows are read back from the newest to
 * ARRIVALS_HORIZON windows ago (weights under 1%), at most ARRIVALS_MAX
 * of them. */
#define ARRIVALS_HORIZON 5
#define ARRIVALS_MAX 10000

struct arrivals {
	struct view *b;
	int64_t now_ms, oldest_ms;
	double window_s;
	int n;
};

static int add_arrival(void *arg, const struct arrival_row *r)
{
	struct arrivals *a = arg;
	struct plan_class *c = class_for(a->b, r->gpus, r->type, r->min_vram_gb, r->lane, r->team, a->now_ms);
	double w = exp(-(double)(a->now_ms - r->created_ms) / 1000.0 / a->window_s) / a->window_s;
	double est = estimate_s(a->b->med, r->type, r->est_s, a->b->settings);

	if (!c)
		return VIEW_NOMEM;
	c->arrival_jobs_per_s += w;
	c->arrival_work_per_s += w * est;
	a->oldest_ms = r->created_ms;
	a->n++;
	return 0;
}

static int add_arrivals(struct view *b, struct store *st, int64_t now_ms, int64_t window_ms)
{
	struct arrivals a = {.b = b, .now_ms = now_ms, .window_s = (double)window_ms / 1000.0};
	int rc;

	if (window_ms <= 0)
		return 0;
	if ((rc = store_arrivals(st, now_ms - ARRIVALS_HORIZON * window_ms, ARRIVALS_MAX, add_arrival, &a)) != 0)
		return rc;
	/* A stream too fast for the rows read: they cover only the last span
	 * seconds, whose weights add up to 1 - exp(-span / window) of a steady
	 * rate's; scaled up to the whole. */
	if (a.n == ARRIVALS_MAX) {
		double covered = 1 - exp(-(double)(now_ms - a.oldest_ms) / (double)window_ms);
		for (int k = 0; covered > 0 && k < b->nclasses; k++) {
			b->classes[k].arrival_jobs_per_s /= covered;
			b->classes[k].arrival_work_per_s /= covered;
		}
	}
	return 0;
}

/* The fleet in the view, each with its record and the estimated end of
 * its job. */
struct fleet_walk {
	struct view *b;
	struct store *st;
	const struct preempts *preempts;
};

/* The GPUs of a running instance that none of the jobs leased on it
 * holds: room for more beside them. */
static int free_gpus(struct store *st, const struct instance *inst, int *out)
{
	struct job_on on[INSTANCE_GPUS_MAX];
	int n, rc = store_job_leased_on(st, inst->id, on, INSTANCE_GPUS_MAX, &n);

	*out = 0;
	if (rc != 0 || n == 0) /* its job's lease not in the store: all of it held */
		return rc;
	*out = inst->gpus;
	for (int k = 0; k < n; k++)
		*out -= on[k].gpus;
	if (*out < 0)
		*out = 0;
	return 0;
}

static int add_instance(void *arg, const struct instance *inst)
{
	struct fleet_walk *w = arg;
	struct view *b = w->b;
	struct plan_instance *p, *fleet;
	struct instance *records;
	int offer = offer_index(b->offers, b->noffers, inst->offer), rc;
	struct job job;

	if (offer < 0)
		offer = 0; /* its offer left the config: still counted against the limits */
	if (!(fleet = mem_realloc(b->fleet, (size_t)(b->nfleet + 1) * sizeof *b->fleet)))
		return VIEW_NOMEM;
	b->fleet = fleet;
	if (!(records = mem_realloc(b->records, (size_t)(b->nfleet + 1) * sizeof *b->records)))
		return VIEW_NOMEM;
	b->records = records;
	b->records[b->nfleet] = *inst;
	p = &b->fleet[b->nfleet++];
	memset(p, 0, sizeof *p);
	p->id = inst->id;
	p->offer = offer;
	p->market = inst->market;
	p->state = inst->state;
	p->running = inst->job_id != 0;
	p->launched_ms = inst->launched_ms;
	p->idle_since_ms = inst->idle_since_ms;
	if (inst->job_id) {
		if ((rc = free_gpus(w->st, inst, &p->free_gpus)) != 0 || (rc = store_job_get(w->st, inst->job_id, &job)) < 0)
			return rc;
		if (rc == 0) {
			double est = estimate_s(b->med, job.type, job.est_s, b->settings);
			classes_running(p, &(struct running_job){
				.since_ms = job.started_ms, .until_ms = job.started_ms + (int64_t)(est * 1000.0),
				.team = teams_index(b->settings->teams, b->settings->nteams, job.team),
				.gpus = job.gpus, .priority = job.priority,
				.lane_rank = lease_lane_rank(b->settings, job.lane)});
			p->preempting = w->preempts && preempt_reason(w->preempts, job.id, job.lease_token);
			job_free(&job);
		}
	}
	return 0;
}

/* A walk's result: 0, or -1 with why in v->error. */
static int walked(struct view *v, struct store *st, int rc)
{
	if (rc == 0)
		return 0;
	snprintf(v->error, sizeof v->error, "%s", rc == VIEW_NOMEM ? "out of memory" : store_error(st));
	return -1;
}

/* The reference work the finished runs on an offer did, at the offer's
 * speed in force, and the launches of every offer. */
struct launch_work {
	const struct offer *offers;
	int noffers;
	double work_s;
	int64_t launches;
};

static int add_launch_work(void *arg, const struct offer_stat *stat)
{
	struct launch_work *w = arg;

	for (int k = 0; k < w->noffers; k++) {
		if (strcmp(w->offers[k].name, stat->offer) == 0)
			w->work_s += (double)stat->run_ms / 1000.0 * (w->offers[k].speed > 0 ? w->offers[k].speed : 1);
	}
	w->launches += stat->launches;
	return 0;
}

int view_build(struct view *v, struct store *st, const struct plan_settings *settings, const int64_t *setups,
	       int64_t now_ms, const struct offer *offers, int noffers, const struct preempts *preempts)
{
	struct fleet_walk fw = {.b = v, .st = st, .preempts = preempts};
	struct launch_work lw = {.offers = offers, .noffers = noffers};

	memset(v, 0, sizeof *v);
	v->settings = settings;
	v->setups = setups;
	v->offers = offers;
	v->noffers = noffers;
	if (!(v->med = mem_calloc(1, sizeof *v->med)))
		return walked(v, st, VIEW_NOMEM);
	if (walked(v, st, store_recent_durations(st, DURATIONS_HISTORY, add_duration, v->med)) != 0 ||
	    walked(v, st, medians_fill(v->med)) != 0 ||
	    walked(v, st, store_instance_list(st, add_instance, &fw)) != 0 ||
	    walked(v, st, store_demand(st, add_demand, v)) != 0 ||
	    walked(v, st, add_arrivals(v, st, now_ms, settings->arrival_window_ms)) != 0 ||
	    walked(v, st, store_offer_stats(st, add_launch_work, &lw)) != 0)
		return -1;
	v->work_per_launch_s = lw.launches > 0 ? lw.work_s / (double)lw.launches : 0;
	if (settings->nteams) {
		/* The budgets in force: the config's, or an admin's since. */
		struct plan_team teams[CONF_MAX_TEAMS + 1];
		double spend[CONF_MAX_TEAMS + 1];
		memcpy(teams, settings->teams, sizeof teams);
		if (walked(v, st, team_budgets_apply(st, teams, settings->nteams)) != 0 ||
		    walked(v, st, team_month_spend(st, teams, settings->nteams, now_ms, spend)) != 0)
			return -1;
		v->over_budget = teams_over_budget(teams, settings->nteams, spend);
	}
	return 0;
}

void view_free(struct view *v)
{
	free(v->classes);
	free(v->fleet);
	free(v->records);
	if (v->med)
		durations_free(v->med->d);
	free(v->med);
	memset(v, 0, sizeof *v);
}
