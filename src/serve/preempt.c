/* See preempt.h. */
#include "serve/preempt.h"

#include <stdio.h>
#include <string.h>

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
	count(p, team);
	return 1;
}

const char *preempt_reason(const struct preempts *p, int64_t job, int64_t token)
{
	for (int k = 0; k < p->n; k++) {
		if (p->at[k].job == job && p->at[k].token == token)
			return p->at[k].reason;
	}
	return NULL;
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
