/* `ebb cancel ID`: POST /v1/jobs/ID/cancel. A leased job's worker learns
 * of it at its next heartbeat. */
#include "cli/cli.h"
#include "cli/cmd.h"

static const struct cli_by_id cancel = {
	{"ebb cancel ID", "Cancels a job that has not finished.", cli_client_options, .max_words = 1},
	"job", "POST", "/v1/jobs/%lld/cancel", NULL, "cancelled %lld\n",
};

int cmd_cancel(int argc, char **argv) { return cli_by_id(argc, argv, &cancel); }
