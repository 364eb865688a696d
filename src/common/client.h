/* The HTTP client of the CLI commands, of the worker (and of the tests):
 * libcurl with one kept-alive connection, JSON in and out. An https://
 * server is verified against the system's CAs, or against the CA file
 * given; there is no way to turn the verification off. */
#ifndef EBB_CLIENT_H
#define EBB_CLIENT_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

struct client {
	char server[512]; /* base URL, e.g. http://127.0.0.1:7070 */
	char token[512];  /* bearer token, may be empty */
	char cacert[4096]; /* PEM file of the CAs to trust; "": the system's */
	void *curl;       /* CURL * */
	char err[512];    /* reason of the last failure */
	/* When it points at a nonzero flag, a call in flight is given up (a
	 * worker's long-poll on SIGTERM). NULL: calls run to their end. */
	volatile sig_atomic_t *abort_flag;
};

/* server, token and cacert: NULL to read EBB_SERVER / EBB_TOKEN /
 * EBB_CACERT (server defaults to http://127.0.0.1:7070; "host:port" gets
 * http:// put in front). -1 with c->err when one cannot be used. */
int client_init(struct client *c, const char *server, const char *token, const char *cacert);
void client_free(struct client *c);

/* Sends METHOD path (e.g. "/v1/jobs") with body (not stolen; NULL for none).
 * Returns the HTTP status and the parsed JSON reply in *reply (NULL when
 * the body is empty or not JSON), or -1 when no reply came, with c->err. */
int client_call(struct client *c, const char *method, const char *path, json_t *body,
		json_t **reply);

/* The one-line reason of an error reply: its error.message (and field),
 * or the status when the body says nothing. */
void client_error_text(int status, json_t *reply, char *buf, size_t size);

#endif
