/* The workers serve has heard from (see workers.h). */
#include "serve/workers.h"

#include <stdio.h>
#include <string.h>

const struct worker_seen *workers_find(const struct workers *w, const char *name)
{
	for (int i = 0; i < w->n; i++) {
		if (strcmp(w->at[i].name, name) == 0)
			return &w->at[i];
	}
	return NULL;
}

void workers_seen(struct workers *w, const char *name, int64_t instance, int gpus, int64_t now_ms,
		  int registered)
{
	struct worker_seen *s = (struct worker_seen *)workers_find(w, name);

	if (!s && w->n < WORKERS_MAX) {
		s = &w->at[w->n++];
		*s = (struct worker_seen){0};
	} else if (!s) { /* full: the one heard from least recently makes room */
		s = &w->at[0];
		for (int i = 1; i < w->n; i++) {
			if (w->at[i].last_ms < s->last_ms)
				s = &w->at[i];
		}
		*s = (struct worker_seen){0};
	}
	snprintf(s->name, sizeof s->name, "%s", name);
	if (instance)
		s->instance = instance;
	if (gpus >= 0)
		s->gpus = gpus;
	if (registered)
		s->registered_ms = now_ms;
	s->last_ms = now_ms;
}
