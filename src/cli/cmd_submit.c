/* `ebb submit [OPTIONS] [-- COMMAND ARGS...]`: POST /v1/jobs. One table
 * gives each flag its field in the request body and its bounds (the
 * server's, so that a typo is caught before the call and named by flag). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "cli/logs_follow.h"
#include "cli/submit_jobs.h"
#include "common/clock.h"
#include "common/job.h"

#define DAY_S (86400LL)
/* How long one call of --wait asks serve to wait: its longest. */
#define JOB_WAIT_ASK_MS 60000LL

struct submit_args {
	struct cli cli;
	json_t *body;     /* POST /v1/jobs's: the flags but --jobs, and COMMAND */
	const char *jobs; /* --jobs FILE */
	int wait, follow; /* --wait, --follow */
};

#define BODY OPTION_AT(struct submit_args, body)

static const struct option_spec options[] = {
	{"jobs", 0, OPTION_STRING, "FILE", OPTION_AT(struct submit_args, jobs),
	 "submit every job of FILE ('-': standard input), a JSON object\n"
	 "a line as POST /v1/jobs takes it, the other flags and COMMAND\n"
	 "as defaults; sent 1000 a call. Prints an id a line (--json: each\n"
	 "job or refusal as a line of JSON); exits 1 if a job was refused\n"
	 "(its line named on stderr)"},
	{"lane", 0, OPTION_STRING, "L", BODY, "lane (default: the server's [queue] default_lane)", .field = "lane"},
	{"priority", 0, OPTION_INT, "N", BODY, "-1000 to 1000, higher first within a lane (default 0)", .min = -1000,
	 .max = 1000, .field = "priority"},
	{"gpus", 0, OPTION_INT, "N", BODY, "GPUs the job needs, 0 to 64 (default 1)", .max = 64, .field = "gpus"},
	{"vram", 0, OPTION_INT, "GB", BODY, "GPU memory it needs per GPU, 0 to 4096 GB (default 0)", .max = 4096,
	 .field = "min_vram_gb"},
	{"items", 0, OPTION_INT, "N", BODY, "work items, for progress (default 1)", .min = 1, .max = 1000000000000LL,
	 .field = "items"},
	{"type", 0, OPTION_STRING, "T", BODY, "job type (default 'default')", .field = "type"},
	{"team", 0, OPTION_STRING, "T", BODY, "team (a submit token's own team by default)", .field = "team"},
	{"delay", 0, OPTION_WHOLE_SECONDS, "DURATION", BODY, "run no earlier than this from now: 30, 90s, 10m, 2h, 1d",
	 .max = 365 * DAY_S, .field = "delay_s"},
	{"max-attempts", 0, OPTION_INT, "N", BODY, "leases before the job is dead, 1 to 100", .min = 1, .max = 100,
	 .field = "max_attempts"},
	{"timeout", 0, OPTION_WHOLE_SECONDS, "DURATION", BODY, "longest run of one attempt, 1s to 30d", .min = 1,
	 .max = 30 * DAY_S, .field = "timeout_s"},
	{"est", 0, OPTION_WHOLE_SECONDS, "DURATION", BODY,
	 "expected run time, for the scaler, 1s to 30d (default: the\n"
	 "median of recent jobs of the type)",
	 .min = 1, .max = 30 * DAY_S, .field = "est_s"},
	{"idempotency-key", 0, OPTION_STRING, "K", BODY, "a retried submit with the same key and body returns the same job",
	 .field = "idempotency_key"},
	{"payload", 0, OPTION_JSON, "JSON", BODY, "any JSON value; without a command, for its type's handler", .field = "payload"},
	{"allow-unplaceable", 0, OPTION_FLAG, NULL, BODY,
	 "queue it even if no offer and no worker registered now can\n"
	 "hold its GPUs and memory (for workers to come)",
	 .field = "allow_unplaceable"},
	{"wait", 0, OPTION_FLAG, NULL, OPTION_AT(struct submit_args, wait),
	 "wait for the job to finish; print its result, if any, as a line\n"
	 "of JSON (--json: the finished job); exit 0 when it succeeded,\n"
	 "the last attempt's exit status when it failed (1 when it has\n"
	 "none), 130 when it was cancelled"},
	{"follow", 0, OPTION_FLAG, NULL, OPTION_AT(struct submit_args, follow),
	 "with --wait: print the job's log as it runs (as ebb logs -f)"},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct submit_args, cli)},
	{0},
};

static const struct usage usage = {"ebb submit [OPTIONS] [-- COMMAND ARGS...]\n"
	"ebb submit [OPTIONS] --jobs FILE",
	"Submits a job that runs COMMAND (or hands --payload to its type's handler) and prints its id.",
	options,
	"A DURATION is whole seconds: a plain number, or with a unit (ms, s, m, h, d).",
	OPTIONS_ANY_WORDS,
	/* Options end at the first word, so that the command's own flags stay its own. */
	.stop_at_word = 1,
};

