/* `ebb store check`: GET /v1/store/check, the store's tallies against a
 * count of its jobs; exit 1 when they differ, as for a failed call. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct usage usage = {"ebb store check",
	"Counts the jobs again and compares them with the tallies serve keeps of them\n"
	"per state and class, which the scaler, /metrics and the counts read in their\n"
	"place (docs/ARCHITECTURE.md, \"The tallies\"). Prints the keys that differ and\n"
	"exits 1 if any does. It reads every job: on PostgreSQL other serves' job\n"
	"changes wait until it ends. An admin token's call.",
	cli_client_options,
};

static void print_sums(const char *what, json_t *s)
{
	printf("  %-8s jobs=%lld items=%lld without_est=%lld est_s=%lld\n", what,
	       (long long)json_integer_value(json_object_get(s, "jobs")),
	       (long long)json_integer_value(json_object_get(s, "items")),
	       (long long)json_integer_value(json_object_get(s, "without_est")),
	       (long long)json_integer_value(json_object_get(s, "est_s")));
}

static void print_diff(json_t *d)
{
	printf("%s lane=%s type=%s team=%s gpus=%lld min_vram_gb=%lld priority=%lld\n",
	       json_string_value(json_object_get(d, "state")), json_string_value(json_object_get(d, "lane")),
	       json_string_value(json_object_get(d, "type")), json_string_value(json_object_get(d, "team")),
	       (long long)json_integer_value(json_object_get(d, "gpus")),
	       (long long)json_integer_value(json_object_get(d, "min_vram_gb")),
	       (long long)json_integer_value(json_object_get(d, "priority")));
	print_sums("kept", json_object_get(d, "kept"));
	print_sums("counted", json_object_get(d, "counted"));
}

int cmd_store_check(int argc, char **argv)
{
	struct cli cli = {0};
	json_t *reply, *d;
	size_t i;
	int rc = cli_parse(&cli, &usage, &cli, argc, argv), ok;

	if (rc != OPTIONS_GO_ON)
		return rc;
	rc = cli_call(&cli, "GET", "/v1/store/check", NULL, &reply) < 0;
	cli_close(&cli);
	if (rc)
		return 1;
	ok = json_is_true(json_object_get(reply, "ok"));
	if (cli.json) {
		cli_print_json(reply);
	} else {
		json_array_foreach(json_object_get(reply, "differences"), i, d)
			print_diff(d);
		printf("%s: %lld keys compared, %lld differ\n", json_string_value(json_object_get(reply, "store")),
		       (long long)json_integer_value(json_object_get(reply, "keys")),
		       (long long)json_integer_value(json_object_get(reply, "differing")));
	}
	json_decref(reply);
	return ok ? 0 : cli_error(&cli, "the tallies differ from a count of the jobs");
}
