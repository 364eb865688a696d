/* `ebb reclaim ID`: a spot reclaim of a local instance now, for tests and
 * demos: serve serves its notice at once, its worker interrupts its job
 * (which resumes from its checkpoint elsewhere) and exits, and the local
 * provider kills what is left [local] reclaim_notice later. */
#include <stdio.h>

#include "cli.h"
#include "cmd.h"

static const char usage[] =
	"usage: ebb reclaim ID\n"
	"Reclaims instance ID as a spot market would: its notice is served now and it is\n"
	"killed [local] reclaim_notice later. Only with [provider] kind = local.\n" CLI_USAGE_COMMON;

int cmd_reclaim(int argc, char **argv)
{
	static const struct option longopts[] = {CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	struct cli cli = {.name = "reclaim", .usage = usage};
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
	snprintf(path, sizeof path, "/v1/fleet/%lld/reclaim", (long long)id);
	rc = cli_call(&cli, "POST", path, NULL, &reply) < 0;
	cli_close(&cli);
	if (rc)
		return 1;
	if (cli.json) {
		cli_print_json(reply);
	} else {
		json_t *job = json_object_get(reply, "job");
		if (json_is_integer(job))
			printf("reclaim notice served to instance %lld; its job %lld will be interrupted\n",
			       (long long)id, (long long)json_integer_value(job));
		else
			printf("reclaim notice served to instance %lld\n", (long long)id);
	}
	json_decref(reply);
	return 0;
}
