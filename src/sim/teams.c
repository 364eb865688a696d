/* The replay's results per team of the trace (sim.h): jobs, their run
 * cost and their waits, counted as the whole replay's are (engine.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

int sim_teams_start(struct sim *s)
{
	/* One team is the whole replay: nothing more to say, nor to count. */
	if (s->t->nteams < 2)
		return 0;
	if (!(s->r->teams = sim_grown(s, NULL, (size_t)s->t->nteams, sizeof *s->r->teams)))
		return -1;
	memset(s->r->teams, 0, (size_t)s->t->nteams * sizeof *s->r->teams);
	s->r->nteams = s->t->nteams;
	for (int k = 0; k < s->t->nteams; k++)
		snprintf(s->r->teams[k].name, sizeof s->r->teams[k].name, "%s", s->t->teams[k]);
	for (size_t k = 0; k < s->t->n; k++)
		s->r->teams[s->t->jobs[k].team].jobs++;
	return 0;
}

void sim_teams_ran(struct sim *s, int job, double usd)
{
	s->r->teams[s->t->jobs[job].team].busy_cost_usd += usd;
}

/* The waits of the jobs that ran, as summarise() counts them, grouped by
 * team (a counting sort), each group sorted for its quantiles. */
void sim_teams_summarise(struct sim *s)
{
	struct sim_team_result *r = s->r->teams;
	int n = s->r->nteams;
	size_t *at, total = 0;
	int64_t *waits;

	if (!r)
		return;
	at = sim_grown(s, NULL, (size_t)n + 1, sizeof *at);
	waits = sim_grown(s, NULL, s->t->n + 1, sizeof *waits);
	if (s->nomem) {
		free(at);
		free(waits);
		return;
	}
	memset(at, 0, ((size_t)n + 1) * sizeof *at);
	for (size_t k = 0; k < s->t->n; k++) {
		const struct sjob *j = &s->jobs[k];
		if (j->ran)
			at[s->t->jobs[k].team + 1]++;
		if (j->ran && j->counted)
			r[s->t->jobs[k].team].jobs_done++;
	}
	for (int t = 0; t < n; t++)
		at[t + 1] += at[t];
	for (size_t k = 0; k < s->t->n; k++) {
		const struct sjob *j = &s->jobs[k];
		if (j->ran)
			waits[at[s->t->jobs[k].team]++] = j->waited_ms + (j->queued ? s->now - j->since : 0);
	}
	/* at[t] is now where team t's waits end. */
	for (int t = 0; t < n; t++) {
		size_t from = total, count = at[t] - from;
		sim_sort_waits(s, waits + from, count);
		r[t].wait_p50_s = sim_quantile_s(waits + from, count, 0.50);
		r[t].wait_p95_s = sim_quantile_s(waits + from, count, 0.95);
		total = at[t];
	}
	free(at);
	free(waits);
}
