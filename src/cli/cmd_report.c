/* `ebb report`: what the fleet cost, per team, offer or job type, from the
 * ledger: cost, items and cost per item, GPU-hours billed and busy, boot,
 * idle and billing remainder, spot share, efficiency, reclaims and work
 * lost (docs/COST.md defines each). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "cli/report_team.h"
#include "common/config.h"
#include "common/units.h"

struct report_args {
	struct cli cli; /* --since, --month and --by go to its query */
	const char *team;
	int csv;
};

/* The query value of --since: "-SECONDS" (before the server's now) or
 * Unix seconds. 0, or -1 when arg is neither a duration nor a time. */
static int since_value(const char *arg, char *out, size_t size)
{
	struct tm tm = {0};
	int64_t ms, secs;
	const char *end;
	int n = 0;

	if (parse_duration_ms(arg, &ms) == 0 && strspn(arg, "0123456789") != strlen(arg)) {
		snprintf(out, size, "-%.3f", (double)ms / 1000.0);
		return 0;
	}
	if (parse_int64(arg, &secs) == 0 && secs >= 0) {
		snprintf(out, size, "%lld", (long long)secs);
		return 0;
	}
	if (sscanf(arg, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return -1;
	end = arg + n;
	if (*end == 'T' || *end == ' ') {
		int m = 0;
		if (sscanf(end + 1, "%2d:%2d%n:%2d%n", &tm.tm_hour, &tm.tm_min, &m, &tm.tm_sec, &m) < 2)
			return -1;
		end += 1 + m;
	}
	if (*end == 'Z')
		end++;
	if (*end || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
	    tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	snprintf(out, size, "%lld", (long long)timegm(&tm));
	return 0;
}

/* The options' checks; at is the query, or the team's place. */
static int since_query(void *at, const char *arg, char *why, size_t size)
{
	char since[64];

	if (since_value(arg, since, sizeof since) != 0)
		return options_why(why, size, "expected a duration (24h, 7d) or a time (Unix seconds, 2024-05-01,"
				   " 2024-05-01T12:00Z), got '%s'", arg);
	json_object_set_new(*(json_t **)at, "since", json_string(since));
	return 0;
}

static int month_query(void *at, const char *arg, char *why, size_t size)
{
	int y, m, n = 0;

	if (sscanf(arg, "%4d-%2d%n", &y, &m, &n) != 2 || n != 7 || arg[n] || m < 1 || m > 12)
		return options_why(why, size, "expected YYYY-MM, e.g. 2026-11, got '%s'", arg);
	json_object_set_new(*(json_t **)at, "month", json_string(arg));
	return 0;
}

static int by_query(void *at, const char *arg, char *why, size_t size)
{
	if (strcmp(arg, "team") != 0 && strcmp(arg, "offer") != 0 && strcmp(arg, "market") != 0 &&
	    strcmp(arg, "type") != 0)
		return options_why(why, size, "expected team, offer, market or type, got '%s'", arg);
	json_object_set_new(*(json_t **)at, "by", json_string(arg));
	return 0;
}

static int team_name(void *at, const char *arg, char *why, size_t size)
{
	if (!config_name_ok(arg))
		return options_why(why, size, "expected a team name ([A-Za-z0-9_.-], 1 to 64), got '%s'", arg);
	*(const char **)at = arg;
	return 0;
}

#define QUERY OPTION_AT(struct report_args, cli.query)

static const struct option_spec options[] = {
	{"since", 0, OPTION_CALL, "DURATION|TIME", QUERY,
	 "from 24h (ago) or 7d, or a time: Unix seconds,\n"
	 "2024-05-01 or 2024-05-01T12:00[:00][Z] (UTC); default: all",
	 .parse = since_query},
	{"month", 0, OPTION_CALL, "YYYY-MM", QUERY, "one calendar month (UTC), e.g. 2026-11", .parse = month_query},
	{"by", 0, OPTION_CALL, "team|offer|market|type", QUERY,
	 "group rows (default offer; market: by offer and market); by type,\n"
	 "instance time no job used is the row \"(idle)\"; by team, it is the\n"
	 "team's whose work launched the instance, else \"(shared)\" (the warm\n"
	 "pool), and the chargeback follows: each team's busy and idle cost\n"
	 "and total, and the shared line, adding up to the fleet's total to\n"
	 "the cent",
	 .parse = by_query},
	{"team", 0, OPTION_CALL, "T", OPTION_AT(struct report_args, team),
	 "team T's report (its chargeback): GPU-hours by offer and\n"
	 "market with prices and cost, the total, idle GPU-hours and\n"
	 "cost, efficiency, spot share, top consumers by job type",
	 .parse = team_name},
	{"csv", 0, OPTION_FLAG, NULL, OPTION_AT(struct report_args, csv), "with --team: the same as CSV, for finance"},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct report_args, cli)},
	{0},
};

static const struct usage usage = {"ebb report [--since DURATION|TIME | --month YYYY-MM] [--by team|offer|market|type]\n"
	"ebb report --team T [--since DURATION|TIME | --month YYYY-MM] [--json | --csv]",
	"Adds up the cost ledger: per group and in total, cost, items, cost per item,\n"
	"GPU-hours billed, busy, booting, idle and billed past termination, spot share,\n"
	"efficiency (busy over billed), reclaims and items lost.",
	options,
};

/* A price per item with two significant digits at least: $0.0404,
 * $0.000037 (not $0.0000). */
static void cell_money(struct table *t, json_t *v)
{
	double usd = json_number_value(v), x = usd;
	int d = 4;

	for (; x > 0 && x < 0.001 && d < 12; x *= 10)
		d++;
	if (json_is_number(v))
		table_add(t, "$%.*f", d, usd);
	else
		table_add(t, "-");
}

static void cell_share(struct table *t, json_t *v)
{
	if (json_is_number(v))
		table_add(t, "%.0f%%", json_number_value(v) * 100);
	else
		table_add(t, "-");
}

static void add_row(struct table *t, json_t *g)
{
	table_add(t, "%s", json_string_value(json_object_get(g, "name")));
	table_add(t, "$%.2f", cli_num(g, "cost_usd"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(g, "items")));
	cell_money(t, json_object_get(g, "cost_per_item"));
	table_add(t, "%.2f", cli_num(g, "gpu_hours.billed"));
	table_add(t, "%.2f", cli_num(g, "gpu_hours.busy"));
	table_add(t, "%.2f", cli_num(g, "gpu_hours.boot"));
	table_add(t, "%.2f", cli_num(g, "gpu_hours.idle"));
	table_add(t, "%.2f", cli_num(g, "gpu_hours.billing"));
	table_add(t, "$%.2f", cli_num(g, "cost_usd_by_kind.not_busy"));
	cell_share(t, json_object_get(g, "spot_share"));
	cell_share(t, json_object_get(g, "efficiency"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(g, "reclaims")));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(g, "items_lost")));
}

