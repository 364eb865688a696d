/* See cdp.h. */
#include "cdp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cmocka needs these before its header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define TIMEOUT_MS 30000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void note_error(struct cdp *c, const char *what, const char *text)
{
	if (c->nerrors < CDP_MAX_ERRORS)
		snprintf(c->errors[c->nerrors++], sizeof c->errors[0], "%s: %.360s", what, text ? text : "?");
}

/* An event: the errors a page reports, and its load. */
static void event(struct cdp *c, json_t *m)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *p = json_object_get(m, "params");

	if (!method)
		return;
	if (strcmp(method, "Page.loadEventFired") == 0) {
		c->loaded = 1;
	} else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
		json_t *d = json_object_get(p, "exceptionDetails");
		json_t *desc = json_object_get(json_object_get(d, "exception"), "description");
		note_error(c, "exception", desc ? json_string_value(desc) : json_string_value(json_object_get(d, "text")));
	} else if (strcmp(method, "Runtime.consoleAPICalled") == 0 &&
		   strcmp(json_string_value(json_object_get(p, "type")), "error") == 0) {
		json_t *arg = json_array_get(json_object_get(p, "args"), 0);
		note_error(c, "console.error", json_string_value(json_object_get(arg, "value")));
	} else if (strcmp(method, "Log.entryAdded") == 0 &&
		   strcmp(json_string_value(json_object_get(json_object_get(p, "entry"), "level")), "error") == 0) {
		/* The text, and the URL it is about where it has one (a
		 * resource that failed to load). */
		json_t *entry = json_object_get(p, "entry");
		const char *what = json_string_value(json_object_get(entry, "text"));
		const char *url = json_string_value(json_object_get(entry, "url"));
		char text[400];
		snprintf(text, sizeof text, "%s%s%s", what ? what : "?", url ? " at " : "", url ? url : "");
		note_error(c, "log", text);
	}
}

/* The next message (to json_decref), waiting at most until `until`. */
static json_t *next_message(struct cdp *c, long long until)
{
	for (;;) {
		char *end = c->buf ? memchr(c->buf, '\0', c->len) : NULL;
		if (end) {
			json_t *m = json_loads(c->buf, 0, NULL);
			size_t used = (size_t)(end - c->buf) + 1;
			memmove(c->buf, end + 1, c->len - used);
			c->len -= used;
			if (!m)
				fail_msg("chromium sent what is not JSON");
			return m;
		}
		struct pollfd p = {.fd = c->out, .events = POLLIN};
		long long left = until - now_ms();
		char chunk[65536];
		ssize_t n;
		if (left <= 0)
			fail_msg("chromium: no reply within %d ms", TIMEOUT_MS);
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if ((n = read(c->out, chunk, sizeof chunk)) <= 0)
			fail_msg("chromium closed its pipe: %s", n < 0 ? strerror(errno) : "it exited");
		c->buf = realloc(c->buf, c->len + (size_t)n);
		memcpy(c->buf + c->len, chunk, (size_t)n);
		c->len += (size_t)n;
	}
}

static void send_message(struct cdp *c, const char *text)
{
	size_t len = strlen(text) + 1, off = 0;

	while (off < len) {
		ssize_t n = write(c->in, text + off, len - off);
		if (n <= 0)
			fail_msg("chromium: cannot write to its pipe: %s", strerror(errno));
		off += (size_t)n;
	}
}

/* Sends a command to the browser (session NULL) or the page. */
static json_t *call(struct cdp *c, const char *session, const char *method, const char *params)
{
	int id = ++c->next_id;
	long long until = now_ms() + TIMEOUT_MS;
	const char *fmt = "{\"id\":%d,%s%s%s\"method\":\"%s\",\"params\":%s}";
	const char *sk = session ? "\"sessionId\":\"" : "", *sv = session ? session : "", *se = session ? "\"," : "";
	int len = snprintf(NULL, 0, fmt, id, sk, sv, se, method, params ? params : "{}");
	char *msg = malloc((size_t)len + 1);
	json_t *m;

	snprintf(msg, (size_t)len + 1, fmt, id, sk, sv, se, method, params ? params : "{}");
	send_message(c, msg);
	free(msg);
	for (;;) {
		m = next_message(c, until);
		if (json_integer_value(json_object_get(m, "id")) == id)
			break;
		event(c, m);
		json_decref(m);
	}
	if (json_object_get(m, "error")) {
		char *text = json_dumps(json_object_get(m, "error"), 0);
		fail_msg("chromium: %s: %s", method, text);
	}
	json_t *result = json_incref(json_object_get(m, "result"));
	json_decref(m);
	return result;
}

