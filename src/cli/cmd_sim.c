/* `ebb sim TRACE [--policy SPEC]... [options]`: replays a trace against
 * policies (see sim.h) and prints what each would have cost. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "sim/simcli.h"
#include "sim/simout.h"
#include "sim/spec.h"

static const char usage[] =
	"usage: ebb sim TRACE [OPTIONS]\n"
	"Replays a job trace (CSV: submit_time_s,duration_s[,gpus,team,job_class,priority,lane,est_s])\n"
	"against scaling policies and prints what each would have cost and how long jobs waited.\n"
	"  --policy SPEC          NAME[:k=v,...], repeatable (default: all of them, and\n"
	"                         keda:placement=cheapest when the offers are several):\n"
	"                           ebb[:SECTION.KEY=VALUE,...]   ebb's own policy, with overrides\n"
	"                           always-on[:n=N]  min1[:idle=600]  util[:up=0.8,down=0.2,window=300]\n"
	"                           keda[:target=1,poll=30,cooldown=300,stabilize=300,placement=offer]\n"
	"                           clairvoyant (knows the future: no wait)  bound (no idle, no boot)\n"
	"                         baselines take offer=NAME and market=spot|on-demand too;\n"
	"                         keda:placement=cheapest puts each replica where Karpenter would\n" SIMCLI_USAGE;

static const char *const default_policies[] = {"ebb", "always-on", "min1", "util", "keda", "clairvoyant", "bound"};
#define NDEFAULT (sizeof default_policies / sizeof *default_policies)

int cmd_sim(int argc, char **argv)
{
	enum { O_POLICY = SIMCLI_OWN };
	static const struct option longopts[] = {
		{"policy", required_argument, NULL, O_POLICY}, SIMCLI_LONGOPTS,
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *specs[32];
	struct sim_result results[32];
	struct simcli cli;
	struct trace t;
	char err[600];
	int nspecs = 0, given, c, rc = 0;

	simcli_init(&cli, "sim");
	cli.o.plugins = &cmd_plugins;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == O_POLICY) {
			if (nspecs == 32) {
				fprintf(stderr, "ebb sim: at most 32 policies\n");
				return 2;
			}
			specs[nspecs++] = optarg;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else if (c == '?' || simcli_option(&cli, c, optarg) != 0) {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "ebb sim: expected one trace file\n%s", usage);
		return 2;
	}
	given = nspecs > 0;
	if (simcli_load(&cli, argv[optind], &t) != 0)
		return 1;
	for (size_t k = 0; !given && k < NDEFAULT; k++) {
		specs[nspecs++] = default_policies[k];
		/* With several offers, keda as people run it too: with Karpenter. */
		if (strcmp(default_policies[k], "keda") == 0 && cli.o.noffers > 1)
			specs[nspecs++] = "keda:placement=cheapest";
	}
	cli.o.sample_ms = cli.plot ? simout_sample_step(&t) : 0;
	for (int k = 0; k < nspecs; k++) {
		struct policy p;
		if (policy_parse(specs[k], cli.offers, cli.o.plugins, &p, err, sizeof err) != 0) {
			fprintf(stderr, "ebb sim: %s\n", err);
			rc = 1;
			nspecs = k;
			break;
		}
		rc = sim_run(&t, &p, &cli.o, &results[k]) != 0;
		policy_free(&p);
		if (rc != 0) {
			fprintf(stderr, "ebb sim: %s: out of memory replaying the trace\n", specs[k]);
			nspecs = k + 1;
			break;
		}
	}
	if (rc == 0) {
		if (cli.json)
			simout_json(results, nspecs, stdout);
		else
			simout_table(results, nspecs, stdout);
		if (cli.plot && simout_plot(results, nspecs, &cli.o, cli.plot, err, sizeof err) != 0) {
			fprintf(stderr, "ebb sim: %s\n", err);
			rc = 1;
		}
	}
	for (int k = 0; k < nspecs; k++)
		sim_result_free(&results[k]);
	trace_free(&t);
	return rc;
}
