/* Alerts as Alertmanager writes them to its webhook receivers (its
 * webhook_config, payload version 4), so that anything that takes
 * Alertmanager's webhooks takes ebb's: a notification is one group, here
 * the alerts of one rule, with the group's status, its labels, the labels
 * and annotations its alerts share, and each alert with its status,
 * labels, annotations (summary), startsAt, endsAt (0001-01-01T00:00:00Z
 * while it fires), generatorURL and fingerprint (Prometheus' hash of its
 * labels). docs/ALERTS.md shows one. */
#ifndef EBB_ALERT_PAYLOAD_H
#define EBB_ALERT_PAYLOAD_H

#include <jansson.h>
#include <stdint.h>

#include "serve/alert_rules.h"

struct payload_alert {
	enum alert_rule rule;
	const struct alert_labels *labels;
	const char *summary;
	int firing;
	int64_t starts_ms, ends_ms; /* ends_ms: when it resolved */
};

/* Its labels as a JSON object: alertname, severity, and those set. */
json_t *alert_labels_json(enum alert_rule rule, const struct alert_labels *l);
/* Reads back what alert_labels_json wrote (but alertname and severity):
 * 0, or -1 when it is not such an object. */
int alert_labels_parse(const json_t *o, struct alert_labels *l);
/* Prometheus' fingerprint of the labels: FNV-1a (64 bits) over the names
 * in order, each name and value followed by the byte 0xff, as 16 hex
 * digits. */
void alert_fingerprint(const json_t *labels, char out[17]);

/* The notification of v[0..n), the alerts of one rule; external_url is
 * where serve is reached (the alerts' generatorURL is its /v1/alerts). */
json_t *alert_payload(const char *external_url, enum alert_rule rule, const struct payload_alert *v, int n);

#endif
