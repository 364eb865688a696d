/* libmicrohttpd inside the libevent loop, with replies held back until the
 * batch they acknowledge is committed (see httpd.h). */
#define _GNU_SOURCE /* POLLRDHUP */
#include "serve/httpd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"
#include "common/units.h"
#include "serve/target.h"
#include "serve/tls.h"

enum request_state {
	R_READING, /* headers or body still arriving */
	R_HANDLED, /* with the handler: suspended, no reply yet (long-poll) */
	R_READY,   /* reply made, suspended until the next flush */
	R_SENT,    /* response queued on the connection */
};

struct request {
	struct httpd *h;
	struct MHD_Connection *conn;
	const char *method, *path;
	char *body;
	size_t len, cap;
	int too_large;
	/* ebb's own error for a head over its limits or a body it cannot
	 * read: the status and the body, sent instead of the handler's reply */
	int refused;
	json_t *refusal;
	enum request_state state;
	int status;
	char *reply;
	size_t reply_len;
	const char *content_type;
	int page; /* a page of the dashboard: sent with its security headers */
	struct request *next_ready;
	struct request_keeper *keeper;
};

struct httpd {
	struct MHD_Daemon *d;
	struct event *io, *timer;
	struct httpd_hooks hooks;
	struct tls *tls; /* NULL: plain HTTP */
	int64_t max_body;
	struct request *ready_head, **ready_tail;
	int flushing;
	/* httpd_stop() drains: no new connection is taken, and a request
	 * that comes on an open one is refused (503) and its connection
	 * closed, so that the replies made so far all leave. */
	int stopping;
};

static void rearm(struct httpd *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(h->d, &ms) == MHD_YES)
		timer_add_ms(h->timer, ms > INT64_MAX ? INT64_MAX : (int64_t)ms);
	else
		evtimer_del(h->timer);
}

/* The commits one flush makes at most before it lets the loop run the
 * other events: under a load that never pauses, requests would come in
 * as fast as they are answered, and the signals, the deadlines and the
 * scaler would wait for ever. */
#define FLUSH_ROUNDS 4

void httpd_flush(struct httpd *h)
{
	int rounds = 0;

	/* A flush runs MHD, whose handlers may make more replies: they are
	 * taken by the loop below, not by a nested flush. */
	if (h->flushing)
		return;
	h->flushing = 1;
	MHD_run(h->d);
	for (;;) {
		struct ebb_error e;
		int failed = h->hooks.commit(h->hooks.ctx, &e);
		struct request *list = h->ready_head;

		if (!list)
			break;
		h->ready_head = NULL;
		h->ready_tail = &h->ready_head;
		if (failed) {
			json_t *body = error_to_json(&e);

			for (struct request *r = list; r; r = r->next_ready) {
				struct jsonout o = {0};
				jsonout_json(&o, NULL, json_incref(body)); /* it steals one */
				free(r->reply);
				r->reply = jsonout_finish(&o);
				r->reply_len = strlen(r->reply);
				r->status = e.status;
				r->content_type = "application/json";
				r->page = 0;
			}
			json_decref(body);
		}
		for (struct request *r = list; r; r = r->next_ready)
			MHD_resume_connection(r->conn);
		MHD_run(h->d);
		if (++rounds == FLUSH_ROUNDS && h->ready_head && !h->stopping) {
			/* What came meanwhile waits, in the open batch, for the
			 * next turn of the loop, a moment away. */
			h->flushing = 0;
			timer_add_ms(h->timer, 0);
			return;
		}
	}
	h->flushing = 0;
	rearm(h);
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	httpd_flush(arg);
}

static enum MHD_Result send_reply(struct request *req)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(req->reply_len, req->reply, MHD_RESPMEM_MUST_FREE);
	req->reply = NULL;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, req->content_type);
	if (req->h->stopping)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (req->page) {
		/* Its own script and style only, its data from its own origin,
		 * never in a frame; no caching of a page that changes with ebb. */
		MHD_add_response_header(resp, "Content-Security-Policy",
					"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
					" img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
		MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	}
	ret = MHD_queue_response(req->conn, (unsigned)req->status, resp);
	MHD_destroy_response(resp);
	req->state = R_SENT;
	return ret;
}

