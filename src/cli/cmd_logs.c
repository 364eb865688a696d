/* `ebb logs ID [--attempt N] [-f] [--tail N]`: what a job wrote, as the
 * job wrote it (logs_follow.h). */
#include "cli/cli.h"
#include "cli/cmd.h"
#include "cli/logs_follow.h"

struct logs_args {
	struct cli cli;
	int attempt, tail, follow;
};

static const struct option_spec options[] = {
	{"attempt", 0, OPTION_INT, "N", OPTION_AT(struct logs_args, attempt),
	 "this attempt's log (default: the latest's)", .min = 1, .max = 1000000},
	{"follow", 'f', OPTION_FLAG, NULL, OPTION_AT(struct logs_args, follow),
	 "print lines as they come, attempt after attempt, until the job\n"
	 "has finished (with --attempt: until that attempt has ended)"},
	{"tail", 0, OPTION_INT, "N", OPTION_AT(struct logs_args, tail), "only the last N lines, 1 to 1000", .min = 1,
	 .max = 1000},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct logs_args, cli)},
	{0},
};

static const struct usage usage = {
	"ebb logs ID [--attempt N] [-f] [--tail N]",
	"Prints what a job wrote: its stdout lines on stdout, its stderr lines on stderr,\n"
	"in the order it wrote them (with --json, the replies of GET /v1/jobs/ID/logs, a line\n"
	"each: the first, and each later one that has lines). A log past [queue] log_max keeps its head and its tail;\n"
	"the bytes between are counted, not kept.",
	options,
	NULL,
	1,
};

int cmd_logs(int argc, char **argv)
{
	struct logs_args a = {0};
	struct logs_follow f = {0};
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv);

	if (rc == OPTIONS_GO_ON && (rc = cli_id_word(&a.cli, argc, argv, "job", &f.job)) == OPTIONS_GO_ON) {
		f.attempt = a.attempt;
		f.tail = a.tail;
		f.follow = a.follow;
		rc = logs_follow(&a.cli, &f);
	}
	cli_close(&a.cli);
	return rc;
}
