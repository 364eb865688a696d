/* See counts.h. An open-addressing hash table of keys; a journal of the
 * jobs that entered or left a key, for undo and for the batch's deltas. */
#include "store/counts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv.h"
#include "common/mem.h"

struct sums {
	int64_t n, items, no_est, est_s, run_ms;
};

struct entry {
	enum job_state state;
	char lane[CONF_NAME_MAX + 1], type[CONF_NAME_MAX + 1], team[CONF_NAME_MAX + 1];
	int gpus, min_vram_gb, priority;
	struct sums sum;
	int64_t oldest_ms;
	int oldest_known;
	struct sums pending; /* counts_changes(): the batch's delta */
	int touched;
	int used;
};

/* A job that entered (sign 1) or left (-1) a key. */
struct change {
	size_t slot;
	int sign;
	int64_t items, est_s, run_ms, created_ms;
};

struct counts {
	struct entry *slots;
	size_t cap, used;
	int64_t by_state[JOB_NSTATES];
	struct change *journal;
	size_t njournal, capjournal;
	size_t mark; /* journal length at the open savepoint */
	int marked;
	struct entry **touched; /* counts_changes()'s keys: cap of them */
	int in_batch;
};

struct counts *counts_new(void)
{
	struct counts *c = mem_calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->cap = 64;
	if (!(c->slots = mem_calloc(c->cap, sizeof *c->slots)) ||
	    !(c->touched = mem_calloc(c->cap, sizeof *c->touched))) {
		free(c->slots);
		free(c);
		return NULL;
	}
	return c;
}

void counts_free(struct counts *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->journal);
	free(c->touched);
	free(c);
}

static uint64_t hash(const struct job_count *k)
{
	uint64_t h = FNV1A_START ^ (uint64_t)k->state;
	const char *parts[3] = {k->lane, k->type, k->team};
	int nums[3] = {k->gpus, k->min_vram_gb, k->priority};

	for (int i = 0; i < 3; i++)
		h = fnv1a_byte(fnv1a(h, parts[i]), 0xff);
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 4; b++)
			h = fnv1a_byte(h, (unsigned char)((unsigned)nums[i] >> (8 * b)));
	return h;
}

static int same(const struct entry *e, const struct job_count *k)
{
	return e->state == k->state && e->gpus == k->gpus && e->min_vram_gb == k->min_vram_gb &&
	       e->priority == k->priority && strcmp(e->lane, k->lane) == 0 && strcmp(e->type, k->type) == 0 &&
	       strcmp(e->team, k->team) == 0;
}

static size_t find(struct counts *c, const struct job_count *k)
{
	size_t i = hash(k) & (c->cap - 1);

	while (c->slots[i].used && !same(&c->slots[i], k))
		i = (i + 1) & (c->cap - 1);
	return i;
}

static struct job_count key_of(const struct entry *e)
{
	return (struct job_count){.state = e->state, .lane = e->lane, .type = e->type, .team = e->team,
				  .gpus = e->gpus, .min_vram_gb = e->min_vram_gb, .priority = e->priority};
}

/* A key with sums. */
static struct job_count with_sums(const struct entry *e, const struct sums *s)
{
	struct job_count row = key_of(e);

	row.n = s->n;
	row.items = s->items;
	row.no_est = s->no_est;
	row.est_s = s->est_s;
	row.run_ms = s->run_ms;
	return row;
}

static struct job_count row_of(const struct entry *e) { return with_sums(e, &e->sum); }

static int sums_zero(const struct sums *s) { return !s->n && !s->items && !s->no_est && !s->est_s && !s->run_ms; }

static int sums_equal(const struct sums *a, const struct sums *b)
{
	return a->n == b->n && a->items == b->items && a->no_est == b->no_est && a->est_s == b->est_s &&
	       a->run_ms == b->run_ms;
}

/* What a change adds to its key's sums. */
static struct sums delta_of(const struct change *ch)
{
	return (struct sums){ch->sign, ch->sign * ch->items, ch->sign * (ch->est_s == 0), ch->sign * ch->est_s,
			     ch->sign * ch->run_ms};
}

/* Doubling moves entries to new slots; the journal follows them. -1:
 * no memory, nothing changed. */
static int grow(struct counts *c)
{
	struct entry *old = c->slots, **touched;
	size_t oldcap = c->cap, *moved = mem_alloc(oldcap * sizeof *moved);
	struct entry *slots = mem_calloc(oldcap * 2, sizeof *slots);

	if (!moved || !slots || !(touched = mem_realloc(c->touched, oldcap * 2 * sizeof *touched))) {
		free(moved);
		free(slots);
		return -1;
	}
	c->touched = touched;
	c->slots = slots;
	c->cap = oldcap * 2;
	for (size_t k = 0; k < oldcap; k++) {
		struct job_count key;
		if (!old[k].used)
			continue;
		key = key_of(&old[k]);
		moved[k] = find(c, &key);
		c->slots[moved[k]] = old[k];
	}
	for (size_t j = 0; j < c->njournal; j++)
		c->journal[j].slot = moved[c->journal[j].slot];
	free(moved);
	free(old);
	return 0;
}

