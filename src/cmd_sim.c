/* `ebb sim TRACE [--offers FILE] [--policy SPEC]... [--seed N]
 * [--checkpoint-every S] [--filter COL=VALUE]... [--skip-bad] [--json]
 * [--plot FILE.svg]`: replays a trace against policies (see sim.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "sim.h"
#include "simout.h"

static const char usage[] =
	"usage: ebb sim TRACE [OPTIONS]\n"
	"Replays a job trace (CSV: submit_time_s,duration_s[,gpus,team,job_class,priority,lane])\n"
	"against scaling policies and prints what each would have cost and how long jobs waited.\n"
	"  --offers FILE          an ebb config: its [offer.*] sections and ebb's settings\n"
	"  --policy SPEC          NAME[:k=v,...], repeatable (default: all of them):\n"
	"                           ebb[:SECTION.KEY=VALUE,...]   ebb's own policy, with overrides\n"
	"                           always-on[:n=N]  min1[:idle=600]  util[:up=0.8,down=0.2,window=300]\n"
	"                           keda[:target=1,poll=30,cooldown=300,stabilize=300]  bound\n"
	"                         baselines take offer=NAME and market=spot|on-demand too\n"
	"  --seed N               seed of the spot reclaims (default 1)\n"
	"  --checkpoint-every S   jobs checkpoint every S seconds (default: never)\n"
	"  --filter COL=VALUE     keep rows whose COL is VALUE (repeatable)\n"
	"  --skip-bad             skip malformed rows (and count them) instead of stopping\n"
	"  --json                 print a JSON array, one object per policy\n"
	"  --plot FILE.svg        draw queue depth, instances and cumulative cost over time\n";

static const char *const default_policies[] = {"ebb", "always-on", "min1", "util", "keda", "bound"};

int sim_load(const char *trace_path, const char *offers_path, const struct trace_filter *filters,
	     int nfilters, int skip_bad, struct trace *t, struct sim_options *o, char *err, size_t errsize)
{
	struct config cfg;

	if (offers_path) {
		if (config_load(&cfg, offers_path, err, errsize) != 0) {
			config_free(&cfg);
			return -1;
		}
	} else {
		config_defaults(&cfg);
	}
	o->noffers = offers_from_config(&cfg, o->offers, SIM_MAX_OFFERS);
	config_free(&cfg);
	return trace_load(trace_path, filters, nfilters, skip_bad, t, err, errsize);
}

int cmd_sim(int argc, char **argv)
{
	enum { O_OFFERS = 256, O_POLICY, O_SEED, O_CKPT, O_FILTER, O_SKIP, O_JSON, O_PLOT };
	static const struct option longopts[] = {
		{"offers", required_argument, NULL, O_OFFERS}, {"policy", required_argument, NULL, O_POLICY},
		{"seed", required_argument, NULL, O_SEED}, {"checkpoint-every", required_argument, NULL, O_CKPT},
		{"filter", required_argument, NULL, O_FILTER}, {"skip-bad", no_argument, NULL, O_SKIP},
		{"json", no_argument, NULL, O_JSON}, {"plot", required_argument, NULL, O_PLOT},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *offers = NULL, *plot = NULL, *specs[32];
	struct trace_filter filters[8];
	struct sim_options o = {.seed = 1};
	struct sim_result results[32];
	struct trace t;
	char err[600], *end;
	int nspecs = 0, nfilters = 0, skip_bad = 0, json = 0, c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_OFFERS: offers = optarg; break;
		case O_PLOT: plot = optarg; break;
		case O_SKIP: skip_bad = 1; break;
		case O_JSON: json = 1; break;
		case O_POLICY:
			if (nspecs == 32) {
				fprintf(stderr, "ebb sim: at most 32 policies\n");
				return 2;
			}
			specs[nspecs++] = optarg;
			break;
		case O_SEED:
			o.seed = strtoull(optarg, &end, 10);
			if (*end || end == optarg) {
				fprintf(stderr, "ebb sim: --seed: expected a whole number, got '%s'\n", optarg);
				return 2;
			}
			break;
		case O_CKPT: {
			double v = strtod(optarg, &end);
			if (*end || end == optarg || v <= 0 || v > 1e7) {
				fprintf(stderr, "ebb sim: --checkpoint-every: expected seconds, got '%s'\n", optarg);
				return 2;
			}
			o.checkpoint_every_ms = (int64_t)(v * 1000);
			break;
		}
		case O_FILTER: {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || nfilters == 8) {
				fprintf(stderr, "ebb sim: --filter: expected COL=VALUE (8 at most), got '%s'\n", optarg);
				return 2;
			}
			*eq = '\0';
			filters[nfilters++] = (struct trace_filter){optarg, eq + 1};
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "ebb sim: expected one trace file\n%s", usage);
		return 2;
	}
	if (nspecs == 0) {
		for (size_t k = 0; k < sizeof default_policies / sizeof *default_policies; k++)
			specs[nspecs++] = default_policies[k];
	}
	if (sim_load(argv[optind], offers, filters, nfilters, skip_bad, &t, &o, err, sizeof err) != 0) {
		fprintf(stderr, "ebb sim: %s\n", err);
		return 1;
	}
	if (t.skipped)
		fprintf(stderr, "ebb sim: skipped %zu malformed rows\n", t.skipped);
	o.sample_ms = plot ? simout_sample_step(&t) : 0;
	for (int k = 0; k < nspecs && rc == 0; k++) {
		struct policy p;
		if (policy_parse(specs[k], NULL, offers, &p, err, sizeof err) != 0) {
			fprintf(stderr, "ebb sim: %s\n", err);
			rc = 1;
			nspecs = k;
			break;
		}
		sim_run(&t, &p, &o, &results[k]);
		policy_free(&p);
	}
	if (rc == 0) {
		if (json)
			simout_json(results, nspecs, stdout);
		else
			simout_table(results, nspecs, stdout);
		if (plot && simout_plot(results, nspecs, &o, plot, err, sizeof err) != 0) {
			fprintf(stderr, "ebb sim: %s\n", err);
			rc = 1;
		}
	}
	for (int k = 0; k < nspecs; k++)
		sim_result_free(&results[k]);
	trace_free(&t);
	return rc;
}
