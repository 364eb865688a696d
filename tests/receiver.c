/* See receiver.h. One thread polls the listening socket and every open
 * connection; a connection holds what has come of its request until the
 * head and the Content-Length of body are in. */
#include "receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* cmocka needs these before its header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define MAX_CONNS 32
#define MAX_REQUESTS 256
#define MAX_SCRIPTED 32

struct conn {
	int fd;
	char *buf;
	size_t len;
};

struct request {
	char *head; /* request line and headers */
	char *body;
};

struct scripted {
	char *route, *body;
	int status, used;
};

struct receiver {
	int listen_fd, stop, answer;
	struct scripted script[MAX_SCRIPTED];
	int nscript;
	char url[64];
	pthread_t thread;
	pthread_mutex_t lock;
	struct conn conns[MAX_CONNS];
	struct request reqs[MAX_REQUESTS];
	int nreqs;
};

/* The value of header name (any case) in the head at buf that ends at
 * end, or NULL. */
static char *header(char *buf, const char *end, const char *name)
{
	size_t n = strlen(name);

	for (char *line = strchr(buf, '\n'); line && line < end; line = strchr(line + 1, '\n')) {
		if (strncasecmp(line + 1, name, n) == 0 && line[1 + n] == ':')
			return line + 2 + n + strspn(line + 2 + n, " ");
	}
	return NULL;
}

/* The reply scripted for the request at buf: the route's next one not
 * yet used, else its last; NULL when the route has none. */
static struct scripted *scripted_for(struct receiver *r, const char *buf)
{
	struct scripted *last = NULL;

	for (int i = 0; i < r->nscript; i++) {
		struct scripted *s = &r->script[i];
		if (strncmp(buf, s->route, strlen(s->route)) != 0)
			continue;
		if (!s->used) {
			s->used = 1;
			return s;
		}
		last = s;
	}
	return last;
}

/* A whole request at the start of c->buf: taken out, kept and answered. */
static int take(struct receiver *r, struct conn *c)
{
	char *end = c->buf ? strstr(c->buf, "\r\n\r\n") : NULL, *cl, reply[8192];
	size_t head, body = 0;
	struct scripted *s;
	int answer, n = 0;

	if (!end)
		return 0;
	head = (size_t)(end + 4 - c->buf);
	if ((cl = header(c->buf, end, "content-length")))
		body = (size_t)strtoul(cl, NULL, 10);
	if (c->len < head + body)
		return 0;
	pthread_mutex_lock(&r->lock);
	if (r->nreqs < MAX_REQUESTS) {
		struct request *q = &r->reqs[r->nreqs++];
		q->head = strndup(c->buf, head);
		q->body = strndup(c->buf + head, body);
	}
	answer = r->answer;
	if ((s = scripted_for(r, c->buf)) && (answer = s->status) > 0)
		n = snprintf(reply, sizeof reply,
			     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", answer,
			     strlen(s->body), s->body);
	else if (answer > 0)
		n = snprintf(reply, sizeof reply, "HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n", answer);
	pthread_mutex_unlock(&r->lock);
	memmove(c->buf, c->buf + head + body, c->len - head - body + 1);
	c->len -= head + body;
	if (n > 0 && write(c->fd, reply, (size_t)n) != n)
		return -1;
	return 1;
}

static void drop(struct conn *c)
{
	close(c->fd);
	free(c->buf);
	*c = (struct conn){.fd = -1};
}