/* Room for `more` new keys and journal entries, so that a change is
 * made whole or not at all. */
static int reserve(struct counts *c, size_t more)
{
	if ((c->used + more) * 2 > c->cap && grow(c) != 0)
		return -1;
	if (c->in_batch && c->njournal + more > c->capjournal) {
		size_t cap = c->capjournal ? c->capjournal * 2 : 256;
		struct change *j = mem_realloc(c->journal, cap * sizeof *j);
		if (!j)
			return -1;
		c->journal = j;
		c->capjournal = cap;
	}
	return 0;
}

/* The slot of a key, made if it is new (reserve() made room). */
static size_t slot_of(struct counts *c, const struct job_count *k)
{
	size_t slot = find(c, k);

	if (!c->slots[slot].used) {
		struct entry *e = &c->slots[slot];
		e->used = 1;
		e->state = k->state;
		snprintf(e->lane, sizeof e->lane, "%s", k->lane);
		snprintf(e->type, sizeof e->type, "%s", k->type);
		snprintf(e->team, sizeof e->team, "%s", k->team);
		e->gpus = k->gpus;
		e->min_vram_gb = k->min_vram_gb;
		e->priority = k->priority;
		c->used++;
	}
	return slot;
}

static void add_sums(struct sums *to, const struct sums *d)
{
	to->n += d->n;
	to->items += d->items;
	to->no_est += d->no_est;
	to->est_s += d->est_s;
	to->run_ms += d->run_ms;
}

int counts_add(struct counts *c, const struct job_count *row)
{
	struct entry *e;

	if (reserve(c, 1) != 0)
		return -1;
	e = &c->slots[slot_of(c, row)];
	add_sums(&e->sum, &(struct sums){row->n, row->items, row->no_est, row->est_s, row->run_ms});
	c->by_state[e->state] += row->n;
	e->oldest_known = row->oldest_ms > 0;
	e->oldest_ms = row->oldest_ms;
	return 0;
}

/* A job enters or leaves a key. The oldest stays known while jobs join
 * a key and while those that leave are younger than it; the oldest
 * leaving makes it unknown, until counts_queued()'s reader fills it in. */
static void apply(struct counts *c, const struct change *ch)
{
	struct entry *e = &c->slots[ch->slot];

	struct sums d = delta_of(ch);

	add_sums(&e->sum, &d);
	c->by_state[e->state] += ch->sign;
	if (ch->sign > 0 && e->sum.n == 1) {
		e->oldest_known = 1;
		e->oldest_ms = ch->created_ms;
	} else if (ch->sign > 0) {
		if (e->oldest_known && ch->created_ms < e->oldest_ms)
			e->oldest_ms = ch->created_ms;
	} else if (e->sum.n <= 0 || ch->created_ms <= e->oldest_ms) {
		e->oldest_known = 0;
	}
}

/* The change of a job entering (sign 1) or leaving (-1) state's key with
 * run_ms of run time. */
static void change(struct counts *c, const struct job *job, enum job_state state, int sign, int64_t run_ms)
{
	struct job_count k = {.state = state, .lane = job->lane, .type = job->type, .team = job->team,
			      .gpus = job->gpus, .min_vram_gb = job->min_vram_gb, .priority = job->priority};
	struct change ch = {slot_of(c, &k), sign, job->items, job->est_s, run_ms, job->created_ms};

	apply(c, &ch);
	if (c->in_batch)
		c->journal[c->njournal++] = ch;
}

int counts_move(struct counts *c, const struct job *job, int from, enum job_state to)
{
	if (reserve(c, 2) != 0)
		return -1;
	if (from >= 0)
		change(c, job, (enum job_state)from, -1, job->stored_run_ms);
	change(c, job, to, 1, job_run_ms(job));
	return 0;
}

static void undo_to(struct counts *c, size_t len)
{
	while (c->njournal > len) {
		struct change ch = c->journal[--c->njournal];
		ch.sign = -ch.sign;
		apply(c, &ch);
	}
}

void counts_begin(struct counts *c)
{
	c->in_batch = 1;
	c->njournal = 0;
	c->marked = 0;
}

void counts_commit(struct counts *c)
{
	c->in_batch = 0;
	c->njournal = 0;
	c->marked = 0;
}

void counts_rollback(struct counts *c)
{
	undo_to(c, 0);
	counts_commit(c);
}

/* Savepoints do not nest (store/engine.h): one mark is all there is. */
void counts_savepoint(struct counts *c)
{
	c->mark = c->njournal;
	c->marked = 1;
}

void counts_release(struct counts *c) { c->marked = 0; }

void counts_rollback_savepoint(struct counts *c)
{
	if (c->marked)
		undo_to(c, c->mark);
	c->marked = 0;
}

/* Keys in one order whatever the hash: state, lane, type, team, then the
 * numbers. */
