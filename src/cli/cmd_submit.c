/* `ebb submit [OPTIONS] [-- COMMAND ARGS...]`: POST /v1/jobs. One table
 * gives each flag its field in the request body and its bounds (the
 * server's, so that a typo is caught before the call and named by flag). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "cli/submit_jobs.h"
#include "common/units.h"

#define DAY_S (86400LL)

static const char usage[] =
	"usage: ebb submit [OPTIONS] [-- COMMAND ARGS...]\n"
	"       ebb submit [OPTIONS] --jobs FILE\n"
	"Submits a job that runs COMMAND (or hands --payload to its worker) and prints its id.\n"
	"  --jobs FILE           submit every job of FILE ('-': standard input), a JSON object\n"
	"                        a line as POST /v1/jobs takes it, the other flags and COMMAND\n"
	"                        as defaults; sent 1000 a call. Prints an id a line; exits 1 if\n"
	"                        a job was refused (its line named on stderr)\n"
	"  --lane L              lane (default: the server's [queue] default_lane)\n"
	"  --priority N          -1000 to 1000, higher first within a lane (default 0)\n"
	"  --gpus N              GPUs the job needs, 0 to 64 (default 1)\n"
	"  --vram GB             GPU memory it needs per GPU, 0 to 4096 GB (default 0)\n"
	"  --items N             work items, for progress (default 1)\n"
	"  --type T              job type (default 'default')\n"
	"  --team T              team (a submit token's own team by default)\n"
	"  --delay DURATION      run no earlier than this from now: 30, 90s, 10m, 2h, 1d\n"
	"  --max-attempts N      leases before the job is dead, 1 to 100\n"
	"  --timeout DURATION    longest run of one attempt, 1s to 30d\n"
	"  --est DURATION        expected run time, for the scaler, 1s to 30d (default: the\n"
	"                        median of recent jobs of the type)\n"
	"  --idempotency-key K   a retried submit with the same key and body returns the same job\n"
	"  --payload JSON        any JSON value for the worker\n" CLI_USAGE_COMMON
	"A DURATION is whole seconds: a plain number, or with a unit (ms, s, m, h, d).\n";

enum kind { TEXT, INT, SECONDS, JSON };

struct flag {
	const char *name;  /* long option, without "--" */
	const char *field; /* in the request body */
	enum kind kind;
	int64_t min, max; /* INT, SECONDS */
};

static const struct flag flags[] = {
	{"lane", "lane", TEXT, 0, 0},
	{"priority", "priority", INT, -1000, 1000},
	{"gpus", "gpus", INT, 0, 64},
	{"vram", "min_vram_gb", INT, 0, 4096},
	{"items", "items", INT, 1, 1000000000000LL},
	{"type", "type", TEXT, 0, 0},
	{"team", "team", TEXT, 0, 0},
	{"delay", "delay_s", SECONDS, 0, 365 * DAY_S},
	{"max-attempts", "max_attempts", INT, 1, 100},
	{"timeout", "timeout_s", SECONDS, 1, 30 * DAY_S},
	{"est", "est_s", SECONDS, 1, 30 * DAY_S},
	{"idempotency-key", "idempotency_key", TEXT, 0, 0},
	{"payload", "payload", JSON, 0, 0},
};
#define NFLAGS (sizeof flags / sizeof flags[0])

/* Whole seconds from "30" or "90s", "10m", "1h": the API counts seconds,
 * and rounding "1500ms" quietly would run the job at a time nobody asked. */
static int seconds_value(struct cli *cli, const struct flag *f, const char *arg, int64_t *out)
{
	char lo[32], hi[32];
	int64_t ms;

	if (parse_int64(arg, out) != 0) {
		if (parse_duration_ms(arg, &ms) != 0) {
			cli_usage_error(cli, "--%s: expected a duration like 30, 90s, 10m or 2h, got '%s'",
					f->name, arg);
			return -1;
		}
		if (ms % 1000 != 0) {
			cli_usage_error(cli, "--%s: '%s' is not a whole number of seconds", f->name, arg);
			return -1;
		}
		*out = ms / 1000;
	}
	if (*out < f->min || *out > f->max) {
		format_duration(lo, sizeof lo, f->min * 1000);
		format_duration(hi, sizeof hi, f->max * 1000);
		cli_usage_error(cli, "--%s: expected from %s to %s, got '%s'", f->name, lo, hi, arg);
		return -1;
	}
	return 0;
}

