/* `ebb help`: the command table, for people. */
#include <stdio.h>

#include "cli/cmd.h"

int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("usage: ebb COMMAND [OPTIONS]   (ebb COMMAND --help for its options)\n\n");
	for (const struct command *c = commands; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nThe client commands read EBB_SERVER (default http://127.0.0.1:7070), EBB_TOKEN and\n"
	       "EBB_CACERT (the CAs to trust for https://, default the system's); -s/--server, --token\n"
	       "and --cacert override them, --json prints JSON for scripts.\n");
	return 0;
}
