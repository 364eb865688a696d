/* `ebb reclaim ID`: a spot reclaim of a local instance now, for tests and
 * demos: serve serves its notice at once, its worker interrupts its job
 * (which resumes from its checkpoint elsewhere) and exits, and the local
 * provider kills what is left [local] reclaim_notice later. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static int print_reclaimed(struct cli *cli, json_t *reply, void *arg)
{
	json_t *job = json_object_get(reply, "job");
	long long id = (long long)*(int64_t *)arg;

	(void)cli;
	if (json_is_integer(job))
		printf("reclaim notice served to instance %lld; its job %lld will be interrupted\n", id,
		       (long long)json_integer_value(job));
	else
		printf("reclaim notice served to instance %lld\n", id);
	return 0;
}

static const struct cli_by_id reclaim = {
	{"ebb reclaim ID",
	 "Reclaims instance ID as a spot market would: its notice is served now and it is\n"
	 "killed [local] reclaim_notice later. Only with [provider] kind = local.",
	 cli_client_options, .max_words = 1},
	"instance", "POST", "/v1/fleet/%lld/reclaim", print_reclaimed, NULL,
};

int cmd_reclaim(int argc, char **argv) { return cli_by_id(argc, argv, &reclaim); }
