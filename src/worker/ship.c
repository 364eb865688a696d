/* See ship.h. */
#include "worker/ship.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"

/* Bytes of lines waiting at most; past it the oldest are dropped, but
 * for the attempt's first HEAD_BYTES, its head, which serve keeps too. */
#define QUEUE_MAX_BYTES (2 << 20)
#define HEAD_BYTES (256 << 10)
/* At the job's end, what still waits beyond this half-way through the
 * flush is dropped (the oldest) so that the last lines, most often why
 * it ended, reach serve in time. */
#define FINISH_MAX_BYTES (256 << 10)
/* One POST: at most this many bytes of text and lines, under serve's
 * [server] max_body (1 MiB by default) once escaped as JSON. */
#define BATCH_MAX_BYTES (128 << 10)
#define BATCH_MAX_LINES 5000
#define BACKOFF_MAX_MS 4000

struct line {
	struct line *next;
	int64_t at_ms;
	enum ship_stream stream;
	size_t len;
	char text[];
};

struct ship {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a line queued, the queue emptied, a stop */
	struct client client;
	char path[96];
	int64_t attempt;
	/* Under lock: */
	struct line *head, *tail; /* waiting, oldest first */
	struct line *last_head;   /* the newest waiting line of the head; NULL: none */
	size_t queued_bytes;
	int64_t head_bytes; /* of the head so far */
	int64_t dropped; /* bytes of text dropped since the attempt began */
	int busy;        /* a batch is out, or waits to go again */
	int stop;
	volatile sig_atomic_t abort; /* gives up the call in flight */
	/* The thread's alone: */
	int64_t next_seq; /* the seq the next line taken gets */
};

/* Drops the oldest waiting line past the head: 0 when there is none. */
static int drop_oldest(struct ship *s)
{
	struct line **at = s->last_head ? &s->last_head->next : &s->head, *l = *at;

	if (!l)
		return 0;
	*at = l->next;
	if (s->tail == l)
		s->tail = s->last_head;
	s->queued_bytes -= l->len;
	s->dropped += (int64_t)l->len;
	free(l);
	return 1;
}

void ship_line(struct ship *s, enum ship_stream stream, int64_t at_ms, const char *text, size_t len)
{
	struct line *l = xmalloc(sizeof *l + len + 1);

	l->next = NULL;
	l->at_ms = at_ms;
	l->stream = stream;
	l->len = len;
	memcpy(l->text, text, len);
	l->text[len] = '\0';
	pthread_mutex_lock(&s->lock);
	if (s->head_bytes < HEAD_BYTES) { /* of the head: never dropped */
		s->head_bytes += (int64_t)len;
		s->last_head = l;
	}
	if (s->tail)
		s->tail->next = l;
	else
		s->head = l;
	s->tail = l;
	s->queued_bytes += len;
	/* Never the line just queued: the newest are the tail to keep. */
	while (s->queued_bytes > QUEUE_MAX_BYTES && (s->last_head ? s->last_head->next : s->head) != l &&
	       drop_oldest(s))
		;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Takes the next batch off the queue (under lock): its lines, numbered
 * from *seq on. */
static json_t *take_batch(struct ship *s, int64_t *seq)
{
	json_t *lines = json_array();
	size_t bytes = 0;

	*seq = s->next_seq;
	while (s->head && json_array_size(lines) < BATCH_MAX_LINES &&
	       (bytes == 0 || bytes + s->head->len <= BATCH_MAX_BYTES)) {
		struct line *l = s->head;
		json_array_append_new(lines, json_pack("{s:f, s:s, s:s%}", "at", (double)l->at_ms / 1000.0, "stream",
						       l->stream == SHIP_STDERR ? "stderr" : "stdout", "text", l->text,
						       l->len));
		bytes += l->len;
		s->head = l->next;
		if (!s->head)
			s->tail = NULL;
		if (s->last_head == l)
			s->last_head = NULL;
		s->queued_bytes -= l->len;
		free(l);
		s->next_seq++;
	}
	return lines;
}

enum sent { SENT, REFUSED, TOO_LARGE };

/* Sends the batch until serve takes it (SENT), refuses it for good (the
 * lease is gone, a stop: REFUSED, the lines are dropped), or says it is
 * larger than its [server] max_body (TOO_LARGE). */
static enum sent send_batch(struct ship *s, json_t *lines, int64_t seq)
{
	int64_t backoff = 250;

	for (;;) {
		json_t *reply = NULL, *body;
		int status, stop;

		pthread_mutex_lock(&s->lock);
		body = json_pack("{s:I, s:I, s:I, s:O, s:I}", "token", (json_int_t)s->attempt, "attempt",
				 (json_int_t)s->attempt, "seq", (json_int_t)seq, "lines", lines, "dropped",
				 (json_int_t)s->dropped);
		pthread_mutex_unlock(&s->lock);
		status = client_call(&s->client, "POST", s->path, body, &reply);
		json_decref(body);
		if (status >= 400 && status < 500 && status != 429 && status != 413) {
			char why[300];
			client_error_text(status, reply, why, sizeof why);
			log_warn("log refused, dropped", "path=%s status=%d error=\"%s\"", s->path, status, why);
		}
		json_decref(reply);
		if (status == 200)
			return SENT;
		if (status == 413)
			return TOO_LARGE;
		if (status >= 400 && status < 500 && status != 429)
			return REFUSED;
		pthread_mutex_lock(&s->lock);
		stop = s->stop;
		if (!stop) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += (long)(backoff % 1000) * 1000000L;
			until.tv_sec += backoff / 1000 + until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&s->cond, &s->lock, &until);
			stop = s->stop;
		}
		pthread_mutex_unlock(&s->lock);
		if (stop)
			return REFUSED;
		backoff = backoff < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
	}
}

