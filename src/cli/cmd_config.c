/* `ebb config [-c FILE] [--example]`: checks a config as `ebb serve`
 * does at start (serve/preflight.h) and prints the values in force, or
 * prints the example file with every key. */
#include <stdio.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "serve/preflight.h"

struct config_args {
	const char *path;
	int example;
};

static const struct option_spec options[] = {
	{.kind = OPTION_GROUP, .group = cmd_config_options, .at = OPTION_AT(struct config_args, path)},
	{"example", 0, OPTION_FLAG, NULL, OPTION_AT(struct config_args, example),
	 "print every key with its default and a comment instead"},
	{0},
};

static const struct usage usage = {"ebb config [-c FILE]\n"
	"ebb config --example",
	"Checks the configuration as ebb serve does at start (the listen address, tokens,\n"
	"TLS files, provider programs), and prints the values in force.",
	options,
};

int cmd_config(int argc, char **argv)
{
	struct config_args a = {0};
	char err[1024];
	struct config cfg;
	int rc = options_parse(&usage, &a, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (a.example) {
		config_write_example(stdout, &cmd_plugins);
		return 0;
	}
	if (cmd_config_load(&cfg, a.path, argv[0]) != 0)
		return 1;
	rc = a.path && preflight_check(&cfg, err, sizeof err) != 0;
	if (rc) /* serve's reasons name the key, not the file */
		fprintf(stderr, "%s: %s: %s\n", argv[0], a.path, err);
	else
		config_write(&cfg, stdout);
	config_free(&cfg);
	return rc;
}
