/* `ebb requeue ID [--fresh]`: POST /v1/jobs/ID/requeue. A failed or dead
 * job is queued again with a new budget of attempts, resuming from its
 * checkpoint, or from the start with --fresh. */
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "common/units.h"

struct requeue_args {
	struct cli cli;
	int fresh;
};

static const struct option_spec options[] = {
	{"fresh", 0, OPTION_FLAG, NULL, OPTION_AT(struct requeue_args, fresh),
	 "drop its checkpoint and items done: it starts over"},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct requeue_args, cli)},
	{0},
};

static const struct usage usage = {"ebb requeue ID [--fresh]",
	"Queues a failed or dead job again, with a new budget of attempts; it resumes\n"
	"from its checkpoint unless --fresh.",
	options, .max_words = 1,
};

int cmd_requeue(int argc, char **argv)
{
	struct requeue_args a = {0};
	json_t *body, *reply;
	char path[64];
	int64_t id;
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (optind == argc || parse_int64(argv[optind], &id) != 0 || id <= 0) {
		rc = optind == argc ? cli_usage_error(&a.cli, "which job? (give its id)")
				    : cli_usage_error(&a.cli, "'%s' is not a job id (a positive integer)", argv[optind]);
		cli_close(&a.cli);
		return rc;
	}
	snprintf(path, sizeof path, "/v1/jobs/%lld/requeue", (long long)id);
	body = json_pack("{s:b}", "fresh", a.fresh);
	rc = cli_call(&a.cli, "POST", path, body, &reply) < 0;
	json_decref(body);
	cli_close(&a.cli);
	if (rc)
		return 1;
	if (a.cli.json)
		cli_print_json(reply);
	else
		printf("requeued %lld%s\n", (long long)id, a.fresh ? " (fresh)" : "");
	json_decref(reply);
	return 0;
}