static int key_cmp(const void *pa, const void *pb)
{
	const struct entry *a = *(const struct entry *const *)pa, *b = *(const struct entry *const *)pb;
	int d;

	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	if ((d = strcmp(a->lane, b->lane)) != 0 || (d = strcmp(a->type, b->type)) != 0 ||
	    (d = strcmp(a->team, b->team)) != 0)
		return d;
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	if (a->min_vram_gb != b->min_vram_gb)
		return a->min_vram_gb < b->min_vram_gb ? -1 : 1;
	return (a->priority > b->priority) - (a->priority < b->priority);
}

int counts_changes(struct counts *c, count_cb cb, void *arg)
{
	struct entry **touched = c->touched;
	size_t n = 0;
	int rc = 0;

	for (size_t j = 0; j < c->njournal; j++) {
		struct entry *e = &c->slots[c->journal[j].slot];
		struct sums d = delta_of(&c->journal[j]);
		if (!e->touched) {
			e->touched = 1;
			e->pending = (struct sums){0};
			touched[n++] = e;
		}
		add_sums(&e->pending, &d);
	}
	qsort(touched, n, sizeof *touched, key_cmp);
	for (size_t k = 0; k < n; k++) {
		struct entry *e = touched[k];
		struct job_count row = with_sums(e, &e->pending);
		e->touched = 0;
		if (rc == 0 && !sums_zero(&e->pending))
			rc = cb(arg, &row);
	}
	return rc;
}

int64_t counts_in_state(const struct counts *c, enum job_state state)
{
	return c->by_state[state];
}

int64_t counts_run_ms(const struct counts *c)
{
	int64_t sum = 0;

	for (size_t k = 0; k < c->cap; k++)
		if (c->slots[k].used)
			sum += c->slots[k].sum.run_ms;
	return sum;
}

int counts_each(const struct counts *c, count_cb cb, void *arg)
{
	for (size_t k = 0; k < c->cap; k++) {
		const struct entry *e = &c->slots[k];
		struct job_count row;
		int rc;
		if (!e->used || e->sum.n <= 0)
			continue;
		row = row_of(e);
		row.oldest_ms = e->oldest_known ? e->oldest_ms : 0;
		if ((rc = cb(arg, &row)) != 0)
			return rc;
	}
	return 0;
}

/* The queued classes in the order the engines' GROUP BY gave them, so
 * that the scaler meets them in one order whatever the hash. */
static int class_cmp(const void *pa, const void *pb)
{
	const struct entry *a = *(const struct entry *const *)pa, *b = *(const struct entry *const *)pb;
	int d;

	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	if (a->min_vram_gb != b->min_vram_gb)
		return a->min_vram_gb < b->min_vram_gb ? -1 : 1;
	if ((d = strcmp(a->lane, b->lane)) != 0 || (d = strcmp(a->type, b->type)) != 0 ||
	    (d = strcmp(a->team, b->team)) != 0)
		return d;
	return (a->priority > b->priority) - (a->priority < b->priority);
}

int counts_queued(struct counts *c, queued_cb cb, void *arg)
{
	size_t n = 0;

	for (size_t k = 0; k < c->cap; k++) {
		struct entry *e = &c->slots[k];
		if (e->used && e->state == JOB_QUEUED && e->sum.n > 0)
			c->touched[n++] = e;
	}
	qsort(c->touched, n, sizeof *c->touched, class_cmp);
	for (size_t k = 0; k < n; k++) {
		struct entry *e = c->touched[k];
		struct job_count row = row_of(e);
		int64_t oldest = e->oldest_known ? e->oldest_ms : 0;
		int rc = cb(arg, &row, &oldest);
		if (oldest > 0) {
			e->oldest_ms = oldest;
			e->oldest_known = 1;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The entry of a key, or NULL. */
static const struct entry *lookup(const struct counts *c, const struct job_count *k)
{
	size_t i = hash(k) & (c->cap - 1);

	for (; c->slots[i].used; i = (i + 1) & (c->cap - 1))
		if (same(&c->slots[i], k))
			return &c->slots[i];
	return NULL;
}

/* The keys of `a` that `b` lacks or holds otherwise (the reverse when
 * flipped), each once. */
static int differ(const struct counts *a, const struct counts *b, int flipped, count_diff_cb cb, void *arg,
		  int64_t *keys)
{
	for (size_t k = 0; k < a->cap; k++) {
		const struct entry *e = &a->slots[k], *o;
		const struct sums none = {0}, *other;
		struct job_count here, there;
		int rc;
		if (!e->used || sums_zero(&e->sum))
			continue;
		here = row_of(e);
		o = lookup(b, &here);
		other = o ? &o->sum : &none;
		if (flipped && !sums_zero(other))
			continue; /* seen from the other side */
		(*keys)++;
		if (sums_equal(&e->sum, other))
			continue;
		there = with_sums(e, other);
		if ((rc = flipped ? cb(arg, &there, &here) : cb(arg, &here, &there)) != 0)
			return rc;
	}
	return 0;
}

int counts_compare(const struct counts *kept, const struct counts *counted, count_diff_cb cb, void *arg,
		   int64_t *keys)
{
	int rc;

	*keys = 0;
	if ((rc = differ(kept, counted, 0, cb, arg, keys)) != 0)
		return rc;
	return differ(counted, kept, 1, cb, arg, keys);
}
