/* `ebb serve [-c FILE] [--test-clock]` */
#include "cli/cmd.h"
#include "common/config.h"
#include "serve/server.h"

static const struct option_spec options[] = {
	{.kind = OPTION_GROUP, .group = cmd_config_options, .at = OPTION_AT(struct server_options, config_path)},
	{"test-clock", 0, OPTION_FLAG, NULL, OPTION_AT(struct server_options, test_clock),
	 "let POST /v1/admin/clock move the clock (for tests only)"},
	{0},
};

static const struct usage usage = {"ebb serve [-c FILE] [--test-clock]",
	"Runs the control plane: the job queue, the HTTP API and, with a provider, the scaler.",
	options,
};

int cmd_serve(int argc, char **argv)
{
	struct server_options o = {0};
	struct config cfg;
	int rc = options_parse(&usage, &o, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (cmd_config_load(&cfg, o.config_path, argv[0]) != 0)
		return 1;
	rc = server_run(&cfg, &o);
	config_free(&cfg);
	return rc;
}
