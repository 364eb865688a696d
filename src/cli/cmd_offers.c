/* `ebb offers`: each offer's prices, GPUs and billing, the expected cost of
 * an hour of reference work on each market, and the estimates in force
 * (speed, boot, reliability) with the samples they rest on. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb offers [--work-s N] [--job-s N]\n"
	"Lists the offers: prices, expected USD per hour of reference work on each market\n"
	"(what the scaler compares), and the estimates in force with their samples.\n"
	"  --work-s N            price N seconds of reference work per instance (default 3600)\n"
	"  --job-s N             in jobs of N reference seconds (default [scaler] default_est)\n" CLI_USAGE_COMMON;

enum { OPT_WORK = CLI_OPT_OWN, OPT_JOB };

static void money(char *buf, size_t size, json_t *v, const char *unit)
{
	if (json_is_number(v))
		snprintf(buf, size, "$%.4f%s", json_number_value(v), unit);
	else
		snprintf(buf, size, "-");
}

static void market_cell(char *buf, size_t size, json_t *m)
{
	char cost[32];

	money(cost, sizeof cost, json_object_get(m, "usd_per_work_hour"), "");
	if (!json_is_number(json_object_get(m, "price")))
		snprintf(buf, size, "-");
	else if (json_is_true(json_object_get(m, "usable")))
		snprintf(buf, size, "%s", cost);
	else
		snprintf(buf, size, "%s (not used: %s)", cost, json_string_value(json_object_get(m, "why_not")));
}

static int print_offers(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const h1[] = {"OFFER", "GPUS", "VRAM", "BILLING", "ON-DEMAND", "SPOT",
					 "$/WORK-H ON-DEMAND", "$/WORK-H SPOT", NULL};
	static const char *const h2[] = {"OFFER", "SPEED", "BOOT", "RELIABILITY (SPOT)", "ITEMS/S", "LAUNCHES", NULL};
	json_t *o, *list = json_object_get(reply, "offers");
	struct table t1, t2;
	size_t i;
	int rc;

	(void)arg;
	table_init(&t1, h1);
	table_init(&t2, h2);
	json_array_foreach(list, i, o) {
		json_t *od = cli_jpath(o, "markets.on-demand"), *sp = cli_jpath(o, "markets.spot");
		char a[32], b[32], c[160], d[160], min[16];
		cli_span_text(cli_num(o, "billing_minimum_s"), min, sizeof min);
		table_add(&t1, "%s", json_string_value(json_object_get(o, "name")));
		table_add(&t1, "%lld", (long long)json_integer_value(json_object_get(o, "gpus")));
		table_add(&t1, "%lldGB", (long long)json_integer_value(json_object_get(o, "vram_gb")));
		table_add(&t1, "%s, min %s", json_string_value(json_object_get(o, "billing")), min);
		money(a, sizeof a, json_object_get(od, "price"), "/h");
		money(b, sizeof b, json_object_get(sp, "price"), "/h");
		table_add(&t1, "%s", a);
		table_add(&t1, "%s", b);
		market_cell(c, sizeof c, od);
		market_cell(d, sizeof d, sp);
		table_add(&t1, "%s", c);
		table_add(&t1, "%s", d);

		table_add(&t2, "%s", json_string_value(json_object_get(o, "name")));
		table_add(&t2, "%.2f %s (%lld timed runs; declared %.2f)", cli_num(o, "in_force.speed"),
			  json_string_value(cli_jpath(o, "in_force.speed_from")),
			  (long long)json_integer_value(cli_jpath(o, "measured.speed_n")), cli_num(o, "declared.speed"));
		table_add(&t2, "%.0fs %s (%lld boots; declared %.0fs)", cli_num(o, "in_force.boot_s"),
			  json_string_value(cli_jpath(o, "in_force.boot_from")),
			  (long long)json_integer_value(cli_jpath(o, "measured.boots")), cli_num(o, "declared.boot_s"));
		table_add(&t2, "%.3f (%.1f spot h, %lld reclaims; declared %.3f)", cli_num(o, "in_force.reliability"),
			  cli_num(o, "measured.spot_hours"), (long long)json_integer_value(cli_jpath(o, "measured.spot_reclaims")),
			  cli_num(o, "declared.reliability"));
		if (json_is_number(cli_jpath(o, "measured.items_per_s")))
			table_add(&t2, "%.3g (%lld runs)", cli_num(o, "measured.items_per_s"),
				  (long long)json_integer_value(cli_jpath(o, "measured.runs")));
		else
			table_add(&t2, "-");
		table_add(&t2, "%lld on-demand (%lld failed), %lld spot (%lld failed)",
			  (long long)json_integer_value(json_object_get(od, "launches")),
			  (long long)json_integer_value(json_object_get(od, "launch_failures")),
			  (long long)json_integer_value(json_object_get(sp, "launches")),
			  (long long)json_integer_value(json_object_get(sp, "launch_failures")));
	}
	rc = table_print(&t1, stdout);
	printf("\n$/WORK-H: expected USD for one hour of work on the reference GPU (speed 1), in %.0f s of work\n"
	       "per instance and jobs of %.0f s: boot billed, spot reclaims priced (docs/COST.md).\n"
	       "Estimates replace the declared figures after %lld samples.\n\n",
	       cli_num(reply, "work_s"), cli_num(reply, "job_s"), (long long)json_integer_value(json_object_get(reply, "min_samples")));
	if (rc == 0)
		rc = table_print(&t2, stdout);
	table_free(&t1);
	table_free(&t2);
	return rc != 0 ? cli_error(cli, "out of memory") : 0;
}

int cmd_offers(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"work-s", required_argument, NULL, OPT_WORK},
		{"job-s", required_argument, NULL, OPT_JOB},
		CLI_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct cli cli = {.name = "offers", .usage = usage};
	char path[128] = "/v1/offers";
	int64_t v;
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_WORK || c == OPT_JOB) {
			const char *flag = c == OPT_WORK ? "--work-s" : "--job-s";
			if (cli_int(&cli, flag, optarg, 1, 30LL * 86400, &v) != 0)
				return 2;
			snprintf(path + strlen(path), sizeof path - strlen(path), "%c%s=%lld", strchr(path, '?') ? '&' : '?',
				 c == OPT_WORK ? "work_s" : "job_s", (long long)v);
		} else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT) {
			return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	return cli_show(&cli, "GET", path, print_offers, NULL);
}
