/* `ebb team set NAME --budget USD|none`: raises, lowers or lifts a team's
 * monthly budget at run time (POST /v1/teams/budget, admin). serve keeps
 * it over the config's across restarts and records it as a decision
 * (docs/TEAMS.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb team set NAME --budget USD|none\n"
	"Sets team NAME's monthly budget (USD a calendar month, UTC) in force now, over\n"
	"its [team.NAME] monthly_budget; none lifts it. Needs an admin token. The change\n"
	"outlives a restart of serve and is recorded in `ebb decisions`.\n"
	"  --budget USD|none     the budget: 0 to 1000000000 USD, or none\n" CLI_USAGE_COMMON;

enum { OPT_BUDGET = CLI_OPT_OWN };

/* The --budget value as JSON (null for none), or NULL after the usage error. */
static json_t *budget_value(struct cli *cli, const char *arg)
{
	char *end;
	double usd;

	if (strcmp(arg, "none") == 0)
		return json_null();
	usd = strtod(arg, &end);
	if (end == arg || *end || !isfinite(usd) || usd < 0 || usd > 1e9) {
		cli_usage_error(cli, "--budget: expected USD from 0 to 1000000000, or none, got '%s'", arg);
		return NULL;
	}
	return json_real(usd);
}

static int print_team(struct cli *cli, json_t *reply, const char *name)
{
	json_t *tm;
	size_t i;

	json_array_foreach(json_object_get(reply, "teams"), i, tm) {
		json_t *budget = json_object_get(tm, "monthly_budget_usd");
		if (strcmp(json_string_value(json_object_get(tm, "name")), name) != 0)
			continue;
		if (json_is_number(budget))
			printf("team %s: monthly budget $%.2f, $%.2f spent this month%s\n", name,
			       json_number_value(budget), json_number_value(json_object_get(tm, "month_spend_usd")),
			       json_is_true(json_object_get(tm, "over_budget")) ? ": spent, nothing is launched for its work"
										 : "");
		else
			printf("team %s: no monthly budget\n", name);
		return 0;
	}
	return cli_error(cli, "the reply has no team %s", name);
}

int cmd_team(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_LONGOPTS,
		{"budget", required_argument, NULL, OPT_BUDGET},
		{NULL, 0, NULL, 0},
	};
	struct cli cli = {.name = "team", .usage = usage};
	json_t *budget = NULL, *body, *reply;
	int c, rc, status;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_BUDGET) {
			json_decref(budget);
			if (!(budget = budget_value(&cli, optarg)))
				return 2;
		} else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT) {
			json_decref(budget);
			return rc;
		}
	}
	if (optind + 2 != argc || strcmp(argv[optind], "set") != 0 || !budget) {
		json_decref(budget);
		return cli_usage_error(&cli, optind == argc || strcmp(argv[optind], "set") != 0
						     ? "expected: set NAME --budget USD|none"
					     : optind + 2 != argc ? "expected one team NAME after set"
								  : "--budget is required");
	}
	body = json_pack("{s:s, s:o}", "team", argv[optind + 1], "monthly_budget", budget);
	status = cli_call(&cli, "POST", "/v1/teams/budget", body, &reply);
	json_decref(body);
	cli_close(&cli);
	if (status < 0)
		return 1;
	rc = 0;
	if (cli.json)
		cli_print_json(reply);
	else
		rc = print_team(&cli, reply, argv[optind + 1]);
	json_decref(reply);
	return rc;
}
