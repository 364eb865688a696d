/* See batch.h. */
#include "serve/batch.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/mem.h"

#define MAX_SUBSCRIBERS 8

struct subscriber {
	union {
		int (*pre)(void *);
		void (*post)(void *, int);
		void (*failed)(void *);
	} fn;
	void *arg;
};

struct batch {
	struct store *st;
	struct httpd *httpd;
	int open;              /* a store transaction is open */
	uint64_t changes_seen; /* store_changes() at the last commit */
	struct subscriber pre[MAX_SUBSCRIBERS], post[MAX_SUBSCRIBERS], failed[MAX_SUBSCRIBERS];
	int npre, npost, nfailed;
};

struct batch *batch_new(struct store *st)
{
	struct batch *b = mem_calloc(1, sizeof *b);

	if (b) {
		b->st = st;
		b->changes_seen = store_changes(st);
	}
	return b;
}

void batch_free(struct batch *b) { free(b); }
void batch_set_httpd(struct batch *b, struct httpd *h) { b->httpd = h; }

int batch_begin(struct batch *b)
{
	if (!b->open) {
		if (store_begin(b->st) != 0)
			return -1;
		b->open = 1;
	}
	return store_savepoint(b->st);
}

void batch_end(struct batch *b, int ok)
{
	/* A savepoint that cannot be released or rolled back leaves the
	 * transaction in doubt: the commit is refused with the rest. */
	if ((ok ? store_release(b->st) : store_rollback_savepoint(b->st)) != 0) {
		log_error("store failed ending a step", "error=\"%s\"", store_error(b->st));
		b->changes_seen--; /* the commit subscribers look again */
	}
}

void batch_flush(struct batch *b) { httpd_flush(b->httpd); }

int batch_commit(void *arg, struct ebb_error *err)
{
	struct batch *b = arg;
	int failed = 0;

	for (int i = 0; i < b->npre && !failed; i++)
		failed = b->pre[i].fn.pre(b->pre[i].arg) != 0;
	if (!b->open)
		return failed ? store_failure(b->st, err) : 0;
	b->open = 0;
	if (!failed && store_commit(b->st) == 0) {
		int changed = store_changes(b->st) != b->changes_seen;
		b->changes_seen = store_changes(b->st);
		for (int i = 0; i < b->npost; i++)
			b->post[i].fn.post(b->post[i].arg, changed);
		return 0;
	}
	store_failure(b->st, err); /* before the rollback, which may succeed */
	log_error("commit failed, batch rolled back", "error=\"%s\"", err->message);
	if (store_rollback(b->st) != 0)
		log_error("rollback failed", "error=\"%s\"", store_error(b->st));
	for (int i = 0; i < b->nfailed; i++)
		b->failed[i].fn.failed(b->failed[i].arg);
	return -1;
}

void batch_on_precommit(struct batch *b, int (*fn)(void *arg), void *arg)
{
	if (b->npre < MAX_SUBSCRIBERS)
		b->pre[b->npre++] = (struct subscriber){.fn.pre = fn, .arg = arg};
}

void batch_on_commit(struct batch *b, void (*fn)(void *arg, int changed), void *arg)
{
	if (b->npost < MAX_SUBSCRIBERS)
		b->post[b->npost++] = (struct subscriber){.fn.post = fn, .arg = arg};
}

void batch_on_failure(struct batch *b, void (*fn)(void *arg), void *arg)
{
	if (b->nfailed < MAX_SUBSCRIBERS)
		b->failed[b->nfailed++] = (struct subscriber){.fn.failed = fn, .arg = arg};
}
