/* `ebb config [-c FILE] [--example]`: checks a config as `ebb serve`
 * does at start (serve/preflight.h) and prints the values in force, or
 * prints the example file with every key. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "serve/preflight.h"

static const char usage[] =
	"usage: ebb config [-c FILE] [--example]\n"
	"  -c, --config FILE  check FILE as ebb serve does at start (the listen address, tokens,\n"
	"                     TLS files, provider programs), and print the configuration in force\n"
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
	int c, rc = 0;

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
		rc = 1;
	} else if (preflight_check(&cfg, err, sizeof err) != 0) {
		/* serve's reasons name the key, not the file */
		fprintf(stderr, "ebb config: %s: %s\n", path, err);
		rc = 1;
	}
	if (rc == 0)
		config_write(&cfg, stdout);
	config_free(&cfg);
	return rc;
}
