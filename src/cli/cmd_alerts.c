/* `ebb alerts`: the alerts firing and pending, each with its labels and
 * its one-line summary, and with --rules the rules and their `for`. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd.h"

struct alerts_args {
	struct cli cli;
	int rules; /* --rules: print them too */
};

static const struct option_spec options[] = {
	{"rules", 0, OPTION_FLAG, NULL, OPTION_AT(struct alerts_args, rules),
	 "also list the rules: on or off, severity, for, alerts firing"},
	{.kind = OPTION_GROUP, .group = cli_client_options, .at = OPTION_AT(struct alerts_args, cli)},
	{0},
};

static const struct usage usage = {"ebb alerts [--rules]",
	"Shows the alerts firing and pending, with what each is about and what it costs.",
	options,
};

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
	struct alerts_args a = {.rules = 0};
	int rc = cli_parse(&a.cli, &usage, &a, argc, argv);

	return rc != OPTIONS_GO_ON ? rc : cli_show(&a.cli, "GET", "/v1/alerts", print_alerts, &a.rules);
}
