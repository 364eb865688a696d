/* `ebb cancel ID`: POST /v1/jobs/ID/cancel. A leased job's worker learns
 * of it at its next heartbeat. */
#include <stdio.h>

#include "cli.h"
#include "cmd.h"

static const char usage[] = "usage: ebb cancel ID\n"
			    "Cancels a job that has not finished.\n" CLI_USAGE_COMMON;

int cmd_cancel(int argc, char **argv)
{
	static const struct option longopts[] = {CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	struct cli cli = {.name = "cancel", .usage = usage};
	char path[64];
	json_t *job;
	int64_t id;
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (cli_id(&cli, argc, argv, "job", &id) != 0)
		return 2;
	snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)id);
	rc = cli_call(&cli, "POST", path, NULL, &job) < 0;
	cli_close(&cli);
	if (rc)
		return 1;
	if (cli.json)
		cli_print_json(job);
	else
		printf("cancelled %lld\n", (long long)id);
	json_decref(job);
	return 0;
}
