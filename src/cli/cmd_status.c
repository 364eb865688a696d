/* `ebb status`: which serve answered, at which address, and its role: with
 * several serves on one database (docs/HA.md), leader or follower, and
 * which one leads. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct usage usage = {"ebb status",
	"Prints the serve that answered (of the addresses in --server, the first that answers),\n"
	"its role (leader, or follower of the serve that leads) and its store.",
	cli_client_options,
};

static int print_status(struct cli *cli, json_t *reply, void *arg)
{
	const char *role = json_string_value(json_object_get(reply, "role")),
		   *leader = json_string_value(json_object_get(reply, "leader"));

	(void)arg;
	printf("serve %s at %s: %s", json_string_value(json_object_get(reply, "serve")), cli->client.server, role);
	if (role && strcmp(role, "follower") == 0)
		printf(" of %s", leader ? leader : "none (no serve leads now)");
	printf(", store %s\n", json_string_value(json_object_get(reply, "store")));
	return 0;
}

int cmd_status(int argc, char **argv) { return cli_get(argc, argv, &usage, "/healthz", print_status); }