static void *serve(void *arg)
{
	struct receiver *r = arg;

	while (!r->stop) {
		struct pollfd p[MAX_CONNS + 1] = {{.fd = r->listen_fd, .events = POLLIN}};
		for (int i = 0; i < MAX_CONNS; i++)
			p[i + 1] = (struct pollfd){.fd = r->conns[i].fd, .events = POLLIN};
		if (poll(p, MAX_CONNS + 1, 50) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int fd = accept(r->listen_fd, NULL, NULL);
			for (int i = 0; fd >= 0 && i < MAX_CONNS; i++) {
				if (r->conns[i].fd < 0) {
					r->conns[i].fd = fd;
					fd = -1;
				}
			}
			if (fd >= 0)
				close(fd);
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &r->conns[i];
			char chunk[4096], *grown;
			ssize_t n;
			if (c->fd < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if ((n = read(c->fd, chunk, sizeof chunk)) <= 0 || !(grown = realloc(c->buf, c->len + (size_t)n + 1))) {
				drop(c);
				continue;
			}
			c->buf = grown;
			memcpy(c->buf + c->len, chunk, (size_t)n);
			c->len += (size_t)n;
			c->buf[c->len] = '\0';
			while (c->fd >= 0 && take(r, c) > 0)
				;
		}
	}
	return NULL;
}

struct receiver *receiver_start(void)
{
	struct receiver *r = calloc(1, sizeof *r);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;

	r->answer = 200;
	for (int i = 0; i < MAX_CONNS; i++)
		r->conns[i].fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	if ((r->listen_fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(r->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    listen(r->listen_fd, 16) != 0 || getsockname(r->listen_fd, (struct sockaddr *)&a, &len) != 0)
		fail_msg("receiver: cannot listen on loopback");
	snprintf(r->url, sizeof r->url, "http://127.0.0.1:%d/hook", ntohs(a.sin_port));
	if (pthread_create(&r->thread, NULL, serve, r) != 0)
		fail_msg("receiver: no thread");
	return r;
}

void receiver_stop(struct receiver *r)
{
	r->stop = 1;
	pthread_join(r->thread, NULL);
	close(r->listen_fd);
	for (int i = 0; i < MAX_CONNS; i++) {
		if (r->conns[i].fd >= 0)
			drop(&r->conns[i]);
	}
	for (int i = 0; i < r->nreqs; i++) {
		free(r->reqs[i].head);
		free(r->reqs[i].body);
	}
	for (int i = 0; i < r->nscript; i++) {
		free(r->script[i].route);
		free(r->script[i].body);
	}
	pthread_mutex_destroy(&r->lock);
	free(r);
}

const char *receiver_url(const struct receiver *r) { return r->url; }

void receiver_answer(struct receiver *r, int status)
{
	pthread_mutex_lock(&r->lock);
	r->answer = status;
	pthread_mutex_unlock(&r->lock);
}

void receiver_script(struct receiver *r, const char *route, int status, const char *body)
{
	/* The test's thread alone adds them. */
	if (r->nscript == MAX_SCRIPTED || strlen(body) > 8000)
		fail_msg("receiver: more than %d scripted replies, or one too long", MAX_SCRIPTED);
	pthread_mutex_lock(&r->lock);
	r->script[r->nscript++] = (struct scripted){.route = strdup(route), .body = strdup(body), .status = status};
	pthread_mutex_unlock(&r->lock);
}

int receiver_count(struct receiver *r)
{
	int n;

	pthread_mutex_lock(&r->lock);
	n = r->nreqs;
	pthread_mutex_unlock(&r->lock);
	return n;
}

json_t *receiver_body(struct receiver *r, int i)
{
	json_t *v = NULL;

	pthread_mutex_lock(&r->lock);
	if (i < r->nreqs)
		v = json_loads(r->reqs[i].body, 0, NULL);
	pthread_mutex_unlock(&r->lock);
	return v;
}

char *receiver_line(struct receiver *r, int i)
{
	char *v = NULL;

	pthread_mutex_lock(&r->lock);
	if (i < r->nreqs)
		v = strndup(r->reqs[i].head, strcspn(r->reqs[i].head, "\r\n"));
	pthread_mutex_unlock(&r->lock);
	return v;
}

char *receiver_header(struct receiver *r, int i, const char *name)
{
	char *v = NULL, *at;

	pthread_mutex_lock(&r->lock);
	if (i < r->nreqs && (at = header(r->reqs[i].head, r->reqs[i].head + strlen(r->reqs[i].head), name)))
		v = strndup(at, strcspn(at, "\r\n"));
	pthread_mutex_unlock(&r->lock);
	return v;
}
