/* The replay's teams (sim.h): per team of the trace, its jobs, their
 * cost (serve's chargeback, chargeback.h) and their waits, counted as the
 * whole replay's are (engine.c); and for ebb with [team.NAME] sections,
 * each team's spend this month against its monthly_budget, as serve's
 * view reads it from the ledger (team_state.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

/* The line of r->teams named name, made if none (with no jobs). */
static int line_named(struct sim *s, const char *name)
{
	struct sim_team_result *r;

	for (int k = 0; k < s->result->nteams; k++) {
		if (strcmp(s->result->teams[k].name, name) == 0)
			return k;
	}
	r = s->result->teams = sim_grown(s->result->teams, (size_t)s->result->nteams + 1, sizeof *r);
	memset(&r[s->result->nteams], 0, sizeof *r);
	snprintf(r[s->result->nteams].name, sizeof r->name, "%s", name);
	return s->result->nteams++;
}

void sim_teams_start(struct sim *s)
{
	for (int t = 0; t <= CONF_MAX_TEAMS; t++)
		s->launch_line[t] = -1;
	/* One team is the whole replay: nothing more to say, nor to count. */
	if (s->trace->nteams < 2)
		return;
	for (int k = 0; k < s->trace->nteams; k++)
		line_named(s, s->trace->teams[k]);
	for (size_t k = 0; k < s->trace->n; k++)
		s->result->teams[s->trace->jobs[k].team].jobs++;
	/* The teams ebb may launch for: those of the trace's teams. */
	for (int k = 0; k < s->trace->nteams && s->nteams; k++) {
		int t = s->team_index[k];
		s->launch_line[t] = line_named(s, s->policy->settings.teams[t].name);
	}
}

void sim_teams_ran(struct sim *s, int job, double usd)
{
	if (s->result->teams)
		s->result->teams[s->trace->jobs[job].team].busy_cost_usd += usd;
	if (s->nteams)
		s->month_spend[s->team_index[s->trace->jobs[job].team]] += usd;
}

void sim_teams_billed(struct sim *s, int k, double usd)
{
	int t = s->inst[k].launch_team;

	if (t < 0 || usd <= 0)
		return; /* the shared line's: what is left of the cost */
	s->month_spend[t] += usd;
	if (s->launch_line[t] >= 0)
		s->result->teams[s->launch_line[t]].idle_cost_usd += usd;
}

void sim_teams_month(struct sim *s)
{
	const struct plan_settings *st = &s->policy->settings;

	if (s->now >= s->month_end_ms) {
		memset(s->month_spend, 0, sizeof s->month_spend);
		s->month_end_ms = teams_month_start_ms(s->trace->origin_ms + s->now, 1) - s->trace->origin_ms;
	}
	s->over_budget = teams_over_budget(st->teams, st->nteams, s->month_spend);
}

/* The waits of the jobs that ran, as summarise() counts them, grouped by
 * team (a counting sort), each group sorted for its quantiles. */
void sim_teams_summarise(struct sim *s)
{
	struct sim_team_result *r = s->result->teams;
	int n = s->result->nteams;
	size_t *at, total = 0;
	int64_t *waits;

	if (!r)
		return;
	at = sim_grown(NULL, (size_t)n + 1, sizeof *at);
	waits = sim_grown(NULL, s->trace->n + 1, sizeof *waits);
	memset(at, 0, ((size_t)n + 1) * sizeof *at);
	for (size_t k = 0; k < s->trace->n; k++) {
		const struct sjob *j = &s->jobs[k];
		if (j->ran)
			at[s->trace->jobs[k].team + 1]++;
		if (j->ran && j->counted)
			r[s->trace->jobs[k].team].jobs_done++;
	}
	for (int t = 0; t < n; t++)
		at[t + 1] += at[t];
	for (size_t k = 0; k < s->trace->n; k++) {
		const struct sjob *j = &s->jobs[k];
		if (j->ran)
			waits[at[s->trace->jobs[k].team]++] = j->waited_ms + (j->queued ? s->now - j->since : 0);
	}
	/* at[t] is now where team t's waits end. */
	for (int t = 0; t < n; t++) {
		size_t from = total, count = at[t] - from;
		sim_sort_waits(waits + from, count);
		r[t].wait_p50_s = sim_quantile_s(waits + from, count, 0.50);
		r[t].wait_p95_s = sim_quantile_s(waits + from, count, 0.95);
		total = at[t];
	}
	free(at);
	free(waits);
}
