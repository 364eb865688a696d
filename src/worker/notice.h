/* The worker's watch for a spot reclaim notice: it polls a URL, the
 * cloud's metadata service or serve's own notice for a local instance,
 * with its own libcurl handle and short timeouts, no more often than its
 * interval. A notice once seen stays seen.
 *
 *   aws  http://169.254.169.254/latest/meta-data/spot/instance-action
 *        (404 until a reclaim is scheduled; IMDSv2 token when required)
 *   gcp  http://169.254.169.254/computeMetadata/v1/instance/preempted
 *        (header Metadata-Flavor: Google; "TRUE" once preempted)
 *   URL  any other: a 200 reply is a notice (serve's GET /v1/fleet/ID/notice)
 *
 * A 200 reply whose JSON body has "time" (AWS's and serve's) says when the
 * instance goes; the worker shortens its grace to stay within it. */
#ifndef EBB_NOTICE_H
#define EBB_NOTICE_H

#include <stddef.h>
#include <stdint.h>

struct notice;

/* spec: "aws", "gcp" or an http(s) URL; token: a bearer token to send (for
 * serve), or NULL; cacert: the CA file to trust for serve's https://, or
 * NULL or "" for the system's. NULL on a bad spec, with the reason in err. */
struct notice *notice_new(const char *spec, const char *token, const char *cacert, int64_t interval_ms,
			  char *err, size_t errsize);
void notice_free(struct notice *n);
const char *notice_url(const struct notice *n);

/* Milliseconds until the next poll is due (0: now), on the monotonic clock. */
int64_t notice_wait_ms(const struct notice *n, int64_t now_ms);
/* Polls when due. 1 once a notice is served, with *terminate_ms the wall
 * time (ms since the epoch) when the instance goes, or 0 when the notice
 * does not say; 0 while there is none. */
int notice_poll(struct notice *n, int64_t now_ms, int64_t *terminate_ms);

/* When a notice's reply says the instance goes: "2026-11-21T23:40:00Z" (or
 * with ".250" milliseconds, as serve says it) in the JSON body's "time",
 * as ms since the epoch; 0 when the body does not say. */
int64_t notice_time(const char *body);

#endif
