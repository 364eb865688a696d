/* `ebb drain ID`: the instance takes no new job; the scaler terminates it
 * once its job is done. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb drain ID\n"
	"Stops giving jobs to instance ID; it is terminated once idle.\n" CLI_USAGE_COMMON;

static int print_draining(struct cli *cli, json_t *reply, void *id)
{
	(void)cli, (void)reply;
	printf("draining %lld\n", (long long)*(int64_t *)id);
	return 0;
}

int cmd_drain(int argc, char **argv) { return cli_fleet_action(argc, argv, "drain", usage, print_draining); }
