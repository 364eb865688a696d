/* `ebb help [COMMAND]`: the command table, for people, or a command's
 * own help; and the command table's look-up, with its "did you mean"
 * for main and for `ebb help`. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/suggest.h"

static const struct option_spec options[] = {{0}};

static const struct usage usage = {"ebb help [COMMAND]",
	"Lists the commands, or prints COMMAND's help (as ebb COMMAND --help).",
	options, .max_words = 1,
};

const struct command *cmd_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

int cmd_unknown(const char *cmd, const char *name)
{
	struct suggest near;

	suggest_init(&near, name, strlen(name));
	for (const struct command *c = commands; c->name; c++)
		suggest_consider(&near, c->name);
	fprintf(stderr, "%s: unknown command '%s'", cmd, name);
	if (near.best)
		fprintf(stderr, "; did you mean '%s'?", near.best);
	fputs("\nsee 'ebb help'\n", stderr);
	return 2;
}

static void list_commands(void)
{
	printf("usage: ebb COMMAND [OPTIONS]   (ebb help COMMAND for its options)\n\n");
	for (const struct command *c = commands; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nThe client commands read EBB_SERVER (default http://127.0.0.1:7070), EBB_TOKEN and\n"
	       "EBB_CACERT (the CAs to trust for https://, default the system's); -s/--server, --token\n"
	       "and --cacert override them, --json prints JSON for scripts.\n");
}

int cmd_help(int argc, char **argv)
{
	const struct command *c;
	int rc = options_parse(&usage, NULL, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (optind == argc) {
		list_commands();
		return 0;
	}
	if (!(c = cmd_find(argv[optind])))
		return cmd_unknown(argv[0], argv[optind]);
	return cmd_run(c, 2, (char *[]){argv[optind], "--help", NULL});
}
