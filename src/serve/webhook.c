/* See webhook.h. libcurl's "multi_socket" way: libcurl names the sockets
 * it wants watched and the timeout it wants (socket_cb, timer_cb); the
 * loop tells it what happened (curl_multi_socket_action), and finished
 * transfers are read with curl_multi_info_read. */
#include "serve/webhook.h"

#include <stdlib.h>
#include <string.h>

#include "common/curl_lazy.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"
#include "common/version.h"

#define BACKOFF_FIRST_MS 1000

struct post {
	char *body;
	struct post *next;
};

struct hook {
	struct webhooks *w;
	const struct webhook_conf *conf;
	struct post *head, *tail;
	int queued;
	CURL *easy; /* the head's post, under way; NULL: none */
	struct curl_slist *headers;
	struct event *retry;
	int64_t backoff_ms; /* before the next try of a post that failed; 0: none failed */
	char why[CURL_ERROR_SIZE];
};

/* A socket libcurl asked to watch, and its event. */
struct sock {
	curl_socket_t fd;
	struct event *ev;
	struct sock *next;
};

struct webhooks {
	struct event_base *base;
	const struct alerts_conf *conf;
	struct hook *hooks;
	int n;
	CURLM *multi; /* made at the first post */
	int no_curl;  /* libcurl could not be loaded: said once */
	struct event *timer;
	struct sock *socks;
};

static void start(struct hook *h);

static size_t discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data, (void)arg;
	return size * n;
}

static void drop_head(struct hook *h)
{
	struct post *p = h->head;

	h->head = p->next;
	if (!h->head)
		h->tail = NULL;
	h->queued--;
	free(p->body);
	free(p);
}

/* The head's post ended: on to the next, or the same again later. */
static void ended(struct hook *h, int ok)
{
	if (ok) {
		log_debug("webhook delivered", "webhook=%s", h->conf->name);
		drop_head(h);
		h->backoff_ms = 0;
		start(h);
		return;
	}
	h->backoff_ms = h->backoff_ms ? h->backoff_ms * 2 : BACKOFF_FIRST_MS;
	if (h->backoff_ms > h->w->conf->webhook_retry_max_ms)
		h->backoff_ms = h->w->conf->webhook_retry_max_ms;
	log_warn("webhook post failed, tried again later", "webhook=%s retry_ms=%lld queued=%d error=\"%s\"",
		 h->conf->name, (long long)h->backoff_ms, h->queued, h->why);
	timer_add_ms(h->retry, h->backoff_ms);
}

/* The transfers libcurl has finished. */
static void check_done(struct webhooks *w)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(w->multi, &left))) {
		struct hook *h = NULL;
		long status = 0;
		CURLcode rc = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&h);
		curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
		if (rc == CURLE_OK && (status < 200 || status > 299))
			snprintf(h->why, sizeof h->why, "HTTP status %ld", status);
		else if (rc != CURLE_OK && !h->why[0])
			snprintf(h->why, sizeof h->why, "%s", curl_easy_strerror(rc));
		curl_multi_remove_handle(w->multi, msg->easy_handle);
		curl_easy_cleanup(msg->easy_handle);
		curl_slist_free_all(h->headers);
		h->easy = NULL;
		h->headers = NULL;
		ended(h, rc == CURLE_OK && status >= 200 && status <= 299);
	}
}

static void on_socket(evutil_socket_t fd, short what, void *arg)
{
	struct webhooks *w = arg;
	int running, flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(w->multi, fd, flags, &running);
	check_done(w);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct webhooks *w = arg;
	int running;

	(void)fd, (void)what;
	curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(w);
}

static void forget(struct webhooks *w, struct sock *s)
{
	for (struct sock **p = &w->socks; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	event_free(s->ev);
	free(s);
}

/* libcurl: watch fd for what (or stop). */
static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct webhooks *w = userp;
	struct sock *s = socketp;
	short events = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s)
			forget(w, s);
		return 0;
	}
	if (!s) {
		if (!(s = mem_calloc(1, sizeof *s)))
			return -1;
		s->fd = fd;
		s->next = w->socks;
		w->socks = s;
		curl_multi_assign(w->multi, fd, s);
	} else {
		event_free(s->ev);
	}
	if (!(s->ev = event_new(w->base, fd, events, on_socket, w)) || event_add(s->ev, NULL) != 0)
		return -1;
	return 0;
}

/* libcurl: call back in timeout_ms (-1: never). */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct webhooks *w = userp;

	(void)multi;
	if (timeout_ms < 0)
		evtimer_del(w->timer);
	else
		timer_add_ms(w->timer, timeout_ms);
	return 0;
}

