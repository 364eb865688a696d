/* GPUs shared by small services (see share.h). */
#include "serve/share.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonin.h"
#include "common/mem.h"

int share_offer_read(const struct config *cfg, json_t *body, struct lease_offer *o, struct ebb_error *err)
{
	double room = json_get_number(body, "share_free", 0);
	int64_t vram = json_get_int(body, "share_vram_gb", -1); /* -1: memory not said */
	const char **names;

	o->share_types = NULL;
	o->nshare_types = 0;
	if (room <= 0)
		return 0;
	if (!(names = mem_calloc(cfg->ntypes ? cfg->ntypes : 1, sizeof *names)))
		return error_set(err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
	for (size_t i = 0; i < cfg->ntypes; i++) {
		const struct type_conf *t = &cfg->types[i];
		if (t->gpu_share < 1 && t->gpu_share <= room + SHARE_SLACK && (vram < 0 || t->vram_gb <= vram))
			names[o->nshare_types++] = t->name;
	}
	o->share_types = names;
	return 0;
}

void share_offer_free(const struct lease_offer *o) { free((void *)o->share_types); }

static int among(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

static int add(struct share_refused *r, const char *name)
{
	if (among((const char *const *)r->names, r->n, name))
		return 0;
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 16;
		char **v = mem_realloc(r->names, (size_t)cap * sizeof *v);
		if (!v)
			return r->nomem = -1;
		r->names = v;
		r->cap = cap;
	}
	if (!(r->names[r->n] = mem_strdup(name)))
		return r->nomem = -1;
	r->n++;
	return 0;
}

struct refuse_walk {
	struct share_refused *r;
	const struct lease_offer *o;
};

static int refuse_queued(void *arg, const struct job_count *c)
{
	struct refuse_walk *w = arg;

	if (c->state != JOB_QUEUED || among(w->o->share_types, w->o->nshare_types, c->type))
		return 0;
	return add(w->r, c->type);
}

int share_refused_read(struct store *st, const struct lease_offer *o, const char *const *full, int nfull,
		       struct share_refused *r)
{
	struct refuse_walk w = {r, o};

	*r = (struct share_refused){0};
	if (o->gpus > 0 || o->nshare_types == 0)
		return 0;
	for (int i = 0; i < nfull; i++)
		if (add(r, full[i]) != 0)
			return -1;
	/* The tallies name every queued type: the store's query refuses
	 * types by name, and a type with no section is no share type. */
	return store_job_counts(st, refuse_queued, &w) != 0 ? -1 : 0;
}

void share_refused_free(struct share_refused *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->names[i]);
	free(r->names);
	*r = (struct share_refused){0};
}

json_t *share_types_json(const struct config *cfg)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < cfg->ntypes; i++) {
		const struct type_conf *t = &cfg->types[i];
		json_t *v;
		if (t->gpu_share >= 1)
			continue;
		v = json_pack("{s:f, s:I}", "gpu_share", t->gpu_share, "vram_gb", (json_int_t)t->vram_gb);
		if (!v || json_object_set_new(o, t->name, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	if (o && json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
