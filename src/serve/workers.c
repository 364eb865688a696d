/* The workers serve has heard from (see workers.h). */
#include "serve/workers.h"

#include <stdio.h>
#include <string.h>

void workers_handlers(struct workers *w, const char *name, const struct handler_seen *h, int n)
{
	struct worker_seen *s = (struct worker_seen *)workers_find(w, name);

	if (!s)
		return;
	memcpy(s->handlers, h, (size_t)n * sizeof *h);
	s->nhandlers = n;
}

void workers_granted(struct workers *w, const char *name, const int64_t *id, const int64_t *token, int n)
{
	struct worker_seen *s = (struct worker_seen *)workers_find(w, name);

	if (!s)
		return;
	s->ngranted = n <= WORKER_GRANTED_MAX ? n : 0;
	memcpy(s->granted_id, id, (size_t)s->ngranted * sizeof *id);
	memcpy(s->granted_token, token, (size_t)s->ngranted * sizeof *token);
}

int workers_not_running(struct workers *w, const char *name, const int64_t *running, int nrunning, int64_t *id,
			int64_t *token)
{
	struct worker_seen *s = (struct worker_seen *)workers_find(w, name);
	int n = 0;

	for (int k = 0; s && k < s->ngranted; k++) {
		int named = 0;
		for (int i = 0; i < nrunning; i++)
			named |= running[i] == s->granted_id[k];
		if (!named) {
			id[n] = s->granted_id[k];
			token[n++] = s->granted_token[k];
		}
	}
	if (s)
		s->ngranted = 0;
	return n;
}

json_t *workers_handlers_json(const struct worker_seen *s)
{
	json_t *list = json_array();

	for (int i = 0; s && list && i < s->nhandlers; i++) {
		const struct handler_seen *h = &s->handlers[i];
		if (json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "type", h->type, "state",
							  h->ready ? "ready" : "starting", "setup_s",
							  h->setup_ms >= 0 ? json_real((double)h->setup_ms / 1000.0)
									   : json_null())) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

void workers_setups(const struct workers *w, const struct type_conf *types, size_t ntypes, int64_t *out_ms)
{
	for (size_t k = 0; k < ntypes; k++) {
		out_ms[k] = -1;
		for (int i = 0; i < w->n; i++) {
			for (int h = 0; h < w->at[i].nhandlers; h++) {
				const struct handler_seen *s = &w->at[i].handlers[h];
				if (s->setup_ms > out_ms[k] && strcmp(s->type, types[k].name) == 0)
					out_ms[k] = s->setup_ms;
			}
		}
	}
}

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