/* The words after "--" as the job's argv. */
static int set_command(struct cli *cli, int argc, char **argv, json_t *body)
{
	json_t *cmd = json_array();

	for (int i = 0; i < argc; i++) {
		json_t *arg = json_string(argv[i]);
		if (!arg) {
			json_decref(cmd);
			return cli_usage_error(cli, "the command's word %d is not valid UTF-8", i + 1);
		}
		json_array_append_new(cmd, arg);
	}
	json_object_set_new(body, "command", cmd);
	return OPTIONS_GO_ON;
}

/* The words after the options: the command, after "--" only. Returns
 * OPTIONS_GO_ON, or 2 after the usage error. */
static int words(struct submit_args *a, int argc, char **argv)
{
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return cli_usage_error(&a->cli, "unexpected argument '%s' (the command goes after '--')", argv[optind]);
	if (optind < argc)
		return set_command(&a->cli, argc - optind, argv + optind, a->body);
	if (!a->jobs && !json_object_get(a->body, "payload"))
		return cli_usage_error(&a->cli, "a job needs a command after '--' or a --payload");
	return OPTIONS_GO_ON;
}

/* The exit code of a job that finished: 0 succeeded, 130 cancelled, else
 * the exit status its last attempt's error begins with, or 1. */
static int job_exit_code(json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "state"));
	const char *error = json_string_value(json_object_get(job, "error"));
	int code;

	if (state && strcmp(state, "succeeded") == 0)
		return 0;
	if (state && strcmp(state, "cancelled") == 0)
		return 130;
	/* The worker's words for an exit (job_run.c): "exit status N[: ...]". */
	if (error && sscanf(error, "exit status %d", &code) == 1 && code > 0 && code < 256)
		return code;
	return 1;
}

/* The job once it has ended: GET /v1/jobs/ID?wait=, a long-poll that
 * answers at its end, asked again while it runs. A reply sooner than
 * asked, from a serve that does not wait, is not asked again at once. */
static json_t *job_at_end(struct cli *cli, int64_t id)
{
	char path[64];
	json_t *job = NULL;

	snprintf(path, sizeof path, "/v1/jobs/%lld?wait=%llds", (long long)id, JOB_WAIT_ASK_MS / 1000);
	for (;;) {
		int64_t asked = clock_monotonic_ms();
		const char *state;

		if (cli_call(cli, "GET", path, NULL, &job) < 0)
			return NULL;
		state = json_string_value(json_object_get(job, "state"));
		if (state && job_state_terminal(job_state_parse(state)))
			return job;
		json_decref(job);
		if (clock_monotonic_ms() - asked < 1000)
			poll(NULL, 0, 1000);
	}
}

/* --wait: follows the job to its end (printing its log with --follow),
 * prints its result, and gives its exit code. */
static int wait_for(struct cli *cli, int64_t id, int follow)
{
	struct logs_follow f = {.job = id, .follow = 1};
	const char *error;
	json_t *job, *result;
	int rc;

	if (follow && logs_follow(cli, &f) != 0)
		return 1;
	if (!(job = job_at_end(cli, id)))
		return 1;
	rc = job_exit_code(job);
	error = json_string_value(json_object_get(job, "error"));
	result = json_object_get(job, "result");
	if (cli->json) {
		cli_print_json(job);
	} else if (rc == 0 && result) {
		char *text = json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY);
		if (text)
			printf("%s\n", text);
		free(text);
	}
	if (rc != 0)
		fprintf(stderr, "%s: job %lld %s%s%s\n", cli->name, (long long)id,
			json_string_value(json_object_get(job, "state")), error ? ": " : "", error ? error : "");
	json_decref(job);
	return rc;
}

/* POST /v1/jobs, and its id for scripts, or the job under --json. */
static int submit_one(struct cli *cli, json_t *body, int wait, int follow)
{
	json_t *job;
	int status = cli_call(cli, "POST", "/v1/jobs", body, &job);
	int64_t id;

	if (status < 0)
		return 1;
	id = json_integer_value(json_object_get(job, "id"));
	if (cli->json) {
		cli_print_json(job);
	} else {
		printf("%lld\n", (long long)json_integer_value(json_object_get(job, "id")));
		if (status == 200)
			fprintf(stderr, "%s: job %lld already existed with this idempotency key\n", cli->name,
				(long long)json_integer_value(json_object_get(job, "id")));
	}
	json_decref(job);
	fflush(stdout);
	return wait ? wait_for(cli, id, follow) : 0;
}

int cmd_submit(int argc, char **argv)
{
	struct submit_args a = {.body = json_object()};
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv);

	if (rc == OPTIONS_GO_ON)
		rc = words(&a, argc, argv);
	if (rc == OPTIONS_GO_ON && (a.wait || a.follow) && a.jobs)
		rc = cli_usage_error(&a.cli, "--wait and --follow are for one job, not --jobs");
	else if (rc == OPTIONS_GO_ON && a.follow && !a.wait)
		rc = cli_usage_error(&a.cli, "--follow goes with --wait");
	if (rc == OPTIONS_GO_ON)
		rc = a.jobs ? submit_jobs(&a.cli, a.jobs, a.body) : submit_one(&a.cli, a.body, a.wait, a.follow);
	json_decref(a.body);
	cli_close(&a.cli);
	return rc;
}
