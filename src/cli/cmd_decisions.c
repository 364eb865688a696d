/* `ebb decisions [--limit N] [--after ID]`: the scaler's last decisions
 * with their reasons, newest first, a page at a time. */
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct option_spec options[] = {
	{"limit", 0, OPTION_INT, "N", CLI_QUERY, "at most N decisions, 1 to 1000", .min = 1,
	 .max = 1000, .def = "20", .field = "limit"},
	{"after", 0, OPTION_INT, "ID", CLI_QUERY, "the decisions before this id: the next page", .max = INT64_MAX,
	 .field = "after"},
	{.kind = OPTION_GROUP, .group = cli_client_options},
	{0},
};

static const struct usage usage = {"ebb decisions [--limit N] [--after ID]",
	"Shows the scaler's last decisions, newest first, with their reasons.",
	options,
};

static int print_decisions(struct cli *cli, json_t *reply, void *arg)
{
	json_t *d, *next = json_object_get(reply, "next_after");
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
	if (json_is_integer(next))
		fprintf(stderr, "(more decisions: add --after %lld)\n", (long long)json_integer_value(next));
	return 0;
}

int cmd_decisions(int argc, char **argv) { return cli_get(argc, argv, &usage, "/v1/decisions", print_decisions); }
