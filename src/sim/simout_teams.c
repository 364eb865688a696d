/* The per-team part of `ebb sim`'s output (simout.h): each team's jobs,
 * cost and waits as serve's chargeback splits it (sim.h), and the shared
 * line: what no job used of the instances launched for no team. */
#include "sim/simout_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static double team_cost(const struct sim_team_result *y) { return y->busy_cost_usd + y->idle_cost_usd; }

/* The shared line: the cost less every team's. */
static double shared_cost(const struct sim_result *x)
{
	double teams = 0;

	for (int t = 0; t < x->nteams; t++)
		teams += team_cost(&x->teams[t]);
	return x->cost_usd - teams;
}

/* The table shows each policy's teams that cost most, at most this many,
 * and the others on one line: a trace may name hundreds. --json has all. */
#define TEAMS_SHOWN 10

static const struct sim_result *sorting; /* by_cost()'s, for qsort() */

static int by_cost(const void *a, const void *b)
{
	double x = team_cost(&sorting->teams[*(const int *)a]), y = team_cost(&sorting->teams[*(const int *)b]);

	return (x < y) - (x > y);
}

static void team_rows(const struct sim_result *x, int width, FILE *out)
{
	int *order = xmalloc((size_t)x->nteams * sizeof *order);
	int shown = x->nteams < TEAMS_SHOWN ? x->nteams : TEAMS_SHOWN;
	int64_t rest_jobs = 0, rest_preempted = 0;
	double rest_run = 0, rest_idle = 0;
	char rest[40];

	for (int t = 0; t < x->nteams; t++)
		order[t] = t;
	sorting = x;
	qsort(order, (size_t)x->nteams, sizeof *order, by_cost);
	for (int k = 0; k < x->nteams; k++) {
		const struct sim_team_result *y = &x->teams[order[k]];
		if (k < shown) {
			fprintf(out, "%-*s %-20s %8lld %10.2f %10.2f %9lld %7.1fs %7.1fs\n", width, x->policy, y->name,
				(long long)y->jobs_done, y->busy_cost_usd, y->idle_cost_usd, (long long)y->preempted,
				y->wait_p50_s, y->wait_p95_s);
			continue;
		}
		rest_jobs += y->jobs_done;
		rest_run += y->busy_cost_usd;
		rest_idle += y->idle_cost_usd;
		rest_preempted += y->preempted;
	}
	if (x->nteams > shown) {
		snprintf(rest, sizeof rest, "(%d other teams)", x->nteams - shown);
		fprintf(out, "%-*s %-20s %8lld %10.2f %10.2f %9lld\n", width, x->policy, rest, (long long)rest_jobs,
			rest_run, rest_idle, (long long)rest_preempted);
	}
	free(order);
}

void simout_teams_table(const struct sim_result *r, int n, FILE *out)
{
	int width = 20, any = 0;

	for (int k = 0; k < n; k++) {
		int len = (int)strlen(r[k].policy);
		width = len > width ? len : width;
		any |= r[k].nteams > 0;
	}
	if (!any)
		return;
	fprintf(out, "\nper team, the %d that cost most (run: each job's share of its instance by the GPUs it held;"
		" idle: the boots and idle time of the instances launched for its work; shared: of those launched"
		" for no team; --json lists every team)\n", TEAMS_SHOWN);
	fprintf(out, "%-*s %-20s %8s %10s %10s %9s %8s %8s\n", width, "POLICY", "TEAM", "JOBS", "RUN $", "IDLE $",
		"PREEMPTED", "WAIT P50", "P95");
	for (int k = 0; k < n; k++) {
		const struct sim_result *x = &r[k];
		if (!x->nteams)
			continue;
		team_rows(x, width, out);
		fprintf(out, "%-*s %-20s %8s %10s %10.2f\n", width, x->policy, "(shared)", "", "", shared_cost(x));
	}
}

int simout_teams_json(const struct sim_result *x, json_t *o)
{
	json_t *a;

	if (!x->nteams)
		return 0;
	if (!(a = json_array()) || json_object_set_new(o, "teams", a) != 0 ||
	    json_object_set_new(o, "shared_cost_usd", json_real(shared_cost(x))) != 0 ||
	    json_object_set_new(o, "preemptions", json_integer(x->preemptions)) != 0)
		return -1;
	for (int t = 0; t < x->nteams; t++) {
		const struct sim_team_result *y = &x->teams[t];
		if (json_array_append_new(
			    a, json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:I, s:f, s:f}", "team", y->name, "jobs",
					 (json_int_t)y->jobs_done, "jobs_submitted", (json_int_t)y->jobs, "cost_usd",
					 team_cost(y), "run_cost_usd", y->busy_cost_usd, "idle_cost_usd",
					 y->idle_cost_usd, "preempted", (json_int_t)y->preempted, "wait_p50_s",
					 y->wait_p50_s, "wait_p95_s", y->wait_p95_s)) != 0)
			return -1;
	}
	return 0;
}
