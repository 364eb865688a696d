/* The per-team part of `ebb sim`'s output (simout.h): each team's jobs,
 * run cost and waits, and what no job used (boots, idle, warm floors),
 * the fleet's, on a line of its own. */
#include "sim/simout.h"

#include <string.h>

/* What no team's jobs used: the cost less their runs'. */
static double fleet_cost(const struct sim_result *x)
{
	double runs = 0;

	for (int t = 0; t < x->nteams; t++)
		runs += x->teams[t].busy_cost_usd;
	return x->cost_usd - runs;
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
	fprintf(out, "\nper team (run cost: each job's share of its instance by the GPUs it held; boots and idle time"
		" are the fleet's)\n");
	fprintf(out, "%-*s %-20s %8s %10s %8s %8s\n", width, "POLICY", "TEAM", "JOBS", "RUN $", "WAIT P50", "P95");
	for (int k = 0; k < n; k++) {
		const struct sim_result *x = &r[k];
		for (int t = 0; t < x->nteams; t++) {
			const struct sim_team_result *y = &x->teams[t];
			fprintf(out, "%-*s %-20s %8lld %10.2f %7.1fs %7.1fs\n", width, x->policy, y->name,
				(long long)y->jobs_done, y->busy_cost_usd, y->wait_p50_s, y->wait_p95_s);
		}
		if (x->nteams)
			fprintf(out, "%-*s %-20s %8s %10.2f\n", width, x->policy, "(fleet: boot, idle)", "",
				fleet_cost(x));
	}
}

int simout_teams_json(const struct sim_result *x, json_t *o)
{
	json_t *a;

	if (!x->nteams)
		return 0;
	if (!(a = json_array()) || json_object_set_new(o, "teams", a) != 0 ||
	    json_object_set_new(o, "fleet_cost_usd", json_real(fleet_cost(x))) != 0)
		return -1;
	for (int t = 0; t < x->nteams; t++) {
		const struct sim_team_result *y = &x->teams[t];
		if (json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:f, s:f, s:f}", "team", y->name, "jobs",
						       (json_int_t)y->jobs_done, "jobs_submitted", (json_int_t)y->jobs,
						       "run_cost_usd", y->busy_cost_usd, "wait_p50_s", y->wait_p50_s,
						       "wait_p95_s", y->wait_p95_s)) != 0)
			return -1;
	}
	return 0;
}
