/* See sim_internal.h: the timed values of a sliding window, oldest first, in a
 * ring that grows as the window needs, so that no window is cut short
 * whatever its length against the poll. */
#include <stdlib.h>

#include "sim/sim_internal.h"

void window_push(struct window *w, int64_t at, double a, double b)
{
	if (w->n == w->cap)
		w->e = sim_ring_grow(w->e, &w->head, w->n, &w->cap, sizeof *w->e);
	w->e[(w->head + w->n++) % w->cap] = (struct window_entry){at, a, b};
}

const struct window_entry *window_at(const struct window *w, size_t k)
{
	return &w->e[(w->head + k) % w->cap];
}

void window_pop_front(struct window *w)
{
	w->head = (w->head + 1) % w->cap;
	w->n--;
}

void window_pop_back(struct window *w)
{
	w->n--;
}

void window_keep(struct window *w, int (*keep)(const struct window_entry *e, const void *arg), const void *arg)
{
	size_t kept = 0;

	for (size_t k = 0; k < w->n; k++) {
		const struct window_entry *e = window_at(w, k);
		if (keep(e, arg))
			w->e[(w->head + kept++) % w->cap] = *e;
	}
	w->n = kept;
}

void window_free(struct window *w)
{
	free(w->e);
	*w = (struct window){0};
}
