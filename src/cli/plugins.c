/* Every plug-in a config file may name: the registries of the store
 * engines and of the provider kinds, for the commands that read one. */
#include "cli/cmd.h"
#include "provider/provider.h"
#include "store/store.h"

const struct conf_plugins cmd_plugins = {store_plugins, provider_plugins};
