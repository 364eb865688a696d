/* The HTTP client of the CLI commands, of the worker (and of the tests):
 * libcurl with one kept-alive connection, JSON in and out. An https://
 * server is verified against the system's CAs, or against the CA file
 * given; there is no way to turn the verification off.
 *
 * The server may be a comma-separated list of serves on one database (a
 * leader and its standbys, which do not listen: docs/HA.md): a call goes
 * to the serve that answered last, and moves on to the next in the list,
 * in order, when that one refuses the connection (nothing was sent, so
 * the call goes out again at once). A connection cut after the request
 * went out is not sent again (the dead serve may have done it): the call
 * fails as before, and the caller's retry finds the dead serve refusing
 * and moves on. */
#ifndef EBB_CLIENT_H
#define EBB_CLIENT_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#define CLIENT_SERVERS_MAX 8

struct client {
	char server[512]; /* base URL of the serve in use, e.g. http://127.0.0.1:7070 */
	char servers[CLIENT_SERVERS_MAX][512]; /* all of them, in the order given */
	int nservers, current; /* server is servers[current] */
	char token[512];  /* bearer token, may be empty */
	char cacert[4096]; /* PEM file of the CAs to trust; "": the system's */
	void *curl;       /* CURL * */
	char err[512];    /* reason of the last failure */
	/* When it points at a nonzero flag, a call in flight is given up (a
	 * worker's long-poll on SIGTERM). NULL: calls run to their end. */
	volatile sig_atomic_t *abort_flag;
	/* With client_interruptible: how long a call may still end once the
	 * flag is set, so that a reply on its way is read rather than lost
	 * (a long-poll answered as it is cut). 0: given up at once. */
	int abort_grace_ms;
	/* CURLM *, with client_interruptible: a call in another thread is
	 * cut short at once by client_interrupt. NULL: none. */
	void *multi;
};

/* Which serve to call and how, as a command line says it (ebb worker's,
 * the client commands'): each NULL when not given, for client_init to
 * read from the environment. */
struct client_args {
	const char *server, *token, *cacert;
};

/* server, token and cacert: NULL to read EBB_SERVER / EBB_TOKEN /
 * EBB_CACERT (server defaults to http://127.0.0.1:7070; "host:port" gets
 * http:// put in front; "URL,URL,..." names several serves, at most
 * CLIENT_SERVERS_MAX). -1 with c->err when one cannot be used. */
int client_init(struct client *c, const char *server, const char *token, const char *cacert);
/* Makes the i-th serve of the list the one the next call goes to first
 * (a worker's runner goes on where the worker was). */
void client_use(struct client *c, int i);
/* Is url on one of c's serves (the same base URL, then '/' or its end)? */
int client_owns_url(const struct client *c, const char *url);
void client_free(struct client *c);
/* Lets another thread cut this client's call in flight short: the call's
 * thread sets *abort_flag, then client_interrupt(). -1 with c->err. */
int client_interruptible(struct client *c);
void client_interrupt(struct client *c);

/* Sends METHOD path (e.g. "/v1/jobs") with body (not stolen; NULL for none).
 * Returns the HTTP status and the parsed JSON reply in *reply (NULL when
 * the body is empty or not JSON), or -1 when no reply came, with c->err. */
int client_call(struct client *c, const char *method, const char *path, json_t *body,
		json_t **reply);

/* The one-line reason of an error reply: its error.message (and field),
 * or the status when the body says nothing. */
void client_error_text(int status, json_t *reply, char *buf, size_t size);

#endif
