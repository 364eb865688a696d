/* `ebb drain ID`: the instance takes no new job; the scaler terminates it
 * once its job is done. */
#include "cli/cli.h"
#include "cli/cmd.h"

static const struct cli_by_id drain = {
	{"ebb drain ID", "Stops giving jobs to instance ID; it is terminated once idle.", cli_client_options,
	 .max_words = 1},
	"instance", "POST", "/v1/fleet/%lld/drain", NULL, "draining %lld\n",
};

int cmd_drain(int argc, char **argv) { return cli_by_id(argc, argv, &drain); }
