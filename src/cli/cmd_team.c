/* `ebb team set NAME --budget USD|none`: raises, lowers or lifts a team's
 * monthly budget at run time (POST /v1/teams/budget, admin). serve keeps
 * it over the config's across restarts and records it as a decision
 * (docs/TEAMS.md). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "common/units.h"

struct team_args {
	struct cli cli;
	json_t *body; /* POST /v1/teams/budget's */
};

/* --budget into the body: USD, or null for none. */
static int budget_value(void *at, const char *arg, char *why, size_t size)
{
	double usd = 0;

	if (strcmp(arg, "none") != 0 && (parse_double(arg, &usd) != 0 || usd < 0 || usd > 1e9))
		return options_why(why, size, "expected USD from 0 to 1000000000, or none, got '%s'", arg);
	json_object_set_new(*(json_t **)at, "monthly_budget", strcmp(arg, "none") == 0 ? json_null() : json_real(usd));
	return 0;
}

static const struct option_spec options[] = {
	{"budget", 0, OPTION_CALL, "USD|none", OPTION_AT(struct team_args, body),
	 "the budget: 0 to 1000000000 USD, or none", .required = 1, .parse = budget_value},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct team_args, cli)},
	{0},
};

static const struct usage usage = {"ebb team set NAME --budget USD|none",
	"Sets team NAME's monthly budget (USD a calendar month, UTC) in force now, over\n"
	"its [team.NAME] monthly_budget; none lifts it. Needs an admin token. The change\n"
	"outlives a restart of serve and is recorded in `ebb decisions`.",
	options,
	.max_words = 2,
};

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
	struct team_args a = {.body = json_object()};
	json_t *reply;
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv), status = -1;

	if (rc == OPTIONS_GO_ON && (optind + 2 != argc || strcmp(argv[optind], "set") != 0))
		rc = cli_usage_error(&a.cli, optind == argc || strcmp(argv[optind], "set") != 0
						     ? "expected: set NAME --budget USD|none"
						     : "expected one team NAME after set");
	if (rc == OPTIONS_GO_ON) {
		json_object_set_new(a.body, "team", json_string(argv[optind + 1]));
		status = cli_call(&a.cli, "POST", "/v1/teams/budget", a.body, &reply);
	}
	json_decref(a.body);
	cli_close(&a.cli);
	if (rc != OPTIONS_GO_ON)
		return rc;
	if (status < 0)
		return 1;
	rc = 0;
	if (a.cli.json)
		cli_print_json(reply);
	else
		rc = print_team(&a.cli, reply, argv[optind + 1]);
	json_decref(reply);
	return rc;
}
