/* `ebb sim TRACE [--policy SPEC]... [options]`: replays a trace against
 * policies (see sim.h) and prints what each would have cost. */
#include <stdio.h>

#include "cli/cmd.h"
#include "cli/simcli.h"
#include "sim/simout.h"
#include "sim/spec.h"

#define POLICIES_MAX 32

/* --policy SPEC, repeatable. */
struct policies {
	const char *spec[POLICIES_MAX];
	int n;
};

struct sim_args {
	struct simcli sim;
	struct policies policies;
	const char *jobs; /* --jobs FILE.csv */
};

static int add_policy(void *at, const char *arg, char *why, size_t size)
{
	struct policies *p = at;

	if (p->n == POLICIES_MAX)
		return options_why(why, size, "at most %d policies", POLICIES_MAX);
	p->spec[p->n++] = arg;
	return 0;
}

static const struct option_spec options[] = {
	{"policy", 0, OPTION_CALL, "SPEC", OPTION_AT(struct sim_args, policies),
	 "NAME[:k=v,...], repeatable (default: all of them, and\n"
	 "keda:placement=cheapest when the offers are several):\n"
	 "  ebb[:SECTION.KEY=VALUE,...]   ebb's own policy, with overrides\n"
	 "  always-on[:n=N]  min1[:idle=600]  util[:up=0.8,down=0.2,window=300]\n"
	 "  keda[:target=1,poll=30,cooldown=300,stabilize=300,placement=offer]\n"
	 "  clairvoyant[:wait=0] (knows the future; no wait longer than wait)\n"
	 "  bound (no idle, no boot)\n"
	 "baselines take offer=NAME and market=spot|on-demand too;\n"
	 "keda:placement=cheapest puts each replica where Karpenter would",
	 .parse = add_policy},
	{.kind = OPTION_GROUP, .group = simcli_options, .at = OPTION_AT(struct sim_args, sim)},
	{"jobs", 0, OPTION_STRING, "FILE.csv", OPTION_AT(struct sim_args, jobs),
	 "write when each job first started, how long it had\n"
	 "waited, and when it last started (after a reclaim),\n"
	 "a line per job and policy"},
	{0},
};

static const struct usage usage = {"ebb sim TRACE [OPTIONS]",
	"Replays a job trace (CSV: submit_time_s,duration_s[,gpus,team,job_class,priority,lane,est_s])\n"
	"against scaling policies and prints what each would have cost and how long jobs waited.",
	options,
	.max_words = 1,
};

int cmd_sim(int argc, char **argv)
{
	struct sim_args a = {.policies.n = 0};
	struct simcli *cli = &a.sim;
	const char **specs = a.policies.spec;
	struct sim_result results[POLICIES_MAX];
	struct trace t;
	char err[600];
	int nspecs, rc;

	if ((rc = simcli_start(cli, &usage, &a, argc, argv, &t)) != OPTIONS_GO_ON)
		return rc;
	nspecs = a.policies.n ? a.policies.n : policy_defaults(cli->o.noffers > 1, specs);
	cli->o.sample_ms = cli->plot ? simout_sample_step(&t) : 0;
	cli->o.job_starts = a.jobs != NULL;
	rc = 0;
	for (int k = 0; k < nspecs; k++) {
		struct policy p;
		if (policy_parse(specs[k], cli->offers, cli->o.plugins, &p, err, sizeof err) != 0) {
			fprintf(stderr, "%s: %s\n", cli->name, err);
			rc = 1;
			nspecs = k;
			break;
		}
		sim_run(&t, &p, &cli->o, &results[k]);
		policy_free(&p);
	}
	if (rc == 0) {
		if (cli->json)
			simout_json(results, nspecs, stdout);
		else
			simout_table(results, nspecs, stdout);
		if (cli->plot && simout_plot(results, nspecs, &cli->o, cli->plot, err, sizeof err) != 0) {
			fprintf(stderr, "%s: %s\n", cli->name, err);
			rc = 1;
		}
		if (a.jobs && simout_jobs(results, nspecs, &t, a.jobs, err, sizeof err) != 0) {
			fprintf(stderr, "%s: %s\n", cli->name, err);
			rc = 1;
		}
	}
	for (int k = 0; k < nspecs; k++)
		sim_result_free(&results[k]);
	trace_free(&t);
	return rc;
}
