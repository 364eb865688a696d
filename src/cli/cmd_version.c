/* `ebb version [--json]` */
#include <jansson.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "common/version.h"

struct version_args {
	int json;
};

static const struct option_spec options[] = {
	{"json", 0, OPTION_FLAG, NULL, OPTION_AT(struct version_args, json), "print {\"version\": \"...\"}"},
	{0},
};

static const struct usage usage = {"ebb version [--json]", "Prints the version.", options};

int cmd_version(int argc, char **argv)
{
	struct version_args a = {0};
	int rc = options_parse(&usage, &a, argc, argv);
	json_t *v;

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (!a.json) {
		printf("ebb %s\n", EBB_VERSION);
		return 0;
	}
	v = json_pack("{ss}", "version", EBB_VERSION);
	cli_print_json(v);
	json_decref(v);
	return 0;
}
