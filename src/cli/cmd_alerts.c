/* `ebb alerts`: the alerts firing and pending, each with its labels and
 * its one-line summary, and with --rules the rules and their `for`. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: ebb alerts [--rules]\n"
	"Shows the alerts firing and pending, with what each is about and what it costs.\n"
	"  --rules               also list the rules: on or off, severity, for, alerts firing\n" CLI_USAGE_COMMON;

enum { OPT_RULES = CLI_OPT_OWN };

/* "offer=a10 market=spot": the labels but alertname and severity. */
static void labels_text(json_t *labels, char *buf, size_t size)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	buf[0] = '\0';
	json_object_foreach(labels, key, v) {
		if (strcmp(key, "alertname") != 0 && strcmp(key, "severity") != 0 && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", n ? " " : "", key, json_string_value(v));
	}
}

static int print_alerts(struct cli *cli, json_t *reply, void *arg)
{
	static const char *const heads[] = {"STATE", "ALERT", "SINCE", "LABELS", "SUMMARY", NULL};
	static const char *const rule_heads[] = {"RULE", "ON", "SEVERITY", "FOR", "FIRING", NULL};
	int rules = *(const int *)arg, rc;
	json_t *a;
	struct table t;
	size_t i;

	(void)cli;
	table_init(&t, heads);
	json_array_foreach(json_object_get(reply, "alerts"), i, a) {
		time_t since = (time_t)json_number_value(json_object_get(a, "since"));
		char stamp[32], labels[400];
		struct tm tm;
		gmtime_r(&since, &tm);
		strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%SZ", &tm);
		labels_text(json_object_get(a, "labels"), labels, sizeof labels);
		table_add(&t, "%s", json_string_value(json_object_get(a, "state")));
		table_add(&t, "%s", json_string_value(json_object_get(a, "name")));
		table_add(&t, "%s", stamp);
		table_add(&t, "%s", labels);
		table_add(&t, "%s", json_string_value(json_object_get(a, "summary")));
	}
	if (json_array_size(json_object_get(reply, "alerts")) == 0)
		printf("no alert firing or pending\n");
	rc = table_print(&t, stdout);
	table_free(&t);
	if (rc != 0 || !rules)
		return rc;
	table_init(&t, rule_heads);
	json_array_foreach(json_object_get(reply, "rules"), i, a) {
		char span[16];
		cli_span_text(json_number_value(json_object_get(a, "for_s")), span, sizeof span);
		table_add(&t, "%s", json_string_value(json_object_get(a, "name")));
		table_add(&t, "%s", json_is_true(json_object_get(a, "on")) ? "on" : "off");
		table_add(&t, "%s", json_string_value(json_object_get(a, "severity")));
		table_add(&t, "%s", span);
		table_add(&t, "%lld", (long long)json_integer_value(json_object_get(a, "firing")));
	}
	printf("\n");
	rc = table_print(&t, stdout);
	table_free(&t);
	return rc;
}

int cmd_alerts(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rules", no_argument, NULL, OPT_RULES},
		CLI_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct cli cli = {.name = "alerts", .usage = usage};
	int c, rc, rules = 0;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == OPT_RULES)
			rules = 1;
		else if ((rc = cli_option(&cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	return cli_show(&cli, "GET", "/v1/alerts", print_alerts, &rules);
}
