/* The HTTP server: libmicrohttpd driven from the libevent loop through its
 * epoll descriptor, one thread, no locks.
 *
 * A handler never writes a reply straight to the socket. Every reply waits,
 * with its connection suspended, until the next flush; a flush first calls
 * the owner's commit hook, so no reply leaves before the store changes it
 * acknowledges are on disk, and all the requests read in one pass of the
 * loop share one commit. A long-poll is a request with no reply yet.
 *
 * A request over ebb's limits on its head, or with a body it cannot read
 * (docs/API.md, "Request limits"), gets its JSON error from here and never
 * reaches the handler; the done hook still sees it. */
#ifndef EBB_HTTPD_H
#define EBB_HTTPD_H

#include <event2/event.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct httpd;
struct request;

struct httpd_hooks {
	void *ctx;
	/* A complete request: reply now (request_reply) or later (park it). */
	void (*handle)(void *ctx, struct request *req);
	/* Called at every flush before pending replies go out (and once
	 * more after the last of them): commit what the batch wrote. Nonzero
	 * when it could not, and every pending reply becomes the error it
	 * wrote into err. */
	int (*commit)(void *ctx, struct ebb_error *err);
	/* A request is gone: replied, or its client went away. sent is 1 when
	 * its reply was written in full. */
	void (*done)(void *ctx, struct request *req, int sent);
};

struct tls;

struct httpd_options {
	const char *listen; /* "host:port" or "[v6]:port" */
	struct tls *tls;    /* HTTPS with its certificate (tls.h), if httpd_tls_supported(); NULL: plain HTTP */
	int64_t max_body;
	int64_t max_connections;
	int64_t connection_timeout_ms;
};

struct httpd *httpd_start(struct event_base *base, const struct httpd_options *o,
			  const struct httpd_hooks *hooks, char *err, size_t errsize);
int httpd_port(const struct httpd *h);
/* Commits and sends every reply made since the last flush. Call it after
 * any event that may have produced replies. */
void httpd_flush(struct httpd *h);
void httpd_stop(struct httpd *h);

const char *request_method(const struct request *req);
const char *request_path(const struct request *req);
const char *request_header(const struct request *req, const char *name);
const char *request_query(const struct request *req, const char *key);
const char *request_body(const struct request *req, size_t *len);
/* The body went over max_body and was not kept. */
int request_body_too_large(const struct request *req);
/* Has the client of a parked request closed its connection? MHD does not
 * watch suspended connections, so ask the socket. */
int request_peer_gone(const struct request *req);
/* What holds a parked request (a lease's long-poll, a job's watch): told
 * through serve's done hook once the request is gone, sent as there. */
struct request_keeper {
	void (*gone)(struct request_keeper *k, int sent);
};
void request_set_keeper(struct request *req, struct request_keeper *k);
struct request_keeper *request_keeper(const struct request *req);
/* The status of the reply made (after a failed commit: its error's); 0 if none. */
int request_status(const struct request *req);

/* Queues a JSON reply (steals body); it leaves at the next flush. */
void request_reply(struct request *req, int status, json_t *body);
/* Same with the JSON already written (jsonout_finish; steals text). */
void request_reply_json(struct request *req, int status, char *text);
/* Same with a body already in the Prometheus or plain text format. */
void request_reply_text(struct request *req, int status, const char *content_type, char *text);
/* A page of the dashboard (HTML, script or style): 200 with a copy of
 * body, and the headers that keep a browser to what the page is. 0, or
 * -1 when out of memory (no reply made). */
int request_reply_page(struct request *req, const char *content_type, const char *body, size_t len);

/* Is host:port an address on the loopback interface? -1 if it does not parse. */
int httpd_is_loopback(const char *listen);
/* Can this libmicrohttpd serve HTTPS, asking tls.c for the certificate at
 * each handshake? */
int httpd_tls_supported(void);

#endif
