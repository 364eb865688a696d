/* The HTTP client (see client.h). One easy handle per client: curl keeps its
 * connection open between calls, so a CLI command or a test that makes many
 * calls pays for one TCP handshake. */
#include "common/client.h"

#include "common/curl_lazy.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/mem.h"
#include "common/version.h"

#define DEFAULT_SERVER "http://127.0.0.1:7070"
#define CONNECT_TIMEOUT_S 5L
/* Longer than the longest lease long-poll (wait_s up to 600). */
#define TOTAL_TIMEOUT_S 700L

struct buffer {
	char *data;
	size_t len, cap;
};

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
	struct buffer *b = arg;
	size_t add = size * n;

	if (b->len + add + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;
		while (cap < b->len + add + 1)
			cap *= 2;
		if (!(p = mem_realloc(b->data, cap)))
			return 0; /* curl reports a write error */
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, add);
	b->len += add;
	b->data[b->len] = '\0';
	return add;
}

/* One serve's URL, the first len bytes of s, into out (of size 512):
 * http:// put in front of HOST:PORT, trailing slashes dropped. */
static int parse_server(struct client *c, const char *s, size_t len, char *out)
{
	char one[sizeof c->server];
	size_t n;

	if (len == 0) {
		snprintf(c->err, sizeof c->err, "server list: an empty address (two commas, or one at an end)");
		return -1;
	}
	if (len >= sizeof one) {
		snprintf(c->err, sizeof c->err, "server URL too long (%zu characters)", len);
		return -1;
	}
	memcpy(one, s, len);
	one[len] = '\0';
	if ((size_t)snprintf(out, sizeof one, "%s%s", strstr(one, "://") ? "" : "http://", one) >= sizeof one) {
		snprintf(c->err, sizeof c->err, "server URL too long (%zu characters)", len);
		return -1;
	}
	if (strncmp(out, "http://", 7) != 0 && strncmp(out, "https://", 8) != 0) {
		snprintf(c->err, sizeof c->err, "server '%.200s': expected http://HOST:PORT, https://HOST:PORT or HOST:PORT",
			 one);
		return -1;
	}
	/* Paths start with '/', so a trailing one would double it. */
	n = strlen(out);
	while (n > 0 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

/* "URL" or "URL,URL,...": the serves in the order they are tried. */
static int set_servers(struct client *c, const char *list)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		if (c->nservers == CLIENT_SERVERS_MAX) {
			snprintf(c->err, sizeof c->err, "server list: more than %d serves", CLIENT_SERVERS_MAX);
			return -1;
		}
		if (parse_server(c, p, len, c->servers[c->nservers]) != 0)
			return -1;
		c->nservers++;
		if (!p[len])
			break;
		p += len + 1;
	}
	memcpy(c->server, c->servers[0], sizeof c->server);
	return 0;
}

int client_owns_url(const struct client *c, const char *url)
{
	for (int i = 0; i < c->nservers; i++) {
		size_t n = strlen(c->servers[i]);
		if (strncmp(url, c->servers[i], n) == 0 && (url[n] == '/' || url[n] == '\0'))
			return 1;
	}
	return 0;
}

static int set_token(struct client *c, const char *t)
{
	if (strlen(t) >= sizeof c->token) {
		snprintf(c->err, sizeof c->err, "token too long (%zu characters)", strlen(t));
		return -1;
	}
	/* A newline would end the header and start another one. */
	for (const char *p = t; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			snprintf(c->err, sizeof c->err, "token: contains a control character");
			return -1;
		}
	}
	snprintf(c->token, sizeof c->token, "%s", t);
	return 0;
}

/* A CA file that cannot be read is refused here, by its name, rather
 * than by libcurl at the first call. */