static void handle(struct request *req)
{
	req->state = R_HANDLED;
	MHD_suspend_connection(req->conn);
	req->h->hooks.handle(req->h->hooks.ctx, req);
}

/* The most of an oversized body read through to refuse it cleanly. */
#define DRAIN_MAX (64LL << 20)

/* ebb's limits on a request's head (docs/API.md, "Request limits"), with
 * those on its target (target.h): far above what a client of ebb sends
 * (a token is at most 255 bytes, a query a few names), far below
 * POOL_SIZE, so that a head over them still fits in MHD's memory, reaches
 * on_access and gets a JSON error. */
#define MAX_HEAD 8192  /* the request line and header lines: else 431 */
#define MAX_FIELDS 100 /* header fields and cookies: else 431 */

/* Each connection's memory in MHD. It holds the head, 64 bytes for every
 * header field, cookie and query parameter, a copy of the Cookie header,
 * then the reply's status line and headers; bodies are copied out as they
 * come. A head within the limits above takes at most 28.5 KiB (8 KiB, its
 * Cookie header copied, 200 fields and parameters), so it always fits; a
 * larger one gets ebb's 414 or 431 until it nears 36 KiB, and past that
 * MHD's own reply, in HTML (the cases are in docs/API.md).
 * MHD zeroes the whole pool after each request, so a kept-alive connection
 * keeps all of it resident: 1,000 workers, each with a request served and
 * a long-poll waiting, take 36 MB (measured: 44 MB for the process, against
 * 24 MB with 16 KiB). Past 32 KiB MHD 0.9.75 maps a pool rather than
 * mallocs it, and a closed connection gives it back: once those workers
 * are gone serve is back to 8 MB, where 16 KiB pools stayed in the heap
 * (24 MB). */
#define POOL_SIZE ((size_t)36864)

/* What ebb keeps of a connection, from its start to its close. */
struct conn {
	struct ebb_error target; /* the current request's target refused (a 414); status 0: within limits */
	struct tls_gen *tls;     /* the certificate it may use (tls.h); NULL: plain HTTP */
};

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct httpd *h = cls;
	struct conn *c = *socket_context;

	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = c = mem_calloc(1, sizeof *c);
		if (c && h->tls)
			c->tls = tls_hold(h->tls);
		return;
	}
	if (c && c->tls)
		tls_release(h->tls, c->tls);
	free(c);
}

/* Called by MHD once it has the request line, before it parses the query:
 * the one place that sees the request target as the client sent it. The
 * request itself is made in on_access: a request that MHD refuses itself
 * after this call may never get to on_completed. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct conn *c = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context;

	(void)cls;
	/* uri is MHD's own buffer, the request line that it splits in place
	 * (writing NULs into it), and whose query it parses once this
	 * returns: a refused target's query is cut there (target.h). */
	if (target_check((char *)uri, &c->target) == 0)
		c->target.status = 0;
	return NULL;
}

/* Decides whether ebb refuses the request, with its JSON error, from its
 * head: over the limits, or with a body MHD cannot delimit (with a transfer
 * coding other than chunked, MHD would read it until the client closes). */
static void check_head(struct request *req)
{
	struct MHD_Connection *conn = req->conn;
	const struct conn *c = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context;
	const union MHD_ConnectionInfo *head =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	int fields = MHD_get_connection_values(conn, MHD_HEADER_KIND | MHD_COOKIE_KIND, NULL, NULL);
	struct ebb_error e;

	if (c->target.status)
		e = c->target;
	else if (head->header_size > MAX_HEAD)
		error_set(&e, 431, "headers_too_large", NULL, "request head of %zu bytes, over %d",
			  head->header_size, MAX_HEAD);
	else if (fields > MAX_FIELDS)
		error_set(&e, 431, "headers_too_large", NULL, "%d header fields and cookies, over %d", fields,
			  MAX_FIELDS);
	else if (te && strcasecmp(te, "chunked") != 0)
		error_set(&e, 501, "not_implemented", NULL,
			  "Transfer-Encoding '%.64s' is not supported: send chunked or a Content-Length", te);
	else
		return;
	req->refused = e.status;
	req->refusal = error_to_json(&e);
}

