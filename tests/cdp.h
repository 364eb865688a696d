/* Headless Chromium for the tests, driven over its DevTools protocol.
 *
 * Chromium is started with --remote-debugging-pipe: it reads commands on
 * its file descriptor 3 and writes replies and events on 4, each a JSON
 * message ended by a NUL byte. That is the whole of the protocol's
 * transport, with no WebSocket to speak (Debian 12's libcurl has none),
 * no port to find and nothing listening. The test side is here: start,
 * a page to drive (a target attached in "flatten" mode, whose commands
 * carry its sessionId), calls that wait for their reply, and the events
 * that come meanwhile, of which it keeps what a page reports as an error:
 * console.error, exceptions thrown, and the browser's own log errors
 * (a resource that failed, a Content-Security-Policy refusal).
 *
 * Chromium runs as root here, so it needs --no-sandbox; it gets a fresh
 * profile in a temp dir, and flags that keep it off the network (no
 * component updates, sync, or background requests). */
#ifndef EBB_TESTS_CDP_H
#define EBB_TESTS_CDP_H

#include <jansson.h>
#include <sys/types.h>

#define CDP_MAX_ERRORS 32

struct cdp {
	pid_t pid;
	int in, out; /* our ends: we write commands to in, read from out */
	int next_id;
	char session[128];
	char *buf; /* what was read past the last message */
	size_t len;
	int loaded; /* Page.loadEventFired since the last navigation */
	char errors[CDP_MAX_ERRORS][400];
	int nerrors;
};

/* Starts Chromium with its profile in dir and attaches to a new blank
 * page; fails the test if it cannot. */
void cdp_start(struct cdp *c, const char *dir);
/* Closes the browser and reaps it. */
void cdp_stop(struct cdp *c);
/* Sends method with params (a JSON object's text, or NULL) to the page;
 * waits for its reply: its result (to json_decref); the test fails on an
 * error reply or after 30 s. */
json_t *cdp_call(struct cdp *c, const char *method, const char *params);
/* Loads url and waits for its load event. */
void cdp_navigate(struct cdp *c, const char *url);
/* The value of a JavaScript expression, awaited if a promise (to
 * json_decref); the test fails if it throws. */
json_t *cdp_eval(struct cdp *c, const char *expression);
/* Is the expression's value true? */
int cdp_eval_true(struct cdp *c, const char *expression);
/* The same as a string, into buf. */
const char *cdp_eval_text(struct cdp *c, const char *expression, char *buf, size_t size);

#endif
