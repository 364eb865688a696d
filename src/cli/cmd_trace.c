/* `ebb trace export [--since WHEN] [--until WHEN] [-o FILE]`: serve's own
 * succeeded jobs as a trace for `ebb sim` and `ebb tune` (cli/history.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/history.h"

struct trace_args {
	struct cli cli;
	int64_t since, until; /* Unix seconds; 0: no bound */
	const char *output;
};

static const struct option_spec options[] = {
	{"since", 0, OPTION_CALL, "WHEN", OPTION_AT(struct trace_args, since),
	 "jobs finished then or later: 30d, 12h (before now),\n@UNIX_SECONDS or YYYY-MM-DD (UTC)",
	 .parse = history_when},
	{"until", 0, OPTION_CALL, "WHEN", OPTION_AT(struct trace_args, until), "jobs finished before then (as --since)",
	 .parse = history_when},
	{"output", 'o', OPTION_STRING, "FILE", OPTION_AT(struct trace_args, output), "write the CSV there (default: stdout)"},
	{.kind = OPTION_GROUP, .group = cli_server_options, .at = OPTION_AT(struct trace_args, cli.conn)},
	{0},
};

static const struct usage usage = {"ebb trace export [--since WHEN] [--until WHEN] [-o FILE]",
	"Writes serve's jobs that succeeded as the simulator's CSV (submit_time_s in\n"
	"seconds from the first job's creation, which a first line `# origin=SECONDS`\n"
	"gives in Unix seconds; duration_s on the reference GPU: the run that succeeded\n"
	"times its offer's speed), for `ebb sim` and `ebb tune`. A submit token exports\n"
	"its own team's jobs only.",
	options,
	.max_words = 1,
};

int cmd_trace(int argc, char **argv)
{
	struct trace_args a = {0};
	FILE *out = stdout;
	int rc;

	if ((rc = cli_parse(&a.cli, &usage, &a, argc, argv)) != OPTIONS_GO_ON)
		return rc;
	if (optind == argc || strcmp(argv[optind], "export") != 0) {
		cli_close(&a.cli);
		return options_usage_error(argv[0], "expected the subcommand export");
	}
	if (a.until && a.until <= a.since) {
		cli_close(&a.cli);
		return options_usage_error(argv[0], "--until is not after --since");
	}
	if (a.output && !(out = fopen(a.output, "w"))) {
		cli_close(&a.cli);
		return cli_error(&a.cli, "%s: cannot write", a.output);
	}
	rc = history_export(&a.cli, a.since, a.until, out, NULL);
	if (out != stdout && fclose(out) != 0 && rc == 0)
		rc = cli_error(&a.cli, "%s: cannot write", a.output);
	cli_close(&a.cli);
	return rc;
}
