/* `ebb jobs [--state S] [--lane L] [--team T] [--type T] [--limit N]
 * [--after ID]`: GET /v1/jobs, a table for people or the reply as is. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

#define COMMAND_WIDTH 40

static const struct option_spec options[] = {
	{"state", 0, OPTION_STRING, "S", CLI_QUERY,
	 "queued, delayed, running (leased), succeeded, failed, dead or cancelled", .field = "state"},
	{"lane", 0, OPTION_STRING, "L", CLI_QUERY, "only this lane", .field = "lane"},
	{"team", 0, OPTION_STRING, "T", CLI_QUERY, "only this team (a submit token sees its own team only)", .field = "team"},
	{"type", 0, OPTION_STRING, "T", CLI_QUERY, "only this job type", .field = "type"},
	{"limit", 0, OPTION_INT, "N", CLI_QUERY, "at most N jobs, 1 to 1000", .min = 1, .max = 1000, .def = "100",
	 .field = "limit"},
	{"after", 0, OPTION_INT, "ID", CLI_QUERY, "jobs after this id: the next page", .max = INT64_MAX, .field = "after"},
	{.kind = OPTION_GROUP, .group = cli_client_options},
	{0},
};

static const struct usage usage = {"ebb jobs [--state S] [--lane L] [--team T] [--type T] [--limit N] [--after ID]",
	"Lists jobs, oldest first. A leased job is shown as `running` (the API's state\n"
	"stays `leased`). A queued job its team holds back (its team's monthly budget\n"
	"spent, or the team at its share of the GPUs) is `queued (held)`, and why is\n"
	"said once per reason on stderr.",
	options,
};

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
		table_add(t, "%s", cli_state_text(str(job, "state")));
	table_add(t, "%s", str(job, "lane"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(job, "priority")));
	table_add(t, "%s", str(job, "type"));
	table_add(t, "%s", str(job, "team"));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(job, "gpus")));
	table_add(t, "%lld/%lld", (long long)json_integer_value(json_object_get(job, "items_done")),
		  (long long)json_integer_value(json_object_get(job, "items")));
	table_add(t, "%lld/%lld", (long long)json_integer_value(json_object_get(job, "attempts")),
		  (long long)json_integer_value(json_object_get(job, "max_attempts")));
	table_add(t, "%s", age);
	table_add(t, "%s", command);
}

static int print_table(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"ID", "STATE", "LANE", "PRI", "TYPE", "TEAM",
					      "GPUS", "PROGRESS", "ATTEMPTS", "AGE", "COMMAND", NULL};
	json_t *jobs = json_object_get(reply, "jobs"), *job, *next = json_object_get(reply, "next_after");
	json_t *said = json_object();
	struct table t;
	size_t i;
	int rc;

	(void)arg;
	table_rows(&t, headers, jobs, add_row);
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
	struct cli cli = {0};
	const char *state;
	int rc = cli_parse(&cli, &usage, &cli, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	/* People say running; the API keeps leased. */
	state = json_string_value(json_object_get(cli.query, "state"));
	if (state && strcmp(state, "running") == 0)
		json_object_set_new(cli.query, "state", json_string("leased"));
	return cli_show(&cli, "GET", "/v1/jobs", print_table, NULL);
}
