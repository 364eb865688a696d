/* A receiver of webhooks for the tests: an HTTP/1.1 server on a loopback
 * port, on a thread of its own, that keeps every request it is sent (its
 * path, headers and body) and answers each with the status it is told,
 * or, told 0, never answers (a receiver that hangs); or, scripted, with
 * the replies a route is given in turn (a stand-in for serve). Requests
 * on one connection are read one after another, and many connections at
 * once. */
#ifndef EBB_TESTS_RECEIVER_H
#define EBB_TESTS_RECEIVER_H

#include <jansson.h>

struct receiver;

/* Listening, answering 200; fails the test if it cannot. */
struct receiver *receiver_start(void);
void receiver_stop(struct receiver *r);
/* http://127.0.0.1:PORT/hook */
const char *receiver_url(const struct receiver *r);
/* What the next requests get: a status, or 0 for no answer at all. */
void receiver_answer(struct receiver *r, int status);
/* Requests whose request line starts with route ("POST /v1/lease")
 * get the replies scripted for it in turn, the last one again and again:
 * status and the JSON body (0: no answer at all). */
void receiver_script(struct receiver *r, const char *route, int status, const char *body);
/* Requests received so far. */
int receiver_count(struct receiver *r);
/* Request i's body parsed (NULL if not JSON) and a header (its name in
 * any case; NULL if absent): copies, to free. */
json_t *receiver_body(struct receiver *r, int i);
/* Request i's line ("POST /v1/lease HTTP/1.1"): a copy, to free; NULL
 * past the last. */
char *receiver_line(struct receiver *r, int i);
char *receiver_header(struct receiver *r, int i, const char *name);

#endif
