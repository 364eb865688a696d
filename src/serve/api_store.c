/* GET /v1/store/check: the jobs counted again and compared with the
 * tallies the store keeps (store/counts.h), which the scaler's demand,
 * the scrape and the counts read in their place. An admin's call: it
 * reads every job, and on PostgreSQL holds other serves' commits of
 * job changes until this batch ends (docs/ARCHITECTURE.md, "The
 * tallies"). */
#include "serve/api_internal.h"
#include "store/store.h"

/* The differences a reply lists at most; "differing" counts them all. */
#define CHECK_SHOWN 100

struct check {
	json_t *diffs;
	int64_t n;
};

static json_t *sums(const struct job_count *c)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "jobs", (json_int_t)c->n, "items", (json_int_t)c->items,
			 "without_est", (json_int_t)c->no_est, "est_s", (json_int_t)c->est_s, "run_ms",
			 (json_int_t)c->run_ms);
}

static int add_diff(void *arg, const struct job_count *kept, const struct job_count *counted)
{
	struct check *k = arg;

	if (k->n++ >= CHECK_SHOWN)
		return 0;
	return json_array_append_new(
		       k->diffs, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:o}", "state",
					   job_state_name(kept->state), "lane", kept->lane, "type", kept->type, "team",
					   kept->team, "gpus", kept->gpus, "min_vram_gb", kept->min_vram_gb, "priority",
					   kept->priority, "kept", sums(kept), "counted", sums(counted))) == 0
		       ? 0
		       : -1;
}

int api_store_check(struct api_call *c)
{
	struct check k = {json_array(), 0};
	int64_t keys = 0;

	if (!k.diffs || store_check(c->api->store, add_diff, &k, &keys) != 0) {
		json_decref(k.diffs);
		return api_store_failed(c);
	}
	request_reply(c->req, 200,
		      json_pack("{s:b, s:s, s:I, s:I, s:o}", "ok", k.n == 0, "store", store_kind(c->api->store), "keys",
				(json_int_t)keys, "differing", (json_int_t)k.n, "differences", k.diffs));
	return 0;
}
