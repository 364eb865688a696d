/* `ebb config [-c FILE] [--example]`: validates a config and prints the
 * values in force, or prints the example file with every key. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "common/config.h"

static const char usage[] =
	"usage: ebb config [-c FILE] [--example]\n"
	"  -c, --config FILE  check FILE and print the configuration in force\n"
	"  --example          print every key with its default and a comment\n";

int cmd_config(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"example", no_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL;
	struct config cfg;
	char err[1024];
	int c;

	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'e':
			config_write_example(stdout, &cmd_plugins);
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!path) {
		config_defaults(&cfg, &cmd_plugins);
	} else if (config_load(&cfg, &cmd_plugins, path, err, sizeof err) != 0) {
		fprintf(stderr, "ebb config: %s\n", err);
		config_free(&cfg);
		return 1;
	}
	config_write(&cfg, stdout);
	config_free(&cfg);
	return 0;
}