/* Gives the request its reply: its refusal if it has one, else the
 * handler's. */
static void answer(struct request *req)
{
	if (req->h->stopping && !req->refusal) {
		struct ebb_error e;
		error_set(&e, 503, "shutting_down", NULL, "serve is stopping: send it again (to another serve if there is one)");
		req->refused = e.status;
		req->refusal = error_to_json(&e);
	}
	if (!req->refusal) {
		handle(req);
		return;
	}
	req->state = R_HANDLED;
	MHD_suspend_connection(req->conn);
	request_reply(req, req->refused, req->refusal);
	req->refusal = NULL;
}

static int expects_continue(struct MHD_Connection *conn)
{
	const char *e = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
	return e && strcasecmp(e, "100-continue") == 0;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *upload,
				 size_t *upload_size, void **con_cls)
{
	struct httpd *h = cls;
	struct request *req = *con_cls;

	(void)version;
	if (!req) {
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		long long announced = cl ? strtoll(cl, NULL, 10) : 0;

		req = mem_calloc(1, sizeof *req);
		req->h = h;
		req->conn = conn;
		req->method = method;
		req->path = url;
		*con_cls = req;
		check_head(req);
		req->too_large = announced > h->max_body;
		/* A request refused (by its head, or a body over max_body) is
		 * answered before any of its body is read when the client waits
		 * for a 100 Continue, when MHD cannot find the body's end, or
		 * when it is too big to read through: MHD then closes the
		 * connection after the reply. Otherwise the body is read and
		 * dropped first: closing on a body still arriving resets the
		 * connection, and the client may lose the reply before it reads
		 * it. */
		if ((req->refusal || req->too_large) &&
		    (expects_continue(conn) || announced > DRAIN_MAX || req->refused == 501 /* no end */))
			answer(req);
		return MHD_YES;
	}
	if (req->state == R_READY) {
		*upload_size = 0;
		return send_reply(req);
	}
	if (*upload_size) {
		if (!req->too_large && req->len + *upload_size > (size_t)h->max_body) {
			req->too_large = 1;
			free(req->body);
			req->body = NULL;
			req->len = 0;
		}
		if (!req->too_large && !req->refusal) {
			if (req->len + *upload_size + 1 > req->cap) {
				req->cap = (req->len + *upload_size + 1) * 2;
				req->body = mem_realloc(req->body, req->cap);
			}
			memcpy(req->body + req->len, upload, *upload_size);
			req->len += *upload_size;
			req->body[req->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (req->state == R_READING)
		answer(req);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct httpd *h = cls;
	struct request *req = *con_cls;

	(void)conn;
	if (!req)
		return;
	if (req->state != R_READING)
		h->hooks.done(h->hooks.ctx, req, req->state == R_SENT && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
	json_decref(req->refusal);
	free(req->body);
	free(req->reply);
	free(req);
	*con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512], quoted[600];

	(void)cls;
	vsnprintf(msg, sizeof msg, fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_warn("http", "detail=%s", log_quote(quoted, sizeof quoted, msg));
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256];
	const char *port = strrchr(listen, ':');
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE}, *res;
	int64_t number;
	size_t n;

	/* getaddrinfo() would also take a service name, and cut a number to 16
	 * bits: 127.0.0.1:99999 listened on 34463. */
	if (!port || port == listen || !isdigit((unsigned char)port[1]) ||
	    parse_int64(port + 1, &number) != 0 || number > 65535)
		return -1;
	n = (size_t)(port - listen);
	if (listen[0] == '[' && port[-1] == ']') {
		listen++;
		n -= 2;
	}
	if (n >= sizeof host)
		return -1;
	memcpy(host, listen, n);
	host[n] = '\0';
	if (getaddrinfo(host, port + 1, &hints, &res) != 0)
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int httpd_is_loopback(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (parse_listen(listen, &ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
}

int httpd_tls_supported(void) { return MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) == MHD_YES; }

struct httpd *httpd_start(struct event_base *base, const struct httpd_options *o,
			  const struct httpd_hooks *hooks, char *err, size_t errsize)
{
	struct httpd *h = mem_calloc(1, sizeof *h);
	struct sockaddr_storage ss;
	socklen_t len;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_TURBO;
	/* With TLS, GnuTLS asks tls.c for the certificate at each handshake,
	 * so that a reload reaches new connections without a restart (a
	 * certificate given to MHD in memory is fixed for the daemon's life). */
	struct MHD_OptionItem tls_options[] = {
		{MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)tls_retrieve},
		{MHD_OPTION_END, 0, NULL},
	};

	if (parse_listen(o->listen, &ss, &len) != 0) {
		snprintf(err, errsize, "listen '%s': expected host:port, such as 127.0.0.1:7070", o->listen);
		free(h);
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (o->tls)
		flags |= MHD_USE_TLS;
	h->tls = o->tls;
	h->hooks = *hooks;
	h->max_body = o->max_body;
	h->ready_tail = &h->ready_head;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)((o->connection_timeout_ms + 999) / 1000),
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, POOL_SIZE,
				MHD_OPTION_ARRAY, o->tls ? tls_options : tls_options + 1,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errsize, "listen '%s': cannot bind (address in use or not available)", o->listen);
		free(h);
		return NULL;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	h->io = event_new(base, info->epoll_fd, EV_READ | EV_PERSIST, on_event, h);
	h->timer = evtimer_new(base, on_event, h);
	event_add(h->io, NULL);
	rearm(h);
	return h;
}

int httpd_port(const struct httpd *h)
{
	return MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

void httpd_stop(struct httpd *h)
{
	MHD_socket listener;

	if (!h)
		return;
	/* Every reply made leaves before the daemon stops, which it may not
	 * do with a connection still suspended. */
	h->stopping = 1;
	listener = MHD_quiesce_daemon(h->d);
	httpd_flush(h);
	event_free(h->io);
	event_free(h->timer);
	MHD_stop_daemon(h->d);
	if (listener != MHD_INVALID_SOCKET)
		close(listener);
	free(h);
}

const char *request_method(const struct request *req) { return req->method; }
const char *request_path(const struct request *req) { return req->path; }
int request_body_too_large(const struct request *req) { return req->too_large; }
void request_set_keeper(struct request *req, struct request_keeper *k) { req->keeper = k; }
int request_status(const struct request *req) { return req->state == R_READING ? 0 : req->status; }

int request_peer_gone(const struct request *req)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p = {.events = POLLRDHUP};

	if (!ci)
		return 1;
	/* Whether the client shut its end, not whether bytes wait: over TLS
	 * a client that closes sends an alert before its FIN, which a peek
	 * would take for a request. */
	p.fd = ci->connect_fd;
	return poll(&p, 1, 0) < 0 || (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}
struct request_keeper *request_keeper(const struct request *req) { return req->keeper; }

const char *request_header(const struct request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *request_query(const struct request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *request_body(const struct request *req, size_t *len)
{
	*len = req->len;
	return req->body ? req->body : "";
}

void request_reply_text(struct request *req, int status, const char *content_type, char *text)
{
	req->status = status;
	req->reply = text;
	req->reply_len = strlen(text);
	req->content_type = content_type;
	req->state = R_READY;
	req->next_ready = NULL;
	*req->h->ready_tail = req;
	req->h->ready_tail = &req->next_ready;
}

int request_reply_page(struct request *req, const char *content_type, const char *body, size_t len)
{
	char *copy = mem_alloc(len + 1);

	if (!copy)
		return -1;
	memcpy(copy, body, len);
	copy[len] = '\0';
	request_reply_text(req, 200, content_type, copy);
	req->reply_len = len;
	req->page = 1;
	return 0;
}

void request_reply_json(struct request *req, int status, char *text)
{
	request_reply_text(req, status, "application/json", text);
}

void request_reply(struct request *req, int status, json_t *body)
{
	struct jsonout o = {0};

	jsonout_json(&o, NULL, body);
	request_reply_json(req, status, jsonout_finish(&o));
}