static int set_cacert(struct client *c, const char *path)
{
	if (strlen(path) >= sizeof c->cacert) {
		snprintf(c->err, sizeof c->err, "CA file name too long (%zu characters)", strlen(path));
		return -1;
	}
	if (*path && access(path, R_OK) != 0) {
		snprintf(c->err, sizeof c->err, "CA file %.300s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	snprintf(c->cacert, sizeof c->cacert, "%s", path);
	return 0;
}

int client_init(struct client *c, const char *server, const char *token, const char *cacert)
{
	memset(c, 0, sizeof *c);
	if (!server || !*server)
		server = getenv("EBB_SERVER");
	if (!token)
		token = getenv("EBB_TOKEN");
	if (!cacert)
		cacert = getenv("EBB_CACERT");
	if (set_servers(c, server && *server ? server : DEFAULT_SERVER) != 0 ||
	    set_token(c, token ? token : "") != 0 || set_cacert(c, cacert ? cacert : "") != 0)
		return -1;
	/* Reference-counted by libcurl, undone in client_free. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(c->err, sizeof c->err, "%s", curl_lib_error()[0] ? curl_lib_error() : "libcurl: global initialisation failed");
		return -1;
	}
	if (!(c->curl = curl_easy_init())) {
		curl_global_cleanup();
		snprintf(c->err, sizeof c->err, "libcurl: cannot create a handle");
		return -1;
	}
	return 0;
}

int client_interruptible(struct client *c)
{
	if (!(c->multi = curl_multi_init())) {
		snprintf(c->err, sizeof c->err, "libcurl: cannot create a multi handle");
		return -1;
	}
	return 0;
}

void client_interrupt(struct client *c) { curl_multi_wakeup(c->multi); }

void client_free(struct client *c)
{
	if (!c->curl)
		return;
	if (c->multi)
		curl_multi_cleanup(c->multi);
	c->multi = NULL;
	curl_easy_cleanup(c->curl);
	curl_global_cleanup();
	c->curl = NULL;
}

/* Failures before the request went out say the server is unreachable,
 * or that it could not be trusted, with what to do about it; later ones
 * say which call broke. */
static void transport_error(struct client *c, CURLcode rc, const char *detail, const char *method,
			    const char *path)
{
	const char *why = detail[0] ? detail : curl_easy_strerror(rc);

	if (rc == CURLE_PEER_FAILED_VERIFICATION && c->cacert[0])
		snprintf(c->err, sizeof c->err, "%.150s: the server's certificate is not trusted (%.140s);"
			 " it must be signed by a CA in %.100s and name the server's host", c->server, why, c->cacert);
	else if (rc == CURLE_PEER_FAILED_VERIFICATION)
		snprintf(c->err, sizeof c->err, "%.200s: the server's certificate is not trusted (%.200s);"
			 " use --cacert FILE or EBB_CACERT", c->server, why);
	else if (rc == CURLE_SSL_CACERT_BADFILE)
		snprintf(c->err, sizeof c->err, "CA file %.200s: cannot be used (%.200s); expected PEM certificates",
			 c->cacert[0] ? c->cacert : "of the system", why);
	else if (rc == CURLE_SSL_CONNECT_ERROR)
		snprintf(c->err, sizeof c->err, "cannot reach %.200s: the TLS handshake failed (%.200s);"
			 " does the server speak HTTPS?", c->server, why);
	else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
		 rc == CURLE_COULDNT_RESOLVE_PROXY)
		snprintf(c->err, sizeof c->err, "cannot reach %.200s: %.280s", c->server, why);
	else
		snprintf(c->err, sizeof c->err, "%.10s %.150s%.100s: %.230s", method, c->server, path, why);
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return *(volatile sig_atomic_t *)arg != 0;
}

/* The transfer; in c's multi handle when another thread may interrupt
 * it, whose wake-up ends the poll at once to look at the abort flag. */
static CURLcode perform(struct client *c, CURL *h)
{
	CURLcode rc = CURLE_ABORTED_BY_CALLBACK;
	CURLMsg *m;
	int running = 1, left;
	int64_t give_up = -1; /* monotonic ms; -1: not asked to */

	if (!c->multi)
		return curl_easy_perform(h);
	curl_multi_add_handle(c->multi, h);
	for (;;) {
		int64_t now = clock_monotonic_ms();
		if (give_up < 0 && c->abort_flag && *c->abort_flag)
			give_up = now + c->abort_grace_ms;
		if ((give_up >= 0 && now >= give_up) || curl_multi_perform(c->multi, &running) != CURLM_OK ||
		    !running)
			break;
		curl_multi_poll(c->multi, NULL, 0, give_up >= 0 ? (int)(give_up - now) : 1000, NULL);
	}
	while ((m = curl_multi_info_read(c->multi, &left)))
		if (m->msg == CURLMSG_DONE)
			rc = m->data.result;
	curl_multi_remove_handle(c->multi, h);
	return rc;
}

/* One try at c->server: the HTTP status, or -1 with c->err; *refused
 * when nothing was sent because the serve refused the connection. */
static int call_once(struct client *c, const char *method, const char *path, const char *text, json_t **reply,
		     int *refused)
{
	CURL *h = c->curl;
	struct curl_slist *headers = NULL;
	struct buffer in = {0};
	char url[2048], auth[600], detail[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	*reply = NULL;
	*refused = 0;
	if ((size_t)snprintf(url, sizeof url, "%s%s", c->server, path) >= sizeof url) {
		snprintf(c->err, sizeof c->err, "URL too long: %.200s%.100s...", c->server, path);
		return -1;
	}
	/* Reset keeps the live connection; only the options start afresh. */
	curl_easy_reset(h);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = curl_slist_append(headers, "Accept: application/json");
	/* No "Expect: 100-continue" round trip for larger bodies. */
	headers = curl_slist_append(headers, "Expect:");
	if (c->token[0]) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
		headers = curl_slist_append(headers, auth);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "ebb/" EBB_VERSION);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, TOTAL_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &in);
	if (c->cacert[0])
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (text || strcmp(method, "GET") != 0) {
		/* A POST without a body still sends "Content-Length: 0". */
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, text ? text : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)(text ? strlen(text) : 0));
	}
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (c->abort_flag && !c->multi) {
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->abort_flag);
	}
	rc = perform(c, h);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK) {
		*refused = rc == CURLE_COULDNT_CONNECT;
		transport_error(c, rc, detail, method, path);
		free(in.data);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (in.len > 0)
		*reply = json_loadb(in.data, in.len, JSON_DECODE_ANY, NULL);
	free(in.data);
	return (int)status;
}