json_t *cdp_call(struct cdp *c, const char *method, const char *params)
{
	return call(c, c->session, method, params);
}

void cdp_start(struct cdp *c, const char *dir)
{
	int cmd[2], reply[2];
	json_t *r;
	char params[256];

	memset(c, 0, sizeof *c);
	if (pipe(cmd) != 0 || pipe(reply) != 0)
		fail_msg("pipe: %s", strerror(errno));
	if ((c->pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);
		char profile[4200], log[4200];
		snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
		snprintf(log, sizeof log, "%s/chromium.log", dir);
		/* Its fds 3 and 4 are the pipe's ends; nothing else open. */
		dup2(cmd[0], 3);
		dup2(reply[1], 4);
		for (int fd = 5; fd < 1024; fd++)
			close(fd);
		dup2(null, 0);
		if ((null = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("chromium", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		       "--no-first-run", "--disable-background-networking", "--disable-component-update",
		       "--disable-sync", "--disable-extensions", "--remote-debugging-pipe", profile, "about:blank",
		       (char *)NULL);
		_exit(127);
	}
	close(cmd[0]);
	close(reply[1]);
	c->in = cmd[1];
	c->out = reply[0];
	r = call(c, NULL, "Target.createTarget", "{\"url\":\"about:blank\"}");
	snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}",
		 json_string_value(json_object_get(r, "targetId")));
	json_decref(r);
	r = call(c, NULL, "Target.attachToTarget", params);
	snprintf(c->session, sizeof c->session, "%s", json_string_value(json_object_get(r, "sessionId")));
	json_decref(r);
	json_decref(cdp_call(c, "Page.enable", NULL));
	json_decref(cdp_call(c, "Runtime.enable", NULL));
	json_decref(cdp_call(c, "Log.enable", NULL));
}

void cdp_stop(struct cdp *c)
{
	if (c->pid <= 0)
		return;
	/* Browser.close ends it cleanly; its pipe closing does too. */
	send_message(c, "{\"id\":999999,\"method\":\"Browser.close\",\"params\":{}}");
	close(c->in);
	close(c->out);
	for (long long until = now_ms() + 10000; waitpid(c->pid, NULL, WNOHANG) == 0;) {
		if (now_ms() > until) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, NULL, 0);
			break;
		}
		usleep(50000);
	}
	c->pid = 0;
	free(c->buf);
	c->buf = NULL;
}

void cdp_navigate(struct cdp *c, const char *url)
{
	long long until = now_ms() + TIMEOUT_MS;
	char params[4200];

	c->loaded = 0;
	snprintf(params, sizeof params, "{\"url\":\"%s\"}", url);
	json_decref(cdp_call(c, "Page.navigate", params));
	while (!c->loaded) {
		json_t *m = next_message(c, until);
		event(c, m);
		json_decref(m);
	}
}

json_t *cdp_eval(struct cdp *c, const char *expression)
{
	json_t *params = json_pack("{s:s, s:b, s:b}", "expression", expression, "returnByValue", 1, "awaitPromise", 1);
	char *text = json_dumps(params, JSON_COMPACT);
	json_t *r = cdp_call(c, "Runtime.evaluate", text), *v;

	free(text);
	json_decref(params);
	if (json_object_get(r, "exceptionDetails")) {
		char *why = json_dumps(json_object_get(r, "exceptionDetails"), 0);
		fail_msg("chromium: %s threw: %s", expression, why);
	}
	v = json_incref(json_object_get(json_object_get(r, "result"), "value"));
	json_decref(r);
	return v ? v : json_null();
}

int cdp_eval_true(struct cdp *c, const char *expression)
{
	json_t *v = cdp_eval(c, expression);
	int yes = json_is_true(v);

	json_decref(v);
	return yes;
}

const char *cdp_eval_text(struct cdp *c, const char *expression, char *buf, size_t size)
{
	json_t *v = cdp_eval(c, expression);

	snprintf(buf, size, "%s", json_is_string(v) ? json_string_value(v) : "");
	json_decref(v);
	return buf;
}
