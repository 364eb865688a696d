/* `ebb fleet [--all [--limit N] [--after ID]]`: the instances, their
 * state, offer, idle time and job (all of them a page at a time), the
 * idle timeout in force and why, and instance time against job time. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct option_spec options[] = {
	{"all", 0, OPTION_FLAG, NULL, CLI_QUERY, "terminated instances too, a page at a time", .field = "all"},
	{"limit", 0, OPTION_INT, "N", CLI_QUERY, "with --all: at most N instances, 1 to 1000 (100 unless given)",
	 .min = 1, .max = 1000, .field = "limit"},
	{"after", 0, OPTION_INT, "ID", CLI_QUERY, "with --all: instances after this id: the next page",
	 .max = INT64_MAX, .field = "after"},
	{.kind = OPTION_GROUP, .group = cli_client_options},
	{0},
};

static const struct usage usage = {"ebb fleet [--all [--limit N] [--after ID]]",
	"Lists the instances the scaler runs: GPUS is how many each has, GPU IDS the\n"
	"devices it was given (the local provider's; `-` where the provider does not\n"
	"say, as exec), HANDLERS the resident handlers its worker keeps (type, state,\n"
	"setup time).",
	options,
};

static void add_row(struct table *t, json_t *inst)
{
	json_t *job = json_object_get(inst, "job"), *idle = json_object_get(inst, "idle_s");
	const char *gpu_ids = json_string_value(json_object_get(inst, "gpu_ids"));
	char idle_text[16] = "-", handlers[256];

	if (json_is_number(idle))
		cli_span_text(json_number_value(idle), idle_text, sizeof idle_text);
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(inst, "id")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "state")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "offer")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "market")));
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(inst, "gpus")));
	/* Only a provider that hands out devices (local) knows them. */
	table_add(t, "%s", gpu_ids && gpu_ids[0] ? gpu_ids : "-");
	table_add(t, "%s", idle_text);
	if (json_is_integer(job))
		table_add(t, "%lld", (long long)json_integer_value(job));
	else
		table_add(t, "-");
	cli_handlers_text(json_object_get(inst, "handlers"), handlers, sizeof handlers);
	table_add(t, "%s", handlers);
	table_add(t, "%s", json_string_value(json_object_get(inst, "reason")));
}

static int print_fleet(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"ID", "STATE", "OFFER", "MARKET", "GPUS", "GPU IDS", "IDLE",
					      "JOB", "HANDLERS", "REASON", NULL};
	json_t *inst, *limits = json_object_get(reply, "limits"), *next = json_object_get(reply, "next_after");
	struct table t;
	size_t i;
	int rc;

	(void)arg;
	table_rows(&t, headers, json_object_get(reply, "instances"), add_row);
	rc = table_print(&t, stdout);
	table_free(&t);
	if (rc != 0)
		return cli_error(cli, "out of memory");
	if (json_is_integer(next))
		fprintf(stderr, "(more instances: add --after %lld)\n", (long long)json_integer_value(next));
	printf("\n");
	json_array_foreach(json_object_get(reply, "idle_timeouts"), i, inst) {
		printf("idle timeout of %s: %.0fs", json_string_value(json_object_get(inst, "offer")),
		       cli_num(inst, "idle_timeout_s"));
		if (cli_num(inst, "idle_surplus_timeout_s") > 0)
			printf(", %.0fs for the other idle ones", cli_num(inst, "idle_surplus_timeout_s"));
		printf(" (%s)\n", json_string_value(json_object_get(inst, "why")));
	}
	printf("limits: %lld instances, %lld GPUs, $%.2f/h\n",
	       (long long)json_integer_value(json_object_get(limits, "max_instances")),
	       (long long)json_integer_value(json_object_get(limits, "max_gpus")),
	       cli_num(limits, "max_spend_per_hour"));
	printf("%.0f instance-seconds used for %.0f job-seconds\n", cli_num(reply, "instance_seconds"),
	       cli_num(reply, "job_seconds"));
	return 0;
}

int cmd_fleet(int argc, char **argv) { return cli_get(argc, argv, &usage, "/v1/fleet", print_fleet); }
