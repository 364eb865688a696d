/* `ebb help [COMMAND]`: the command table, for people, or a command's
 * own help. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"

int cmd_help(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] != '-') {
		for (const struct command *c = commands; c->name; c++) {
			if (strcmp(c->name, argv[1]) == 0)
				return cmd_run(c, 2, (char *[]){argv[1], "--help", NULL});
		}
		fprintf(stderr, "ebb help: unknown command '%s' (see 'ebb help')\n", argv[1]);
		return 2;
	}
	printf("usage: ebb COMMAND [OPTIONS]   (ebb help COMMAND for its options)\n\n");
	for (const struct command *c = commands; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nThe client commands read EBB_SERVER (default http://127.0.0.1:7070), EBB_TOKEN and\n"
	       "EBB_CACERT (the CAs to trust for https://, default the system's); -s/--server, --token\n"
	       "and --cacert override them, --json prints JSON for scripts.\n");
	return 0;
}
