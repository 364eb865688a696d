/* `ebb drain ID`: the instance takes no new job; the scaler terminates it
 * once its job is done. */
#include <stdio.h>

#include "cli.h"
#include "cmd.h"

static const char usage[] =
	"usage: ebb drain ID\n"
	"Stops giving jobs to instance ID; it is terminated once idle.\n" CLI_USAGE_COMMON;

int cmd_drain(int argc, char **argv)
{
	static const struct option longopts[] = {CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	struct cli cli = {.name = "drain", .usage = usage};
	char path[64];
	json_t *reply;
	int64_t id;
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (cli_id(&cli, argc, argv, "instance", &id) != 0)
		return 2;
	snprintf(path, sizeof path, "/v1/fleet/%lld/drain", (long long)id);
	rc = cli_call(&cli, "POST", path, NULL, &reply) < 0;
	cli_close(&cli);
	if (rc)
		return 1;
	if (cli.json)
		cli_print_json(reply);
	else
		printf("draining %lld\n", (long long)id);
	json_decref(reply);
	return 0;
}
