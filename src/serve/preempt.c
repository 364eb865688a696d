/* See preempt.h. */
#include "serve/preempt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static void count(struct preempts *p, const char *team)
{
	int k = 0;

	while (k < p->nteams && strcmp(p->count[k].team, team) != 0)
		k++;
	if (k == p->nteams) {
		if (p->nteams == CONF_MAX_TEAMS + 1)
			return;
		snprintf(p->count[k].team, sizeof p->count[k].team, "%s", team);
		p->nteams++;
	}
	p->count[k].n++;
}

int preempt_add(struct preempts *p, int64_t job, int64_t token, const char *team, const char *reason)
{
	if (preempt_reason(p, job, token))
		return 0;
	if (p->n == PREEMPT_MAX)
		return -1;
	p->at[p->n].job = job;
	p->at[p->n].token = token;
	snprintf(p->at[p->n].reason, sizeof p->at[p->n].reason, "%s", reason);
	p->n++;
	if (team)
		count(p, team);
	if (p->added)
		p->added(p->added_arg, job);
	return 1;
}

void preempt_on_add(struct preempts *p, void (*fn)(void *arg, int64_t job), void *arg)
{
	p->added = fn;
	p->added_arg = arg;
}

const char *preempt_reason(const struct preempts *p, int64_t job, int64_t token)
{
	for (int k = 0; k < p->n; k++) {
		if (p->at[k].job == job && p->at[k].token == token)
			return p->at[k].reason;
	}
	return NULL;
}

/* A preempt decision, and the job it names (the lease on its instance
 * begun last by then; id 0: none found yet). */
struct named {
	int64_t instance, at_ms, job, token, started_ms;
	char reason[sizeof ((struct preempts *)0)->at[0].reason];
};

struct restore {
	struct named *d;
	int n;
};

static int add_decision(void *arg, const struct decision *d)
{
	struct restore *r = arg;
	struct named *x;

	if (strcmp(d->kind, "preempt") != 0 || d->instance <= 0)
		return 0;
	x = &r->d[r->n++];
	memset(x, 0, sizeof *x);
	x->instance = d->instance;
	x->at_ms = d->at_ms;
	snprintf(x->reason, sizeof x->reason, "%s", d->reason ? d->reason : "");
	return 0;
}

static int match_lease(void *arg, const struct job *job)
{
	struct restore *r = arg;

	for (int k = 0; k < r->n; k++) {
		struct named *x = &r->d[k];
		if (job->instance == x->instance && job->started_ms <= x->at_ms && job->started_ms >= x->started_ms) {
			x->job = job->id;
			x->token = job->lease_token;
			x->started_ms = job->started_ms;
		}
	}
	return 0;
}

int preempt_restore(struct preempts *p, struct store *st)
{
	struct restore r = {mem_calloc(PREEMPT_RESTORE_DECISIONS, sizeof *r.d), 0};
	struct job_filter leased = {.state = JOB_LEASED, .limit = -1};
	int rc;

	if (!r.d)
		return -1;
	rc = store_decision_list(st, INT64_MAX, PREEMPT_RESTORE_DECISIONS, add_decision, &r) != 0 ||
	     store_job_list(st, &leased, match_lease, &r) != 0 ? -1 : 0;
	for (int k = 0; k < r.n; k++) {
		if (r.d[k].job && preempt_add(p, r.d[k].job, r.d[k].token, NULL, r.d[k].reason) < 0)
			break;
	}
	free(r.d);
	return rc;
}

void preempt_prune(struct preempts *p, int (*still)(void *arg, int64_t job, int64_t token), void *arg)
{
	int n = 0;

	for (int k = 0; k < p->n; k++) {
		if (still(arg, p->at[k].job, p->at[k].token))
			p->at[n++] = p->at[k];
	}
	p->n = n;
}
