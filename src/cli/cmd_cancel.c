/* `ebb cancel ID`: POST /v1/jobs/ID/cancel. A leased job's worker learns
 * of it at its next heartbeat. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] = "usage: ebb cancel ID\n"
			    "Cancels a job that has not finished.\n" CLI_USAGE_COMMON;

static int print_cancelled(struct cli *cli, json_t *reply, void *id)
{
	(void)cli, (void)reply;
	printf("cancelled %lld\n", (long long)*(int64_t *)id);
	return 0;
}

int cmd_cancel(int argc, char **argv)
{
	struct cli cli = {.name = "cancel", .usage = usage};
	char path[64];
	int64_t id;
	int rc;

	if ((rc = cli_id_args(&cli, argc, argv, "job", &id)) != CLI_NEXT)
		return rc;
	snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)id);
	return cli_show(&cli, "POST", path, print_cancelled, &id);
}
