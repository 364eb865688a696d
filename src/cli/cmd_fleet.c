/* `ebb fleet [--all]`: the instances, their state, offer, idle time and
 * job, the idle timeout in force and why, and instance time against job
 * time. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb fleet [--all]\n"
	"Lists the instances the scaler runs.\n"
	"  --all                 terminated instances too\n" CLI_USAGE_COMMON;

enum { OPT_ALL = CLI_OPT_OWN };

static void add_row(struct table *t, json_t *inst)
{
	json_t *job = json_object_get(inst, "job"), *idle = json_object_get(inst, "idle_s");
	char idle_text[16] = "-";

	if (json_is_number(idle))
		cli_span_text(json_number_value(idle), idle_text, sizeof idle_text);
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(inst, "id")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "state")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "offer")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "market")));
	table_add(t, "%s", json_string_value(json_object_get(inst, "gpu_ids")));
	table_add(t, "%s", idle_text);
	if (json_is_integer(job))
		table_add(t, "%lld", (long long)json_integer_value(job));
	else
		table_add(t, "-");
	table_add(t, "%s", json_string_value(json_object_get(inst, "reason")));
}

static int print_fleet(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"ID", "STATE", "OFFER", "MARKET", "GPUS", "IDLE", "JOB",
					      "REASON", NULL};
	json_t *inst, *limits = json_object_get(reply, "limits");
	struct table t;
	size_t i;
	int rc;

	(void)arg;
	table_init(&t, headers);
	json_array_foreach(json_object_get(reply, "instances"), i, inst)
		add_row(&t, inst);
	rc = table_print(&t, stdout);
	table_free(&t);
	if (rc != 0)
		return cli_error(cli, "out of memory");
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

int cmd_fleet(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"all", no_argument, NULL, OPT_ALL},
		CLI_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct cli cli = {.name = "fleet", .usage = usage};
	const char *path = "/v1/fleet";
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_ALL)
			path = "/v1/fleet?all=1";
		else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	return cli_show(&cli, "GET", path, print_fleet, NULL);
}
