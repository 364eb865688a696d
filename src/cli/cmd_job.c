/* `ebb job ID`: GET /v1/jobs/ID, as "key: value" lines for people or the
 * job's JSON. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"
#include "common/units.h"

#define KEY_WIDTH 17
#define JSON_WIDTH 200 /* payload, result, checkpoint; --json shows them whole */
#define CELL_WIDTH 40  /* a run's checkpoint and reason in its row */

static void line(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("%-*s", KEY_WIDTH, key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Text that may span lines (a worker's error): later lines under the first. */
static void text_line(const char *key, const char *s)
{
	printf("%-*s", KEY_WIDTH, key);
	for (; *s; s++) {
		putchar(*s);
		if (*s == '\n')
			printf("%*s", KEY_WIDTH, "");
	}
	putchar('\n');
}

static const char *str(json_t *job, const char *name)
{
	const char *s = json_string_value(json_object_get(job, name));

	return s ? s : "-";
}

static long long num(json_t *job, const char *name)
{
	return (long long)json_integer_value(json_object_get(job, name));
}

/* Unix seconds as UTC ISO 8601 into buf; "-" for null (not yet, or
 * never). */
static void time_text(json_t *t, char *buf, size_t size)
{
	time_t s = (time_t)json_number_value(t);
	struct tm tm;

	if (!json_is_number(t) || !gmtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "-");
}

static void time_line(const char *key, json_t *t)
{
	char buf[32];

	time_text(t, buf, sizeof buf);
	line(key, "%s", buf);
}

/* A string cut for a cell or a line; "-" for null. */
static void cut_text(json_t *v, size_t width, char *buf, size_t size)
{
	snprintf(buf, size, "%s", json_is_string(v) ? json_string_value(v) : "-");
	cli_truncate(buf, width);
}

/* One run (docs/API.md, GET /v1/jobs/ID's runs): where and when it ran,
 * how it ended and why. */
static void add_run(struct table *t, json_t *run)
{
	json_t *inst = json_object_get(run, "instance"), *exit = json_object_get(run, "exit");
	json_t *ended = json_object_get(run, "ended_at");
	char buf[256], span[16];

	table_add(t, "%lld", num(run, "attempt"));
	table_add(t, "%s", str(run, "outcome"));
	if (json_is_integer(exit))
		table_add(t, "%lld", (long long)json_integer_value(exit));
	else
		table_add(t, "-");
	table_add(t, "%s", str(run, "worker"));
	if (json_is_integer(inst))
		table_add(t, "%lld %s %s", (long long)json_integer_value(inst), str(run, "offer"), str(run, "market"));
	else
		table_add(t, "-");
	time_text(json_object_get(run, "started_at"), buf, sizeof buf);
	table_add(t, "%s", buf);
	if (json_is_number(ended)) {
		cli_span_text(json_number_value(ended) - cli_num(run, "started_at"), span, sizeof span);
		table_add(t, "%s", span);
	} else {
		table_add(t, "-");
	}
	table_add(t, "%lld", num(run, "items_done"));
	cut_text(json_object_get(run, "checkpoint"), CELL_WIDTH, buf, sizeof buf);
	table_add(t, "%s", buf);
	cut_text(json_object_get(run, "reason"), CELL_WIDTH, buf, sizeof buf);
	table_add(t, "%s", buf);
}

static int runs_table(json_t *runs)
{
	static const char *const headers[] = {"RUN", "OUTCOME", "EXIT", "WORKER", "INSTANCE", "STARTED", "RAN",
					      "ITEMS", "CHECKPOINT", "REASON", NULL};
	struct table t;
	int rc;

	if (json_array_size(runs) == 0)
		return 0;
	printf("\n");
	table_rows(&t, headers, runs, add_run);
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc;
}

static void json_line(const char *key, json_t *v)
{
	char *text;

	if (!v || !(text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)))
		return;
	cli_truncate(text, JSON_WIDTH);
	line(key, "%s", text);
	free(text);
}

static int print_job(struct cli *cli, json_t *job, void *arg)
{
	json_t *cmd = json_object_get(job, "command"), *lease = json_object_get(job, "lease"), *v;
	char buf[4096];
	size_t i;

	(void)arg;
	line("id:", "%lld", num(job, "id"));
	line("state:", "%s", cli_state_text(str(job, "state")));
	line("lane:", "%s", str(job, "lane"));
	line("priority:", "%lld", num(job, "priority"));
	line("type:", "%s", str(job, "type"));
	line("team:", "%s", str(job, "team"));
	if (json_is_array(cmd)) {
		cli_argv_text(cmd, buf, sizeof buf);
		line("command:", "%s", buf);
	}
	json_line("payload:", json_object_get(job, "payload"));
	if (json_array_size(json_object_get(job, "labels")) > 0) {
		printf("%-*s", KEY_WIDTH, "labels:");
		json_array_foreach(json_object_get(job, "labels"), i, v)
			printf("%s%s", i ? "," : "", json_string_value(v));
		putchar('\n');
	}
	line("gpus:", "%lld", num(job, "gpus"));
	line("min_vram_gb:", "%lld", num(job, "min_vram_gb"));
	line("items:", "%lld", num(job, "items"));
	line("items_done:", "%lld", num(job, "items_done"));
	line("attempts:", "%lld/%lld", num(job, "attempts"), num(job, "max_attempts"));
	/* Runs stopped from outside (spot reclaims) and the items they cost:
	 * what a user asks after "why did it take so long". */
	if (json_is_string(json_object_get(job, "held")))
		line("held:", "%s", json_string_value(json_object_get(job, "held")));
	if (num(job, "interruptions"))
		line("interruptions:", "%lld (items lost: %lld)", num(job, "interruptions"), num(job, "items_lost"));
	if (json_object_get(job, "est_s")) {
		format_duration(buf, sizeof buf, num(job, "est_s") * 1000);
		line("estimate:", "%s", buf);
	}
	format_duration(buf, sizeof buf, num(job, "timeout_s") * 1000);
	line("timeout:", "%s", buf);
	time_line("created:", json_object_get(job, "created_at"));
	time_line("updated:", json_object_get(job, "updated_at"));
	time_line("run_at:", json_object_get(job, "run_at"));
	if (json_object_get(job, "started_at"))
		time_line("started:", json_object_get(job, "started_at"));
	time_line("finished:", json_object_get(job, "finished_at"));
	if (json_object_get(job, "idempotency_key"))
		line("idempotency_key:", "%s", str(job, "idempotency_key"));
	if (lease) {
		line("lease worker:", "%s", str(lease, "worker"));
		line("lease token:", "%lld", num(lease, "token"));
		time_line("lease expires:", json_object_get(lease, "expires_at"));
	}
	if (json_object_get(job, "checkpoint")) {
		cut_text(json_object_get(job, "checkpoint"), JSON_WIDTH, buf, sizeof buf);
		line("checkpoint:", "%s", buf);
	}
	if (json_object_get(job, "error"))
		text_line("error:", str(job, "error"));
	json_line("result:", json_object_get(job, "result"));
	return runs_table(json_object_get(job, "runs")) != 0 ? cli_error(cli, "out of memory") : 0;
}

static const struct cli_by_id show_job = {
	{"ebb job ID",
	 "Shows one job (a leased one as `running`), its checkpoint, the current\n"
	 "attempt's error and its result, then each of its runs, oldest first: its\n"
	 "outcome and exit status, the worker and the instance (offer, market) it ran\n"
	 "on, when it began and how long it ran, the items done and the checkpoint as\n"
	 "of its end, and why it ended. --json gives GET /v1/jobs/ID as is.",
	 cli_client_options, .max_words = 1},
	"job", "GET", "/v1/jobs/%lld", print_job, NULL,
};

int cmd_job(int argc, char **argv) { return cli_by_id(argc, argv, &show_job); }
