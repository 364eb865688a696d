/* `ebb workers`: GET /v1/workers, every worker serve knows (those its
 * provider started and those started by hand), when each last called and
 * the jobs it runs. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const struct usage usage = {"ebb workers",
	"Lists the workers: those a provider started (by instance) and those started by\n"
	"hand (by name), when each last called serve, the jobs it runs, and the resident\n"
	"handlers it keeps (type, state, setup time).",
	cli_client_options,
};

static void add_row(struct table *t, json_t *w)
{
	json_t *inst = json_object_get(w, "instance"), *seen = json_object_get(w, "last_seen_at"), *id;
	char ago[32] = "-", jobs[256] = "", handlers[256];
	size_t i, n = 0;

	if (json_is_number(seen)) {
		cli_span_text(difftime(time(NULL), (time_t)json_number_value(seen)), ago, sizeof ago);
		strcat(ago, " ago");
	}
	json_array_foreach(json_object_get(w, "jobs"), i, id) {
		if (n < sizeof jobs)
			n += (size_t)snprintf(jobs + n, sizeof jobs - n, "%s%lld", i ? "," : "",
					      (long long)json_integer_value(id));
	}
	table_add(t, "%s", json_string_value(json_object_get(w, "name")));
	if (json_is_integer(inst))
		table_add(t, "%lld", (long long)json_integer_value(inst));
	else
		table_add(t, "- (by hand)");
	table_add(t, "%lld", (long long)json_integer_value(json_object_get(w, "gpus")));
	table_add(t, "%s", ago);
	table_add(t, "%s", jobs[0] ? jobs : "-");
	cli_handlers_text(json_object_get(w, "handlers"), handlers, sizeof handlers);
	table_add(t, "%s", handlers);
}

static int print_workers(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const headers[] = {"NAME", "INSTANCE", "GPUS", "LAST SEEN", "JOBS", "HANDLERS", NULL};
	struct table t;
	int rc;

	(void)arg;
	table_rows(&t, headers, json_object_get(reply, "workers"), add_row);
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc != 0 ? cli_error(cli, "out of memory") : 0;
}

int cmd_workers(int argc, char **argv) { return cli_get(argc, argv, &usage, "/v1/workers", print_workers); }
