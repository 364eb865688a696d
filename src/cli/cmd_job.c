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
#define JSON_WIDTH 200 /* payload and result; --json shows them whole */

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

/* Unix seconds as UTC ISO 8601; "-" for null (not yet, or never). */
static void time_line(const char *key, json_t *t)
{
	time_t s = (time_t)json_number_value(t);
	char buf[32];
	struct tm tm;

	if (!json_is_number(t) || !gmtime_r(&s, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
		line(key, "-");
	else
		line(key, "%s", buf);
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

	(void)cli, (void)arg;
	line("id:", "%lld", num(job, "id"));
	line("state:", "%s", str(job, "state"));
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
	if (json_object_get(job, "checkpoint"))
		line("checkpoint:", "%zu bytes", json_string_length(json_object_get(job, "checkpoint")));
	if (json_object_get(job, "error"))
		text_line("error:", str(job, "error"));
	json_line("result:", json_object_get(job, "result"));
	return 0;
}

static const struct cli_by_id show_job = {
	{"ebb job ID", "Shows one job.", cli_client_options, .max_words = 1},
	"job", "GET", "/v1/jobs/%lld", print_job, NULL,
};

int cmd_job(int argc, char **argv) { return cli_by_id(argc, argv, &show_job); }