/* Puts a flag's value into the body: 0, or -1 after the usage error. */
static int set_flag(struct cli *cli, const struct flag *f, const char *arg, json_t *body)
{
	json_error_t je;
	json_t *v = NULL;
	char name[32];
	int64_t n;

	snprintf(name, sizeof name, "--%s", f->name);
	switch (f->kind) {
	case TEXT:
		if (!(v = json_string(arg))) {
			cli_usage_error(cli, "%s: not valid UTF-8", name);
			return -1;
		}
		break;
	case INT:
		if (cli_int(cli, name, arg, f->min, f->max, &n) != 0)
			return -1;
		v = json_integer(n);
		break;
	case SECONDS:
		if (seconds_value(cli, f, arg, &n) != 0)
			return -1;
		v = json_integer(n);
		break;
	case JSON:
		if (!(v = json_loads(arg, JSON_DECODE_ANY, &je))) {
			cli_usage_error(cli, "%s: not JSON: %s at column %d", name, je.text, je.column);
			return -1;
		}
		break;
	}
	json_object_set_new(body, f->field, v);
	return 0;
}

/* The words after "--" as the job's argv. */
static int set_command(struct cli *cli, int argc, char **argv, json_t *body)
{
	json_t *cmd = json_array();

	for (int i = 0; i < argc; i++) {
		json_t *arg = json_string(argv[i]);
		if (!arg) {
			json_decref(cmd);
			cli_usage_error(cli, "the command's word %d is not valid UTF-8", i + 1);
			return -1;
		}
		json_array_append_new(cmd, arg);
	}
	json_object_set_new(body, "command", cmd);
	return 0;
}

/* Reads the flags and the command into body, and --jobs into *jobs: -1
 * when the exit code is in *rc (2 for a bad argument, 0 after --help). */
static int parse(struct cli *cli, int argc, char **argv, json_t *body, const char **jobs, int *rc)
{
	const struct option common[] = {{"jobs", required_argument, NULL, CLI_OPT_OWN + NFLAGS}, CLI_LONGOPTS,
					{NULL, 0, NULL, 0}};
	struct option longopts[NFLAGS + sizeof common / sizeof common[0]] = {{0}};
	int c;

	*jobs = NULL;
	for (size_t i = 0; i < NFLAGS; i++)
		longopts[i] = (struct option){flags[i].name, required_argument, NULL, CLI_OPT_OWN + (int)i};
	memcpy(longopts + NFLAGS, common, sizeof common);
	/* '+': options end at the first word, so the command's own flags stay its own. */
	while ((c = getopt_long(argc, argv, "+" CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c >= CLI_OPT_OWN && c < CLI_OPT_OWN + (int)NFLAGS) {
			if (set_flag(cli, &flags[c - CLI_OPT_OWN], optarg, body) != 0)
				goto usage;
		} else if (c == CLI_OPT_OWN + (int)NFLAGS) {
			*jobs = optarg;
		} else if ((*rc = cli_option(cli, c, argv)) != CLI_NEXT) {
			return -1;
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		cli_usage_error(cli, "unexpected argument '%s' (the command goes after '--')", argv[optind]);
		goto usage;
	}
	if (optind < argc && set_command(cli, argc - optind, argv + optind, body) != 0)
		goto usage;
	if (!*jobs && !json_object_get(body, "command") && !json_object_get(body, "payload")) {
		cli_usage_error(cli, "a job needs a command after '--' or a --payload");
		goto usage;
	}
	return 0;
usage:
	*rc = 2;
	return -1;
}

int cmd_submit(int argc, char **argv)
{
	struct cli cli = {.name = "submit", .usage = usage};
	json_t *body = json_object(), *job;
	const char *jobs;
	int rc, status;

	if (parse(&cli, argc, argv, body, &jobs, &rc) != 0) {
		json_decref(body);
		return rc;
	}
	if (jobs) {
		rc = submit_jobs(&cli, jobs, body);
		json_decref(body);
		cli_close(&cli);
		return rc;
	}
	status = cli_call(&cli, "POST", "/v1/jobs", body, &job);
	json_decref(body);
	cli_close(&cli);
	if (status < 0)
		return 1;
	if (cli.json) {
		cli_print_json(job);
	} else {
		printf("%lld\n", (long long)json_integer_value(json_object_get(job, "id")));
		if (status == 200)
			fprintf(stderr, "ebb submit: job %lld already existed with this idempotency key\n",
				(long long)json_integer_value(json_object_get(job, "id")));
	}
	json_decref(job);
	return 0;
}
