/* `ebb offers`: each offer's prices, GPUs and billing, the expected cost of
 * an hour of reference work on each market, and the estimates in force
 * (speed, boot, reliability) with the samples they rest on. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

#define MONTH_S (30LL * 86400)

static const struct option_spec options[] = {
	{"work-s", 0, OPTION_INT, "N", CLI_QUERY, "price N seconds of reference work per instance",
	 .min = 1, .max = MONTH_S, .def = "3600", .field = "work_s"},
	{"job-s", 0, OPTION_INT, "N", CLI_QUERY,
	 "in jobs of N reference seconds (default [scaler] default_est)", .min = 1, .max = MONTH_S, .field = "job_s"},
	{.kind = OPTION_GROUP, .group = cli_client_options},
	{0},
};

static const struct usage usage = {"ebb offers [--work-s N] [--job-s N]",
	"Lists the offers: prices, expected USD per hour of reference work on each market\n"
	"(what the scaler compares), and the estimates in force with their samples.",
	options,
};

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

int cmd_offers(int argc, char **argv) { return cli_get(argc, argv, &usage, "/v1/offers", print_offers); }