/* Sends the batch, in halves (the same numbers) while serve finds it too
 * large: 1 when all of it was taken. */
static int send_lines(struct ship *s, json_t *lines, int64_t seq)
{
	size_t n = json_array_size(lines), half = n / 2;
	enum sent rc = send_batch(s, lines, seq);
	json_t *first, *second;
	int ok;

	if (rc != TOO_LARGE || n < 2)
		return rc == SENT;
	first = json_array();
	second = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(i < half ? first : second, json_array_get(lines, i));
	ok = send_lines(s, first, seq) && send_lines(s, second, seq + (int64_t)half);
	json_decref(first);
	json_decref(second);
	return ok;
}

static void *run(void *arg)
{
	struct ship *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		json_t *lines;
		int64_t seq;

		while (!s->head && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head)
			break;
		lines = take_batch(s, &seq);
		s->busy = 1;
		pthread_mutex_unlock(&s->lock);
		if (!send_lines(s, lines, seq)) {
			size_t i;
			json_t *l;
			pthread_mutex_lock(&s->lock);
			json_array_foreach(lines, i, l)
				s->dropped += (int64_t)json_string_length(json_object_get(l, "text"));
			pthread_mutex_unlock(&s->lock);
		}
		json_decref(lines);
		pthread_mutex_lock(&s->lock);
		s->busy = 0;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct ship *ship_start(const struct client *c, int64_t job, int64_t attempt)
{
	struct ship *s = xcalloc(1, sizeof *s);
	sigset_t all, old;
	char servers[CLIENT_SERVERS_MAX * 513] = "";

	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	snprintf(s->path, sizeof s->path, "/v1/jobs/%lld/logs", (long long)job);
	s->attempt = attempt;
	for (int i = 0; i < c->nservers; i++)
		snprintf(servers + strlen(servers), sizeof servers - strlen(servers), "%s%s", i ? "," : "", c->servers[i]);
	if (client_init(&s->client, servers, c->token, c->cacert[0] ? c->cacert : NULL) != 0)
		log_warn("log shipping without a client", "error=\"%s\"", s->client.err);
	else
		client_use(&s->client, c->current);
	s->client.abort_flag = &s->abort;
	/* The worker's signals stay the worker's thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&s->thread, NULL, run, s) != 0) {
		fprintf(stderr, "ebb worker: cannot start the log shipper\n");
		abort();
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return s;
}

/* Waits (under lock) until everything is acknowledged or until_ms. */
static void wait_shipped(struct ship *s, int64_t until_ms)
{
	while ((s->head || s->busy) && clock_monotonic_ms() < until_ms) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 100 * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&s->cond, &s->lock, &t);
	}
}

void ship_finish(struct ship *s, int64_t wait_ms)
{
	int64_t start = clock_monotonic_ms();

	pthread_mutex_lock(&s->lock);
	wait_shipped(s, start + wait_ms / 2);
	/* Half the time gone and much still waits: the last lines first. */
	while (s->queued_bytes > FINISH_MAX_BYTES && drop_oldest(s))
		;
	wait_shipped(s, start + wait_ms);
	s->stop = 1;
	if (s->head || s->busy) {
		s->abort = 1;
		log_warn("log not all shipped", "path=%s", s->path);
	}
	s->last_head = NULL; /* the head too: it will not be sent */
	while (drop_oldest(s))
		;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	client_free(&s->client);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
