/* See report_team.h. Two calls: GET /v1/report by market and by type,
 * each of the team's rows only (its jobs' runs, and the time no job used
 * of the instances launched for its work: its chargeback). */
#include "cli/report_team.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double not_busy_gpu_h(json_t *g) { return cli_num(g, "gpu_hours.not_busy"); }

/* GET /v1/report?by=BY&team=TEAM and the period in cli's query, into
 * *reply: 0, or -1 after the error was said. */
static int fetch(struct cli *cli, const char *by, const char *team, json_t **reply)
{
	json_object_set_new(cli->query, "by", json_string(by));
	json_object_set_new(cli->query, "team", json_string(team));
	return cli_call(cli, "GET", "/v1/report", NULL, reply) < 0 ? -1 : 0;
}

static void share(char *buf, size_t size, json_t *v)
{
	if (json_is_number(v))
		snprintf(buf, size, "%.0f%%", json_number_value(v) * 100);
	else
		snprintf(buf, size, "-");
}

/* Names are [A-Za-z0-9_.-] or "(idle)": no field needs quoting. */
static void print_csv(json_t *markets, json_t *types)
{
	json_t *g;
	size_t i;

	printf("section,name,market,price_usd_per_hour,gpu_hours,busy_gpu_hours,idle_gpu_hours,cost_usd,"
	       "idle_cost_usd,jobs,items\n");
	json_array_foreach(json_object_get(markets, "groups"), i, g)
		printf("offer,%s,%s,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%lld,%lld\n", json_string_value(json_object_get(g, "name")),
		       json_string_value(json_object_get(g, "market")), cli_num(g, "price_usd_per_hour"),
		       cli_num(g, "gpu_hours.billed"), cli_num(g, "gpu_hours.busy"), not_busy_gpu_h(g), cli_num(g, "cost_usd"),
		       cli_num(g, "cost_usd_by_kind.not_busy"), (long long)cli_num(g, "jobs"), (long long)cli_num(g, "items"));
	g = json_object_get(markets, "total");
	printf("total,%s,,,%.4f,%.4f,%.4f,%.2f,%.2f,%lld,%lld\n", json_string_value(json_object_get(markets, "team")),
	       cli_num(g, "gpu_hours.billed"), cli_num(g, "gpu_hours.busy"), not_busy_gpu_h(g), cli_num(g, "cost_usd"),
	       cli_num(g, "cost_usd_by_kind.not_busy"), (long long)cli_num(g, "jobs"), (long long)cli_num(g, "items"));
	json_array_foreach(json_object_get(types, "groups"), i, g)
		printf("type,%s,,,%.4f,%.4f,%.4f,%.2f,%.2f,%lld,%lld\n", json_string_value(json_object_get(g, "name")),
		       cli_num(g, "gpu_hours.billed"), cli_num(g, "gpu_hours.busy"), not_busy_gpu_h(g), cli_num(g, "cost_usd"),
		       cli_num(g, "cost_usd_by_kind.not_busy"), (long long)cli_num(g, "jobs"), (long long)cli_num(g, "items"));
}

static int print_table(json_t *markets, json_t *types)
{
	static const char *const line_headers[] = {"OFFER", "MARKET", "$/HOUR", "GPU-H", "BUSY", "IDLE", "COST",
						   "IDLE $", NULL};
	static const char *const type_headers[] = {"TYPE", "JOBS", "ITEMS", "GPU-H", "COST", NULL};
	json_t *g, *total = json_object_get(markets, "total");
	struct table t;
	char spot[16], effic[16];
	size_t i;
	int rc;

	table_init(&t, line_headers);
	json_array_foreach(json_object_get(markets, "groups"), i, g) {
		table_add(&t, "%s", json_string_value(json_object_get(g, "name")));
		table_add(&t, "%s", json_string_value(json_object_get(g, "market")));
		table_add(&t, "$%.4f", cli_num(g, "price_usd_per_hour"));
		table_add(&t, "%.2f", cli_num(g, "gpu_hours.billed"));
		table_add(&t, "%.2f", cli_num(g, "gpu_hours.busy"));
		table_add(&t, "%.2f", not_busy_gpu_h(g));
		table_add(&t, "$%.2f", cli_num(g, "cost_usd"));
		table_add(&t, "$%.2f", cli_num(g, "cost_usd_by_kind.not_busy"));
	}
	table_add(&t, "total");
	table_add(&t, "%s", "");
	table_add(&t, "%s", "");
	table_add(&t, "%.2f", cli_num(total, "gpu_hours.billed"));
	table_add(&t, "%.2f", cli_num(total, "gpu_hours.busy"));
	table_add(&t, "%.2f", not_busy_gpu_h(total));
	table_add(&t, "$%.2f", cli_num(total, "cost_usd"));
	table_add(&t, "$%.2f", cli_num(total, "cost_usd_by_kind.not_busy"));
	if ((rc = table_print(&t, stdout)) != 0) {
		table_free(&t);
		return rc;
	}
	table_free(&t);
	share(effic, sizeof effic, json_object_get(total, "efficiency"));
	share(spot, sizeof spot, json_object_get(total, "spot_share"));
	printf("\nidle %.2f GPU-hours, $%.2f; efficiency (busy over billed) %s; spot share %s\n",
	       not_busy_gpu_h(total), cli_num(total, "cost_usd_by_kind.not_busy"), effic, spot);
	printf("IDLE: boot, idle and billing remainder of the instances launched for the team's work.\n\n"
	       "Top consumers by job type:\n");
	table_init(&t, type_headers);
	json_array_foreach(json_object_get(types, "groups"), i, g) {
		table_add(&t, "%s", json_string_value(json_object_get(g, "name")));
		table_add(&t, "%lld", (long long)cli_num(g, "jobs"));
		table_add(&t, "%lld", (long long)cli_num(g, "items"));
		table_add(&t, "%.2f", cli_num(g, "gpu_hours.billed"));
		table_add(&t, "$%.2f", cli_num(g, "cost_usd"));
	}
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc;
}

int report_team(struct cli *cli, const char *team, enum report_format format)
{
	json_t *markets = NULL, *types = NULL;
	int rc = 1;

	if (fetch(cli, "market", team, &markets) == 0 && fetch(cli, "type", team, &types) == 0) {
		rc = 0;
		if (format == REPORT_JSON) {
			json_t *both = json_pack("{s:s, s:O, s:O}", "team", team, "by_market", markets, "by_type", types);
			cli_print_json(both);
			json_decref(both);
		} else if (format == REPORT_CSV) {
			print_csv(markets, types);
		} else {
			time_t since = (time_t)cli_num(markets, "since");
			char stamp[32] = "the start";
			if (since > 0)
				strftime(stamp, sizeof stamp, json_is_number(json_object_get(markets, "until")) ? "%Y-%m"
														   : "%Y-%m-%d %H:%MZ",
					 gmtime(&since));
			printf("Team %s, %s%s (UTC)\n", team, json_object_get(markets, "until") ? "" : "since ", stamp);
			if (print_table(markets, types) != 0)
				rc = cli_error(cli, "out of memory");
		}
	}
	cli_close(cli);
	json_decref(markets);
	json_decref(types);
	return rc;
}
