/* See counts.h. An open-addressing hash table of keys; a journal of
 * (slot, delta) for undo. */
#include "store/counts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv.h"
#include "common/mem.h"

struct entry {
	enum job_state state;
	char lane[CONF_NAME_MAX + 1], type[CONF_NAME_MAX + 1], team[CONF_NAME_MAX + 1];
	int64_t n;
	int used;
};

struct change {
	size_t slot;
	int64_t delta;
};

struct counts {
	struct entry *slots;
	size_t cap, used;
	int64_t by_state[JOB_NSTATES];
	struct change *journal;
	size_t njournal, capjournal;
	size_t *marks; /* journal length at each open savepoint */
	size_t nmarks, capmarks;
	int in_batch;
};

struct counts *counts_new(void)
{
	struct counts *c = mem_calloc(1, sizeof *c);

	c->cap = 64;
	c->slots = mem_calloc(c->cap, sizeof *c->slots);
	return c;
}

void counts_free(struct counts *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->journal);
	free(c->marks);
	free(c);
}

static uint64_t hash(enum job_state state, const char *lane, const char *type, const char *team)
{
	uint64_t h = FNV1A_START ^ (uint64_t)state;
	const char *parts[3] = {lane, type, team};

	for (int i = 0; i < 3; i++)
		h = fnv1a_byte(fnv1a(h, parts[i]), 0xff);
	return h;
}

static size_t find(struct counts *c, enum job_state state, const char *lane, const char *type,
		   const char *team)
{
	size_t i = hash(state, lane, type, team) & (c->cap - 1);

	while (c->slots[i].used) {
		struct entry *e = &c->slots[i];
		if (e->state == state && strcmp(e->lane, lane) == 0 && strcmp(e->type, type) == 0 &&
		    strcmp(e->team, team) == 0)
			return i;
		i = (i + 1) & (c->cap - 1);
	}
	return i;
}

/* Doubling moves entries to new slots; the journal follows them. */
static void grow(struct counts *c)
{
	struct entry *old = c->slots;
	size_t oldcap = c->cap, *moved = mem_alloc(oldcap * sizeof *moved);

	c->cap *= 2;
	c->slots = mem_calloc(c->cap, sizeof *c->slots);
	for (size_t k = 0; k < oldcap; k++) {
		if (!old[k].used)
			continue;
		moved[k] = find(c, old[k].state, old[k].lane, old[k].type, old[k].team);
		c->slots[moved[k]] = old[k];
	}
	for (size_t j = 0; j < c->njournal; j++)
		c->journal[j].slot = moved[c->journal[j].slot];
	free(moved);
	free(old);
}

static void apply(struct counts *c, size_t slot, int64_t delta)
{
	c->slots[slot].n += delta;
	c->by_state[c->slots[slot].state] += delta;
}

void counts_add(struct counts *c, enum job_state state, const char *lane, const char *type,
		const char *team, int64_t delta)
{
	size_t slot;

	if ((c->used + 1) * 2 > c->cap)
		grow(c);
	slot = find(c, state, lane, type, team);
	if (!c->slots[slot].used) {
		struct entry *e = &c->slots[slot];
		e->used = 1;
		e->state = state;
		snprintf(e->lane, sizeof e->lane, "%s", lane);
		snprintf(e->type, sizeof e->type, "%s", type);
		snprintf(e->team, sizeof e->team, "%s", team);
		c->used++;
	}
	apply(c, slot, delta);
	if (!c->in_batch)
		return;
	if (c->njournal == c->capjournal) {
		c->capjournal = c->capjournal ? c->capjournal * 2 : 256;
		c->journal = mem_realloc(c->journal, c->capjournal * sizeof *c->journal);
	}
	c->journal[c->njournal++] = (struct change){slot, delta};
}

static void undo_to(struct counts *c, size_t len)
{
	while (c->njournal > len) {
		struct change *ch = &c->journal[--c->njournal];
		apply(c, ch->slot, -ch->delta);
	}
}

void counts_begin(struct counts *c)
{
	c->in_batch = 1;
	c->njournal = 0;
	c->nmarks = 0;
}

void counts_commit(struct counts *c)
{
	c->in_batch = 0;
	c->njournal = 0;
	c->nmarks = 0;
}

void counts_rollback(struct counts *c)
{
	undo_to(c, 0);
	counts_commit(c);
}

void counts_savepoint(struct counts *c)
{
	if (c->nmarks == c->capmarks) {
		c->capmarks = c->capmarks ? c->capmarks * 2 : 8;
		c->marks = mem_realloc(c->marks, c->capmarks * sizeof *c->marks);
	}
	c->marks[c->nmarks++] = c->njournal;
}

void counts_release(struct counts *c)
{
	if (c->nmarks)
		c->nmarks--;
}

void counts_rollback_savepoint(struct counts *c)
{
	if (c->nmarks)
		undo_to(c, c->marks[--c->nmarks]);
}

int64_t counts_in_state(const struct counts *c, enum job_state state)
{
	return c->by_state[state];
}

int counts_each(const struct counts *c, count_cb cb, void *arg)
{
	for (size_t k = 0; k < c->cap; k++) {
		const struct entry *e = &c->slots[k];
		struct job_count jc = {e->state, e->lane, e->type, e->team, e->n};
		int rc;
		if (!e->used || e->n <= 0)
			continue;
		if ((rc = cb(arg, &jc)) != 0)
			return rc;
	}
	return 0;
}
