/* `ebb decisions [--limit N]`: the scaler's last decisions with their
 * reasons, newest first. */
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb decisions [--limit N]\n"
	"Shows the scaler's last decisions, newest first, with their reasons.\n"
	"  --limit N             at most N decisions, 1 to 1000 (default 20)\n" CLI_USAGE_COMMON;

enum { OPT_LIMIT = CLI_OPT_OWN };

static int print_decisions(struct cli *cli, json_t *reply, void *arg)
{
	json_t *d;
	size_t i;

	(void)cli, (void)arg;
	json_array_foreach(json_object_get(reply, "decisions"), i, d) {
		time_t at = (time_t)json_number_value(json_object_get(d, "at"));
		char stamp[32];
		struct tm tm;
		gmtime_r(&at, &tm);
		strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%SZ", &tm);
		/* The reason starts with the action itself. */
		printf("%s  %s\n", stamp, json_string_value(json_object_get(d, "reason")));
	}
	return 0;
}

int cmd_decisions(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"limit", required_argument, NULL, OPT_LIMIT},
		CLI_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct cli cli = {.name = "decisions", .usage = usage};
	char path[64] = "/v1/decisions";
	int64_t limit;
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_LIMIT) {
			if (cli_int(&cli, "--limit", optarg, 1, 1000, &limit) != 0)
				return 2;
			snprintf(path, sizeof path, "/v1/decisions?limit=%lld", (long long)limit);
		} else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT) {
			return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	return cli_show(&cli, "GET", path, print_decisions, NULL);
}
