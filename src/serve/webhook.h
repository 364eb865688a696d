/* The receivers of alerts, [webhook.NAME]: each gets every notification
 * as a POST of JSON, in order, one at a time.
 *
 * Posts go through libcurl's multi interface, driven by serve's event
 * loop (its sockets and its timer are libevent events), so a receiver that
 * is slow, hangs or is gone blocks nothing: the post ends at [alerts]
 * webhook_timeout. A post that fails (no connection, a timeout, a status
 * other than 2xx) is tried again after 1 s, then 2 s, 4 s, ... up to
 * [alerts] webhook_retry_max, for as long as it fails; the next ones wait
 * behind it. At most WEBHOOK_QUEUE_MAX wait per receiver: past that the
 * oldest is dropped, with a warning in the log.
 *
 * libcurl is loaded at the first post (common/curl_lazy.h): a serve that
 * has nothing to post never maps it. */
#ifndef EBB_WEBHOOK_H
#define EBB_WEBHOOK_H

#include <event2/event.h>
#include <jansson.h>

#include "common/config.h"

#define WEBHOOK_QUEUE_MAX 256

struct webhooks;

/* The receivers of cfg's [webhook.*] sections; NULL when out of memory. */
struct webhooks *webhooks_new(struct event_base *base, const struct config *cfg);
/* Drops what waits and what is under way. */
void webhooks_free(struct webhooks *w);
/* Queues payload for each receiver, with its "receiver" member set to the
 * receiver's name (Alertmanager's webhook format names it so). */
void webhooks_post(struct webhooks *w, const json_t *payload);

#endif
