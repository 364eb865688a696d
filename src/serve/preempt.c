/* See preempt.h. */
#include "serve/preempt.h"

#include <stdio.h>

int preempt_add(struct preempts *p, int64_t job, int64_t token, const char *reason)
{
	if (preempt_reason(p, job, token))
		return 0;
	if (p->n == PREEMPT_MAX)
		return -1;
	p->at[p->n].job = job;
	p->at[p->n].token = token;
	snprintf(p->at[p->n].reason, sizeof p->at[p->n].reason, "%s", reason);
	p->n++;
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
