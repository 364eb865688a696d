/* Every plug-in a config file may name: the registries of the store
 * engines and of the provider kinds, for the commands that read one; and
 * how they read it (`ebb serve`, `ebb config`). */
#include <stdio.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "provider/provider.h"
#include "store/store.h"

const struct conf_plugins cmd_plugins = {store_plugins, provider_plugins};

const struct option_spec cmd_config_options[] = {
	{"config", 'c', OPTION_STRING, "FILE", {0, sizeof(const char *)},
	 "the configuration (INI; see ebb.conf.example); without it, the\n"
	 "defaults: listen 127.0.0.1:7070, data in ./ebb-data"},
	{0},
};

int cmd_config_load(struct config *cfg, const char *path, const char *cmd)
{
	char err[1024];

	if (!path) {
		config_defaults(cfg, &cmd_plugins);
		return 0;
	}
	if (config_load(cfg, &cmd_plugins, path, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "%s: %s\n", cmd, err);
	config_free(cfg);
	return 1;
}
