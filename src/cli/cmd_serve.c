/* `ebb serve [-c FILE] [--test-clock]` */
#include <getopt.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "serve/server.h"

static const char usage[] =
	"usage: ebb serve [-c FILE] [--test-clock]\n"
	"  -c, --config FILE  configuration (INI; see ebb.conf.example). Without it, defaults:\n"
	"                     listen 127.0.0.1:7070, data in ./ebb-data\n"
	"  --test-clock       let POST /v1/admin/clock move the clock (for tests only)\n";

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"test-clock", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct server_options o = {0};
	struct config cfg;
	char err[1024];
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config_path = optarg;
			break;
		case 'T':
			o.test_clock = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ebb serve: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	if (o.config_path) {
		if (config_load(&cfg, &cmd_plugins, o.config_path, err, sizeof err) != 0) {
			fprintf(stderr, "ebb serve: %s\n", err);
			config_free(&cfg);
			return 1;
		}
	} else {
		config_defaults(&cfg, &cmd_plugins);
	}
	rc = server_run(&cfg, &o);
	config_free(&cfg);
	return rc;
}
