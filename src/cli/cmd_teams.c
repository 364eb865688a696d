/* `ebb teams`: each team's quota, the GPUs it uses (and of them, beyond
 * its quota), what its queued work asks for, what it may use now, and its
 * spend this month against its budget (docs/TEAMS.md). */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct usage usage = {"ebb teams",
	"Shows each team's GPU quota, the GPUs its jobs use (BORROWED: beyond its quota),\n"
	"what its queued jobs ask for, what it may use now (ALLOWED), and its spend this\n"
	"month (UTC) against its monthly budget. A submit token sees its own team.",
	cli_client_options,
};

static void add_limit(struct table *t, json_t *v)
{
	if (json_is_integer(v))
		table_add(t, "%lld", (long long)json_integer_value(v));
	else
		table_add(t, "-");
}

static int print_teams(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"TEAM", "QUOTA", "BORROW-LIM", "LEND-LIM", "WEIGHT", "IN USE",
					      "BORROWED", "QUEUED", "ALLOWED", "MONTH $", "BUDGET $", NULL};
	struct table t;
	json_t *tm;
	size_t i;
	int rc;

	(void)arg;
	if (json_array_size(json_object_get(reply, "teams")) == 0) {
		printf("no teams: add [team.NAME] sections to share the GPUs (docs/TEAMS.md)\n");
		return 0;
	}
	table_init(&t, headers);
	json_array_foreach(json_object_get(reply, "teams"), i, tm) {
		json_t *budget = json_object_get(tm, "monthly_budget_usd");
		table_add(&t, "%s", json_string_value(json_object_get(tm, "name")));
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(tm, "quota_gpus")));
		add_limit(&t, json_object_get(tm, "borrowing_limit_gpus"));
		add_limit(&t, json_object_get(tm, "lending_limit_gpus"));
		table_add(&t, "%g", json_number_value(json_object_get(tm, "weight")));
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(tm, "used_gpus")));
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(tm, "borrowed_gpus")));
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(tm, "queued_gpus")));
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(tm, "allowed_gpus")));
		table_add(&t, "%.2f", json_number_value(json_object_get(tm, "month_spend_usd")));
		if (json_is_number(budget))
			table_add(&t, "%.2f%s", json_number_value(budget),
				  json_is_true(json_object_get(tm, "over_budget")) ? " (spent)" : "");
		else
			table_add(&t, "-");
	}
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc == 0 ? 0 : cli_error(cli, "out of memory");
}

int cmd_teams(int argc, char **argv) { return cli_get(argc, argv, &usage, "/v1/teams", print_teams); }