void client_use(struct client *c, int i)
{
	c->current = i % c->nservers;
	memcpy(c->server, c->servers[c->current], sizeof c->server);
}

int client_call(struct client *c, const char *method, const char *path, json_t *body,
		json_t **reply)
{
	char *text = NULL;
	int status = -1, first = c->current, refused = 0;

	*reply = NULL;
	if (body && !(text = json_dumps(body, JSON_COMPACT))) {
		snprintf(c->err, sizeof c->err, "cannot encode the request body as JSON");
		return -1;
	}
	for (int tried = 0; tried < c->nservers; tried++) {
		client_use(c, first + tried);
		status = call_once(c, method, path, text, reply, &refused);
		if (!refused)
			break;
	}
	/* None answered: start at the same one next time. */
	if (refused)
		client_use(c, first);
	if (refused && c->nservers > 1) {
		char last[sizeof c->err];
		memcpy(last, c->err, sizeof last);
		snprintf(c->err, sizeof c->err, "none of the %d serves answered; %.400s", c->nservers, last);
	}
	free(text);
	return status;
}

void client_error_text(int status, json_t *reply, char *buf, size_t size)
{
	json_t *e = json_object_get(reply, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *message = json_string_value(json_object_get(e, "message"));
	const char *field = json_string_value(json_object_get(e, "field"));

	if (!message) {
		snprintf(buf, size, "HTTP %d (the reply gives no reason)", status);
		return;
	}
	snprintf(buf, size, "%d %s: %s%s%s%s", status, code ? code : "error", message,
		 field ? " (field " : "", field ? field : "", field ? ")" : "");
}
