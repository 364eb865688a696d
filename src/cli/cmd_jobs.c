/* `ebb jobs [--state S] [--lane L] [--team T] [--type T] [--limit N]
 * [--after ID]`: GET /v1/jobs, a table for people or the reply as is. */
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

#define COMMAND_WIDTH 40

static const char usage[] =
	"usage: ebb jobs [--state S] [--lane L] [--team T] [--type T] [--limit N] [--after ID]\n"
	"Lists jobs, oldest first. A queued job its team holds back (its team's monthly\n"
	"budget spent, or the team at its share of the GPUs) is `queued (held)`, and why\n"
	"is said once per reason on stderr.\n"
	"  --state S             queued, delayed, leased, succeeded, failed, dead or cancelled\n"
	"  --lane L              only this lane\n"
	"  --team T              only this team (a submit token sees its own team only)\n"
	"  --type T              only this job type\n"
	"  --limit N             at most N jobs, 1 to 1000 (default 100)\n"
	"  --after ID            jobs after this id: the next page\n" CLI_USAGE_COMMON;

enum { OPT_STATE = CLI_OPT_OWN, OPT_LANE, OPT_TEAM, OPT_TYPE, OPT_LIMIT, OPT_AFTER };

static void age_text(json_t *created, char *buf, size_t size)
{
	if (json_is_number(created))
		cli_span_text(difftime(time(NULL), (time_t)json_number_value(created)), buf, size);
	else
		snprintf(buf, size, "-");
}

static const char *str(json_t *job, const char *name)
{
	const char *s = json_string_value(json_object_get(job, name));

	return s ? s : "-";
}

static void add_row(struct table *t, json_t *job)
{
	json_t *cmd = json_object_get(job, "command");
	char age[32], command[1024];

	age_text(json_object_get(job, "created_at"), age, sizeof age);
	if (json_is_array(cmd))
		cli_argv_text(cmd, command, sizeof command);
	else
		snprintf(command, sizeof command, "payload");
	cli_truncate(command, COMMAND_WIDTH);
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(job, "id")));
	if (json_is_string(json_object_get(job, "held")))
		table_add(t, "%s (held)", str(job, "state"));
	else
		table_add(t, "%s", str(job, "state"));
	table_add(t, "%s", str(job, "lane"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(job, "priority")));
	table_add(t, "%s", str(job, "type"));
	table_add(t, "%s", str(job, "team"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(job, "gpus")));
	table_add(t, "%lld/%lld", (long long)json_integer_value(json_object_get(job, "attempts")),
		  (long long)json_integer_value(json_object_get(job, "max_attempts")));
	table_add(t, "%s", age);
	table_add(t, "%s", command);
}

static int print_table(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"ID", "STATE", "LANE", "PRI", "TYPE", "TEAM",
					      "GPUS", "ATTEMPTS", "AGE", "COMMAND", NULL};
	json_t *jobs = json_object_get(reply, "jobs"), *job, *next = json_object_get(reply, "next_after");
	json_t *said = json_object();
	struct table t;
	size_t i;
	int rc;

	(void)arg;
	table_init(&t, headers);
	json_array_foreach(jobs, i, job)
		add_row(&t, job);
	rc = table_print(&t, stdout);
	table_free(&t);
	if (rc != 0) {
		json_decref(said);
		return cli_error(cli, "out of memory");
	}
	/* On stderr, so that the table stays a table: why the held jobs
	 * wait, each reason once (one per team). */
	json_array_foreach(jobs, i, job) {
		const char *held = json_string_value(json_object_get(job, "held"));
		if (held && !json_object_get(said, held)) {
			fprintf(stderr, "held: %s\n", held);
			json_object_set_new(said, held, json_true());
		}
	}
	json_decref(said);
	if (json_is_integer(next))
		fprintf(stderr, "(more jobs: add --after %lld)\n", (long long)json_integer_value(next));
	return 0;
}

int cmd_jobs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"state", required_argument, NULL, OPT_STATE},
		{"lane", required_argument, NULL, OPT_LANE},
		{"team", required_argument, NULL, OPT_TEAM},
		{"type", required_argument, NULL, OPT_TYPE},
		{"limit", required_argument, NULL, OPT_LIMIT},
		{"after", required_argument, NULL, OPT_AFTER},
		CLI_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	/* The query parameters, in the order of the OPT_ values. */
	static const char *const names[] = {"state", "lane", "team", "type", "limit", "after"};
	struct cli cli = {.name = "jobs", .usage = usage};
	const char *query[sizeof names / sizeof names[0]] = {NULL};
	char path[4096] = "/v1/jobs";
	int64_t n;
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_LIMIT && cli_int(&cli, "--limit", optarg, 1, 1000, &n) != 0)
			return 2;
		if (c == OPT_AFTER && cli_int(&cli, "--after", optarg, 0, INT64_MAX, &n) != 0)
			return 2;
		if (c >= OPT_STATE && c <= OPT_AFTER)
			query[c - OPT_STATE] = optarg;
		else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (query[i] && cli_query_add(path, sizeof path, names[i], query[i]) != 0)
			return cli_usage_error(&cli, "--%s: value too long", names[i]);
	}
	return cli_show(&cli, "GET", path, print_table, NULL);
}