/* The multi handle, made at the first post. */
static int ready(struct webhooks *w)
{
	if (w->multi)
		return 0;
	if (w->no_curl)
		return -1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(w->multi = curl_multi_init())) {
		w->no_curl = 1;
		log_error("webhooks: no libcurl, alerts are not posted", "error=\"%s\"",
			  curl_lib_error()[0] ? curl_lib_error() : "libcurl: initialisation failed");
		return -1;
	}
	curl_multi_setopt(w->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(w->multi, CURLMOPT_SOCKETDATA, w);
	curl_multi_setopt(w->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(w->multi, CURLMOPT_TIMERDATA, w);
	return 0;
}

/* Posts the head of h's queue, unless one is under way or waits its turn. */
static void start(struct hook *h)
{
	char auth[1100];

	if (h->easy || !h->head || evtimer_pending(h->retry, NULL) || ready(h->w) != 0)
		return;
	if (!(h->easy = curl_easy_init())) {
		snprintf(h->why, sizeof h->why, "libcurl: cannot make a handle");
		ended(h, 0);
		return;
	}
	h->why[0] = '\0';
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (h->conf->token[0]) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", h->conf->token);
		h->headers = curl_slist_append(h->headers, auth);
	}
	curl_easy_setopt(h->easy, CURLOPT_URL, h->conf->url);
	curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, h->head->body);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->easy, CURLOPT_USERAGENT, "ebb/" EBB_VERSION);
	curl_easy_setopt(h->easy, CURLOPT_TIMEOUT_MS, (long)h->w->conf->webhook_timeout_ms);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, h->why);
	curl_easy_setopt(h->easy, CURLOPT_PRIVATE, (char *)h);
	if (curl_multi_add_handle(h->w->multi, h->easy) != CURLM_OK) {
		curl_easy_cleanup(h->easy);
		curl_slist_free_all(h->headers);
		h->easy = NULL;
		h->headers = NULL;
		snprintf(h->why, sizeof h->why, "libcurl: cannot start the post");
		ended(h, 0);
	}
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	start(arg);
}

struct webhooks *webhooks_new(struct event_base *base, const struct config *cfg)
{
	struct webhooks *w = mem_calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->base = base;
	w->conf = &cfg->alerts;
	w->n = (int)cfg->nwebhooks;
	if ((w->n && !(w->hooks = mem_calloc((size_t)w->n, sizeof *w->hooks))) ||
	    !(w->timer = evtimer_new(base, on_timer, w))) {
		webhooks_free(w);
		return NULL;
	}
	for (int i = 0; i < w->n; i++) {
		w->hooks[i] = (struct hook){.w = w, .conf = &cfg->webhooks[i]};
		if (!(w->hooks[i].retry = evtimer_new(base, on_retry, &w->hooks[i]))) {
			webhooks_free(w);
			return NULL;
		}
	}
	return w;
}

void webhooks_free(struct webhooks *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++) {
		struct hook *h = &w->hooks[i];
		if (h->easy) {
			curl_multi_remove_handle(w->multi, h->easy);
			curl_easy_cleanup(h->easy);
			curl_slist_free_all(h->headers);
		}
		while (h->head)
			drop_head(h);
		if (h->retry)
			event_free(h->retry);
	}
	if (w->multi)
		curl_multi_cleanup(w->multi);
	while (w->socks)
		forget(w, w->socks);
	if (w->timer)
		event_free(w->timer);
	free(w->hooks);
	free(w);
}

void webhooks_post(struct webhooks *w, const json_t *payload)
{
	for (int i = 0; i < w->n; i++) {
		struct hook *h = &w->hooks[i];
		json_t *copy = json_deep_copy(payload);
		struct post *p = mem_calloc(1, sizeof *p);

		if (!copy || !p || json_object_set_new(copy, "receiver", json_string(h->conf->name)) != 0 ||
		    !(p->body = json_dumps(copy, JSON_COMPACT))) {
			log_error("webhook: out of memory, a notification is lost", "webhook=%s", h->conf->name);
			json_decref(copy);
			free(p);
			continue;
		}
		json_decref(copy);
		if (h->queued == WEBHOOK_QUEUE_MAX) {
			/* The head may be under way: the oldest after it goes. */
			struct post *old = h->head->next;
			log_warn("webhook: too many notifications waiting, the oldest dropped", "webhook=%s queued=%d",
				 h->conf->name, h->queued);
			h->head->next = old->next;
			if (h->tail == old)
				h->tail = h->head;
			h->queued--;
			free(old->body);
			free(old);
		}
		if (h->tail)
			h->tail->next = p;
		else
			h->head = p;
		h->tail = p;
		h->queued++;
		start(h);
	}
}
