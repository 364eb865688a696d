/* See durations.h. The history is a ring of its jobs' types, oldest first. Each
 * type in it keeps its newest runs in order (to know which leaves next)
 * and sorted (for the median), so that adding a job costs a few moves of
 * at most DURATIONS_PER_TYPE numbers: the simulator adds a million. */
#include "policy/durations.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

struct kept {
	int count;   /* its jobs in the history */
	int n, head; /* runs kept, min(count, DURATIONS_PER_TYPE): a ring, oldest at head */
	int64_t ring[DURATIONS_PER_TYPE];
	int64_t sorted[DURATIONS_PER_TYPE];
};

struct durations {
	int types[DURATIONS_HISTORY]; /* of its jobs: a type's oldest run leaves with its oldest job */
	int head, n;
	/* type -> its index in kept, plus one; 0: none in the history */
	int *slot_of;
	size_t nslot_of;
	struct kept *kept;
	int nkept, capkept;
	int *unused; /* indexes in kept that no type holds */
	int nunused;
};

struct durations *durations_new(void)
{
	return mem_calloc(1, sizeof(struct durations));
}

void durations_free(struct durations *d)
{
	if (!d)
		return;
	free(d->slot_of);
	free(d->kept);
	free(d->unused);
	free(d);
}

/* Where v is, or would go, in the ascending a[0..n). */
static int lower_bound(const int64_t *a, int n, int64_t v)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop_oldest(struct kept *k)
{
	int at = lower_bound(k->sorted, k->n, k->ring[k->head]);

	memmove(&k->sorted[at], &k->sorted[at + 1], (size_t)(k->n - 1 - at) * sizeof *k->sorted);
	k->head = (k->head + 1) % DURATIONS_PER_TYPE;
	k->n--;
}

/* A type that kept all it may: its oldest run leaves and run_ms comes in,
 * the runs between where each is moved once, not those after the one
 * leaving and then those after the one coming (the simulator adds a run
 * for each of a million jobs). */
static void replace_oldest(struct kept *k, int64_t run_ms)
{
	int from = lower_bound(k->sorted, k->n, k->ring[k->head]), to = lower_bound(k->sorted, k->n, run_ms);

	if (to > from) {
		to--; /* the runs after the one leaving move down a place */
		memmove(&k->sorted[from], &k->sorted[from + 1], (size_t)(to - from) * sizeof *k->sorted);
	} else {
		memmove(&k->sorted[to + 1], &k->sorted[to], (size_t)(from - to) * sizeof *k->sorted);
	}
	k->sorted[to] = run_ms;
	k->ring[k->head] = run_ms;
	k->head = (k->head + 1) % DURATIONS_PER_TYPE;
}

static void push_newest(struct kept *k, int64_t run_ms)
{
	int at;

	if (k->n == DURATIONS_PER_TYPE) {
		replace_oldest(k, run_ms);
		return;
	}
	k->ring[(k->head + k->n) % DURATIONS_PER_TYPE] = run_ms;
	at = lower_bound(k->sorted, k->n, run_ms);
	memmove(&k->sorted[at + 1], &k->sorted[at], (size_t)(k->n - at) * sizeof *k->sorted);
	k->sorted[at] = run_ms;
	k->n++;
}

/* Room for type in slot_of and for one more kept type: 0, or -1 when out
 * of memory (what was grown stays, unused). */
static int make_room(struct durations *d, int type)
{
	if ((size_t)type >= d->nslot_of) {
		size_t n = (size_t)type + 1 > 2 * d->nslot_of ? (size_t)type + 1 : 2 * d->nslot_of;
		int *grown = mem_realloc(d->slot_of, n * sizeof *grown);
		if (!grown)
			return -1;
		memset(grown + d->nslot_of, 0, (n - d->nslot_of) * sizeof *grown);
		d->slot_of = grown;
		d->nslot_of = n;
	}
	if (d->nunused == 0 && d->nkept == d->capkept) {
		int cap = d->capkept ? 2 * d->capkept : 16;
		struct kept *kept = mem_realloc(d->kept, (size_t)cap * sizeof *kept);
		int *unused;
		if (!kept)
			return -1;
		d->kept = kept;
		if (!(unused = mem_realloc(d->unused, (size_t)cap * sizeof *unused)))
			return -1;
		d->unused = unused;
		d->capkept = cap;
	}
	return 0;
}

/* The oldest job leaves the history: its type's count drops, and its run
 * with it when the type kept all its jobs. Returns its type. */
static int evict(struct durations *d)
{
	int type = d->types[d->head], slot = d->slot_of[type] - 1;
	struct kept *k = &d->kept[slot];

	d->head = (d->head + 1) % DURATIONS_HISTORY;
	d->n--;
	if (k->n > --k->count)
		drop_oldest(k);
	if (k->count == 0) {
		d->slot_of[type] = 0;
		d->unused[d->nunused++] = slot;
	}
	return type;
}

int durations_add(struct durations *d, int type, int64_t run_ms)
{
	int left = -1;
	struct kept *k;

	if (type < 0 || make_room(d, type) != 0)
		return -2;
	if (d->n == DURATIONS_HISTORY)
		left = evict(d);
	if (!d->slot_of[type]) {
		int slot = d->nunused ? d->unused[--d->nunused] : d->nkept++;
		memset(&d->kept[slot], 0, sizeof d->kept[slot]);
		d->slot_of[type] = slot + 1;
	}
	d->types[(d->head + d->n) % DURATIONS_HISTORY] = type;
	d->n++;
	k = &d->kept[d->slot_of[type] - 1];
	k->count++;
	push_newest(k, run_ms);
	return left == type ? -1 : left;
}

int64_t durations_estimate_ms(const struct durations *d, int type, int64_t est_ms, int64_t default_ms)
{
	const struct kept *k;

	if (est_ms > 0)
		return est_ms;
	if (type < 0 || (size_t)type >= d->nslot_of || !d->slot_of[type])
		return default_ms;
	k = &d->kept[d->slot_of[type] - 1];
	return k->sorted[k->n / 2];
}
