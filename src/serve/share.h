/* GPUs shared by small services (docs/SCALING.md, "GPUs shared by small
 * services"): a job of a type with gpu_share below 1 takes that part of
 * one GPU, beside others on it up to shares adding to 1. The worker
 * places them; serve hears of a partly used GPU's room in the lease
 * request (share_free, share_vram_gb) and leases onto it only jobs of the
 * types that fit there. */
#ifndef EBB_SHARE_H
#define EBB_SHARE_H

#include <jansson.h>

#include "common/config.h"
#include "common/error.h"
#include "store/store.h"

/* Two shares that add to 1 in floating point (1/3 three times) fit. */
#define SHARE_SLACK 1e-9

/* Reads the lease request's share_free and share_vram_gb into o's share
 * types (the config's, which outlive it): 0, or -1 with err set (out of
 * memory). None when the request offers no partly used GPU. */
int share_offer_read(const struct config *cfg, json_t *body, struct lease_offer *o, struct ebb_error *err);
/* Frees what share_offer_read allocated. */
void share_offer_free(const struct lease_offer *o);

/* A lease on a partly used GPU alone (o->gpus 0): the types of the
 * queued jobs that are not share types o takes, with the types in
 * `full`, to be refused. */
struct share_refused {
	char **names;
	int n, cap;
	int nomem; /* why it failed: out of memory, else the store */
};
/* Fills r; an offer that is no such lease leaves it empty. 0, or -1. */
int share_refused_read(struct store *st, const struct lease_offer *o, const char *const *full, int nfull,
		       struct share_refused *r);
void share_refused_free(struct share_refused *r);

/* The shared types for the worker's register reply: {"TYPE": {"gpu_share":
 * s, "vram_gb": v}}; NULL when there are none, or out of memory (the
 * reply leaves it out: the worker gives each job whole GPUs, as serve
 * leases them where its lease requests offer no share). */
json_t *share_types_json(const struct config *cfg);

#endif