static const char *dollars(json_t *cents)
{
	static char buf[4][32];
	static int k;
	long long c = (long long)json_integer_value(cents);

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s$%lld.%02lld", c < 0 ? "-" : "", (c < 0 ? -c : c) / 100,
		 (c < 0 ? -c : c) % 100);
	return buf[k];
}

static void add_charge(struct table *t, json_t *line)
{
	table_add(t, "%s", json_string_value(json_object_get(line, "team")));
	table_add(t, "%s", dollars(json_object_get(line, "busy_cents")));
	table_add(t, "%s", dollars(json_object_get(line, "idle_cents")));
	table_add(t, "%s", dollars(json_object_get(line, "total_cents")));
}

/* By team: the lines finance gets (chargeback.h). */
static int print_chargeback(json_t *cb)
{
	static const char *const headers[] = {"TEAM", "BUSY", "IDLE", "TOTAL", NULL};
	struct table t;
	int rc;

	table_rows(&t, headers, json_object_get(cb, "teams"), add_charge);
	if (json_integer_value(json_object_get(cb, "shared_cents"))) {
		table_add(&t, "shared");
		table_add(&t, "$0.00");
		table_add(&t, "%s", dollars(json_object_get(cb, "shared_cents")));
		table_add(&t, "%s", dollars(json_object_get(cb, "shared_cents")));
	}
	table_add(&t, "total");
	table_add(&t, "%s", "");
	table_add(&t, "%s", "");
	table_add(&t, "%s", dollars(json_object_get(cb, "total_cents")));
	printf("\nChargeback: each team pays its jobs' runs (BUSY) and the boot, idle and billing\n"
	       "remainder of the instances launched for its work (IDLE); the warm pool's are shared\n"
	       "(docs/TEAMS.md).\n");
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc;
}

static int print_report(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"GROUP", "COST", "ITEMS", "$/ITEM", "GPU-H", "BUSY", "BOOT", "IDLE",
					      "BILL-REM", "NOT-BUSY $", "SPOT", "EFFIC", "RECLAIMS", "LOST", NULL};
	struct table t;
	time_t since = (time_t)cli_num(reply, "since");
	char stamp[32] = "the start";
	int rc;

	(void)arg;
	table_rows(&t, headers, json_object_get(reply, "groups"), add_row);
	add_row(&t, json_object_get(reply, "total"));
	rc = table_print(&t, stdout);
	table_free(&t);
	if (rc != 0)
		return cli_error(cli, "out of memory");
	if (since > 0) {
		struct tm tm;
		gmtime_r(&since, &tm);
		strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%SZ", &tm);
	}
	printf("\nby %s since %s. GPU-H: GPU-hours billed; BUSY in jobs; BOOT, IDLE and BILL-REM (billed\n"
	       "past termination) are not busy, NOT-BUSY $ their cost. SPOT: share of GPU-hours on spot;\n"
	       "EFFIC: busy over billed. LOST: items redone after reclaims (docs/COST.md).\n",
	       json_string_value(json_object_get(reply, "by")), stamp);
	if (json_object_get(reply, "chargeback") && print_chargeback(json_object_get(reply, "chargeback")) != 0)
		return cli_error(cli, "out of memory");
	return 0;
}

/* What is wrong with the options together, or NULL. */
static const char *conflict(const struct report_args *a)
{
	if (a->team && json_object_get(a->cli.query, "by"))
		return "--by: not with --team (its report is by offer and market, and by type)";
	if (a->team && a->csv && a->cli.json)
		return "--csv and --json: one or the other";
	if (!a->team && a->csv)
		return "--csv: with --team only";
	return NULL;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {.team = NULL};
	const char *wrong;
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if ((wrong = conflict(&a))) {
		rc = cli_usage_error(&a.cli, "%s", wrong);
		cli_close(&a.cli);
		return rc;
	}
	if (a.team)
		return report_team(&a.cli, a.team, a.csv ? REPORT_CSV : a.cli.json ? REPORT_JSON : REPORT_TABLE);
	return cli_show(&a.cli, "GET", "/v1/report", print_report, NULL);
}
