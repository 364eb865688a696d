/* See alert_payload.h. */
#include "serve/alert_payload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fnv.h"

static const struct {
	const char *name;
	size_t offset, size;
} label_fields[] = {
#define F(f) {#f, offsetof(struct alert_labels, f), sizeof(((struct alert_labels *)0)->f)}
	F(offer), F(market), F(lane), F(instance), F(team), F(threshold),
#undef F
};

#define NFIELDS (sizeof label_fields / sizeof *label_fields)

json_t *alert_labels_json(enum alert_rule rule, const struct alert_labels *l)
{
	json_t *o = json_pack("{s:s, s:s}", "alertname", alert_rules[rule].name, "severity", alert_rules[rule].severity);

	for (size_t k = 0; k < NFIELDS; k++) {
		const char *v = (const char *)l + label_fields[k].offset;
		if (v[0])
			json_object_set_new(o, label_fields[k].name, json_string(v));
	}
	return o;
}

int alert_labels_parse(const json_t *o, struct alert_labels *l)
{
	memset(l, 0, sizeof *l);
	if (!json_is_object(o))
		return -1;
	for (size_t k = 0; k < NFIELDS; k++) {
		const char *v = json_string_value(json_object_get(o, label_fields[k].name));
		if (v)
			snprintf((char *)l + label_fields[k].offset, label_fields[k].size, "%s", v);
	}
	return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

void alert_fingerprint(const json_t *labels, char out[17])
{
	const char *names[16];
	const char *key;
	json_t *v;
	size_t n = 0;
	uint64_t h = FNV1A_START;

	json_object_foreach((json_t *)labels, key, v) {
		if (n < 16)
			names[n++] = key;
	}
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		const char *value = json_string_value(json_object_get(labels, names[i]));
		h = fnv1a_byte(fnv1a(h, names[i]), 0xff);
		h = fnv1a_byte(fnv1a(h, value ? value : ""), 0xff);
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* RFC 3339 in UTC with milliseconds, as Go writes a time (0: Go's zero time). */
static json_t *rfc3339(int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[80];

	if (!ms)
		return json_string("0001-01-01T00:00:00Z");
	gmtime_r(&t, &tm);
	snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return json_string(buf);
}

/* The members of every object of `all` with the same value in each: the
 * labels (or annotations) a group's alerts share. */
static json_t *common(json_t *all, const char *member)
{
	json_t *first = json_object_get(json_array_get(all, 0), member);
	json_t *out = json_object(), *v, *a;
	const char *key;
	size_t i;

	json_object_foreach(first, key, v) {
		int shared = 1;
		json_array_foreach(all, i, a)
			shared &= json_equal(json_object_get(json_object_get(a, member), key), v);
		if (shared)
			json_object_set(out, key, v);
	}
	return out;
}

json_t *alert_payload(const char *external_url, enum alert_rule rule, const struct payload_alert *v, int n)
{
	json_t *alerts = json_array();
	char generator[1200], fp[17], group_key[200];
	int firing = 0;

	snprintf(generator, sizeof generator, "%s/v1/alerts", external_url);
	for (int i = 0; i < n; i++) {
		json_t *labels = alert_labels_json(v[i].rule, v[i].labels);
		alert_fingerprint(labels, fp);
		firing |= v[i].firing;
		json_array_append_new(alerts, json_pack("{s:s, s:o, s:{s:s}, s:o, s:o, s:s, s:s}", "status",
							v[i].firing ? "firing" : "resolved", "labels", labels,
							"annotations", "summary", v[i].summary, "startsAt",
							rfc3339(v[i].starts_ms), "endsAt",
							rfc3339(v[i].firing ? 0 : v[i].ends_ms), "generatorURL", generator,
							"fingerprint", fp));
	}
	snprintf(group_key, sizeof group_key, "{}:{alertname=\"%s\"}", alert_rules[rule].name);
	return json_pack("{s:s, s:s, s:i, s:s, s:s, s:{s:s}, s:o, s:o, s:s, s:o}", "version", "4", "groupKey", group_key,
			 "truncatedAlerts", 0, "status", firing ? "firing" : "resolved", "receiver", "", "groupLabels",
			 "alertname", alert_rules[rule].name, "commonLabels", common(alerts, "labels"),
			 "commonAnnotations", common(alerts, "annotations"), "externalURL", external_url, "alerts",
			 alerts);
}
