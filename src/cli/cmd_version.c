/* `ebb version` */
#include <stdio.h>

#include "cli/cmd.h"
#include "common/version.h"

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("ebb %s\n", EBB_VERSION);
	return 0;
}
