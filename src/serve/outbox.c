/* See outbox.h. */
#include "serve/outbox.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"

struct call {
	int terminate;
	struct instance inst;
	char *data; /* a terminate's, or NULL */
};

struct outbox {
	struct provider *provider;
	launch_cb launched;
	terminate_cb terminated;
	void *arg;
	struct event *send; /* made active after a commit that holds calls */
	struct call *calls;
	size_t n, cap;
	size_t committed; /* the first n of calls whose batch has committed */
};

static void on_send(evutil_socket_t fd, short what, void *arg)
{
	struct outbox *o = arg;
	size_t n = o->committed;

	(void)fd;
	(void)what;
	/* Taken off first: a call's answer may come at once and its batch
	 * commit again. */
	struct call *calls = mem_alloc(n * sizeof *calls);
	if (!calls) {
		event_active(o->send, 0, 0); /* once memory is back */
		return;
	}
	memcpy(calls, o->calls, n * sizeof *calls);
	memmove(o->calls, o->calls + n, (o->n - n) * sizeof *calls);
	o->n -= n;
	o->committed = 0;
	for (size_t i = 0; i < n; i++) {
		struct instance *inst = &calls[i].inst;
		if (calls[i].terminate)
			provider_terminate(o->provider, inst, calls[i].data, o->terminated, o->arg);
		else
			provider_launch(o->provider, inst, inst->token[0] ? inst->token : NULL, o->launched, o->arg);
		free(calls[i].data);
	}
	free(calls);
}

static void on_commit(void *arg, int changed)
{
	struct outbox *o = arg;

	(void)changed;
	if (o->n > o->committed) {
		o->committed = o->n;
		event_active(o->send, 0, 0);
	}
}

static void discard(struct outbox *o, size_t from)
{
	for (size_t i = from; i < o->n; i++)
		free(o->calls[i].data);
	o->n = from;
}

void outbox_drop(struct outbox *o, size_t mark)
{
	for (size_t i = mark; i < o->n; i++)
		log_warn(o->calls[i].terminate ? "terminate not sent: its record was not saved"
					       : "launch not made: its record was not saved",
			 "instance=%lld offer=%s", (long long)o->calls[i].inst.id, o->calls[i].inst.offer);
	discard(o, mark);
}

static void on_failure(void *arg)
{
	struct outbox *o = arg;

	outbox_drop(o, o->committed);
}

size_t outbox_mark(const struct outbox *o) { return o->n; }

static int add(struct outbox *o, int terminate, const struct instance *inst, const char *data)
{
	char *copy = NULL;

	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;
		struct call *c = mem_realloc(o->calls, cap * sizeof *c);
		if (!c)
			return -1;
		o->calls = c;
		o->cap = cap;
	}
	if (data && !(copy = mem_strdup(data)))
		return -1;
	o->calls[o->n++] = (struct call){.terminate = terminate, .inst = *inst, .data = copy};
	return 0;
}

int outbox_launch(struct outbox *o, const struct instance *inst) { return add(o, 0, inst, NULL); }

int outbox_terminate(struct outbox *o, const struct instance *inst, const char *data)
{
	return add(o, 1, inst, data);
}

struct outbox *outbox_new(struct event_base *base, struct batch *b, struct provider *p, launch_cb launched,
			  terminate_cb terminated, void *arg)
{
	struct outbox *o = mem_calloc(1, sizeof *o);

	if (!o)
		return NULL;
	*o = (struct outbox){.provider = p, .launched = launched, .terminated = terminated, .arg = arg};
	if (!(o->send = event_new(base, -1, 0, on_send, o))) {
		free(o);
		return NULL;
	}
	batch_on_commit(b, on_commit, o);
	batch_on_failure(b, on_failure, o);
	return o;
}

void outbox_free(struct outbox *o)
{
	if (!o)
		return;
	discard(o, 0);
	event_free(o->send);
	free(o->calls);
	free(o);
}
