/* See output.h. */
#include "worker/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"

/* The lines kept for the error of a failed run, each cut to LAST_MAX. */
#define LAST_LINES 3
#define LAST_MAX 200
/* Reads of the pipes at the job's end at most (a child of it that goes
 * on writing does not hold the report back). */
#define DRAIN_ROUNDS 64

struct stream {
	int fd;    /* the read end; -1 once at its end */
	int child; /* the write end, until the fork */
	enum ship_stream which;
	char buf[OUTPUT_LINE_MAX]; /* the line not ended yet */
	size_t len;
	char last[LAST_LINES][LAST_MAX + 1];
	int nlast; /* lines seen, for the ring */
};

struct output {
	struct ship *ship;
	struct stream s[2];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The length of the valid UTF-8 sequence at p (of n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;

	if (len == 0 || len > n || (len == 2 && p[0] < 0xC2) || (len == 4 && p[0] > 0xF4))
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	}
	if ((len == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (len == 3 && p[0] == 0xED && p[1] > 0x9F) ||
	    (len == 4 && p[0] == 0xF0 && p[1] < 0x90) || (len == 4 && p[0] == 0xF4 && p[1] > 0x8F))
		return 0;
	return p[0] == 0 ? 0 : len;
}

/* clean[0..n) as a string, for the log (the room for its NUL is there). */
static const char *clean_z(char *clean, size_t n)
{
	clean[n] = '\0';
	return clean;
}

/* The line as JSON may carry it: a NUL or a byte that is not UTF-8
 * becomes U+FFFD. */
static void emit(struct output *o, struct stream *st, const char *text, size_t len)
{
	char clean[OUTPUT_LINE_MAX * 3 + 1], quoted[1024];
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		size_t k = utf8_len((const unsigned char *)text + i, len - i);
		if (k) {
			memcpy(clean + n, text + i, k);
			n += k;
			i += k;
		} else {
			memcpy(clean + n, "\xEF\xBF\xBD", 3);
			n += 3;
			i++;
		}
	}
	if (n && clean[n - 1] == '\r')
		n--;
	if (o->ship)
		ship_line(o->ship, st->which, now_ms(), clean, n);
	else /* a resident handler between jobs: the worker's own log */
		log_info("handler output", "stream=%s line=%s", st->which == SHIP_STDERR ? "stderr" : "stdout",
			 log_quote(quoted, sizeof quoted, clean_z(clean, n)));
	/* Cut where a character begins: the error must be UTF-8 too. */
	while (n > LAST_MAX && (clean[LAST_MAX] & 0xC0) == 0x80)
		n--;
	snprintf(st->last[st->nlast % LAST_LINES], LAST_MAX + 1, "%.*s", (int)(n < LAST_MAX ? n : LAST_MAX), clean);
	st->nlast++;
}

/* The lines in what was read; the rest waits for its end. */
static void feed(struct output *o, struct stream *st, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (st->len + take >= sizeof st->buf) { /* too long: a piece of it */
			take = sizeof st->buf - st->len;
			memcpy(st->buf + st->len, p, take);
			emit(o, st, st->buf, sizeof st->buf);
			st->len = 0;
			p += take;
			n -= take;
			continue;
		}
		memcpy(st->buf + st->len, p, take);
		st->len += take;
		p += take;
		n -= take;
		if (nl) {
			emit(o, st, st->buf, st->len);
			st->len = 0;
			p++;
			n--;
		}
	}
}

/* Reads up to a bound (the other pipe and the wait get their turn): 0
 * at the end of the pipe. */
static int read_some(struct output *o, struct stream *st)
{
	char buf[65536];

	for (int i = 0; i < 16; i++) {
		ssize_t n = read(st->fd, buf, sizeof buf);
		if (n > 0) {
			feed(o, st, buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 1;
		close(st->fd);
		st->fd = -1;
		return 0;
	}
	return 1;
}

struct output *output_open(struct ship *ship, int fds[2])
{
	struct output *o = xcalloc(1, sizeof *o);

	o->ship = ship;
	for (int i = 0; i < 2; i++)
		o->s[i].fd = o->s[i].child = -1;
	for (int i = 0; i < 2; i++) {
		int p[2];
		struct stream *st = &o->s[i];

		st->which = i ? SHIP_STDERR : SHIP_STDOUT;
		if (pipe(p) != 0) {
			output_close(o);
			return NULL;
		}
		fcntl(p[0], F_SETFD, FD_CLOEXEC);
		fcntl(p[1], F_SETFD, FD_CLOEXEC);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		st->fd = p[0];
		st->child = fds[i] = p[1];
	}
	return o;
}

void output_set_ship(struct output *o, struct ship *ship)
{
	o->ship = ship;
	for (int i = 0; i < 2; i++)
		o->s[i].nlast = 0;
}

void output_forked(struct output *o)
{
	for (int i = 0; i < 2; i++) {
		close(o->s[i].child);
		o->s[i].child = -1;
	}
}

int output_pollfds(const struct output *o, struct pollfd *p)
{
	int n = 0;

	for (int i = 0; i < 2; i++) {
		if (o->s[i].fd >= 0)
			p[n++] = (struct pollfd){.fd = o->s[i].fd, .events = POLLIN};
	}
	return n;
}

void output_read(struct output *o, const struct pollfd *p, int n)
{
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < 2; i++) {
			if (p[k].revents && o->s[i].fd == p[k].fd)
				read_some(o, &o->s[i]);
		}
	}
}

void output_drain(struct output *o)
{
	/* A child of the job may hold the pipes open: what is there now,
	 * not their end. */
	for (int i = 0; i < 2; i++) {
		struct stream *st = &o->s[i];
		for (int k = 0; k < DRAIN_ROUNDS && st->fd >= 0; k++) {
			struct pollfd p = {.fd = st->fd, .events = POLLIN};
			if (poll(&p, 1, 0) <= 0 || !read_some(o, st))
				break;
		}
		if (st->len) {
			emit(o, st, st->buf, st->len);
			st->len = 0;
		}
	}
}

void output_last_lines(const struct output *o, char *buf, size_t size)
{
	const struct stream *st = o->s[SHIP_STDERR].nlast ? &o->s[SHIP_STDERR] : &o->s[SHIP_STDOUT];
	int n = st->nlast < LAST_LINES ? st->nlast : LAST_LINES;
	char all[LAST_LINES * (LAST_MAX + 3) + 1] = "", *from;
	size_t len;

	for (int i = st->nlast - n; i < st->nlast; i++)
		snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i > st->nlast - n ? " | " : "",
			 st->last[i % LAST_LINES]);
	len = strlen(all);
	from = len >= size ? all + len - (size - 1) : all;
	while ((*from & 0xC0) == 0x80)
		from++;
	snprintf(buf, size, "%s", from);
}

void output_close(struct output *o)
{
	if (!o)
		return;
	for (int i = 0; i < 2; i++) {
		if (o->s[i].fd >= 0)
			close(o->s[i].fd);
		if (o->s[i].child >= 0)
			close(o->s[i].child);
	}
	free(o);
}
