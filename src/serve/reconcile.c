/* See reconcile.h. */
#include "serve/reconcile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"

struct live {
	struct instance *v;
	int n;
	int nomem;
};

static int add_live(void *arg, const struct instance *inst)
{
	struct live *l = arg;
	struct instance *grown = mem_realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);

	if (!grown) {
		l->nomem = 1;
		return -1;
	}
	l->v = grown;
	l->v[l->n++] = *inst;
	return 0;
}

static const struct provider_item *by_ref(const struct provider_item *items, int n, const char *ref)
{
	for (int k = 0; k < n; k++) {
		if (strcmp(items[k].ref, ref) == 0)
			return &items[k];
	}
	return NULL;
}

/* Asks the provider to end inst, with what its launch wanted back. */
static int end_instance(const struct reconcile *r, const struct instance *inst, terminate_cb done, void *arg)
{
	char data[PROVIDER_DATA_MAX + 1] = "";
	int rc = store_instance_data(r->store, inst->id, data, sizeof data);

	if (rc < 0)
		return -1;
	provider_terminate(r->provider, inst, data[0] ? data : NULL, done, arg);
	return 0;
}

/* A launch asked for by a serve that was killed before the answer, which
 * the provider does not list: it did not happen. Left requested, it would
 * hold a place under the limits and be billed as booting until
 * boot_timeout. */
static int launch_lost(const struct reconcile *r, struct instance *inst)
{
	const char *why = "launch failed: serve stopped before its answer, and the provider does not list it";
	struct decision d = {.at_ms = clock_now(r->clock), .kind = "launch_failed", .offer = inst->offer,
			     .count = 1, .instance = inst->id, .reason = why};

	log_warn("launch lost", "instance=%lld offer=%s", (long long)inst->id, inst->offer);
	if (store_decision_insert(r->store, &d) != 0)
		return -1;
	return fleet_set_state(r->fleet, inst, INST_TERMINATED, why);
}

/* A live instance: gone when the list lacks it, or has it stopped (its
 * worker is gone, and a stopped machine still bills: it is ended);
 * adopted when ebb never learnt its name and the list names it by its
 * id. */
static int check_live(const struct reconcile *r, struct instance *inst, const struct provider_item *items, int n,
		      terminate_cb done, void *arg)
{
	const struct provider_item *item;
	struct ebb_error err;

	if (!inst->provider_ref[0]) {
		for (int k = 0; k < n; k++) {
			if (items[k].instance != inst->id)
				continue;
			snprintf(inst->provider_ref, sizeof inst->provider_ref, "%s", items[k].ref);
			log_info("instance adopted from the provider's list", "id=%lld ref=%s", (long long)inst->id,
				 inst->provider_ref);
			if (inst->state == INST_REQUESTED)
				return fleet_set_state(r->fleet, inst, INST_BOOTING,
						       "launched: found in the provider's list, its launch's answer lost");
			return store_instance_update(r->store, inst);
		}
		if (inst->state == INST_REQUESTED && inst->launched_ms < r->started_ms && !r->keep_all)
			return launch_lost(r, inst);
		return 0;
	}
	item = by_ref(items, n, inst->provider_ref);
	if (r->keep_all || (item && !item->stopped))
		return 0;
	if (inst->job_id && queue_expire_instance(r->queue, inst->id, &err) != 0)
		return -1;
	if (item)
		return fleet_set_state(r->fleet, inst, INST_TERMINATED, "gone: stopped at the provider, so ended") == 0
			       ? end_instance(r, inst, done, arg)
			       : -1;
	if (inst->reclaim_at_ms)
		return fleet_set_state(r->fleet, inst, INST_TERMINATED, "gone: reclaimed (spot)");
	if (inst->state == INST_IDLE)
		return fleet_set_state(r->fleet, inst, INST_TERMINATED, "gone: the worker exited (idle)");
	return fleet_lost(r->fleet, inst, "gone: the provider lost it");
}

static int known(const struct live *l, const struct provider_item *item)
{
	for (int k = 0; k < l->n; k++) {
		if (strcmp(l->v[k].provider_ref, item->ref) == 0 ||
		    (item->instance && l->v[k].id == item->instance && !l->v[k].provider_ref[0]))
			return 1;
	}
	return 0;
}

/* An instance the provider has and ebb does not run: terminated, and
 * said in the log and the decisions. One ebb ended a moment ago (its
 * worker left, or its terminate is under way) is not one yet; but one
 * that is stopped will not go by itself (a GCE VM that its worker powered
 * off keeps its disk, billed, until it is deleted): it is terminated at
 * once, and that is no leak (a second terminate of one on its way out is
 * harmless). */
static int end_leak(const struct reconcile *r, const struct provider_item *item, terminate_cb done, void *arg)
{
	struct instance inst = {.id = item->instance};
	struct decision d = {.at_ms = clock_now(r->clock), .kind = "terminate", .offer = item->offer,
			     .instance = item->instance};
	char reason[400];
	int rc = item->instance ? store_instance_get(r->store, item->instance, &inst) : STORE_NOT_FOUND;
	int recent = rc == 0 && clock_now(r->clock) - inst.terminated_ms < RECONCILE_GRACE_MS;

	if (rc < 0)
		return -1;
	if (recent && !item->stopped)
		return 0;
	if (recent)
		snprintf(reason, sizeof reason, "terminate %.255s: stopped at the provider after it ended", item->ref);
	else
		snprintf(reason, sizeof reason, "terminate leak %.255s: %s", item->ref,
			 rc == STORE_NOT_FOUND ? "the provider has it and ebb never launched it"
					       : "ebb terminated it, and the provider still has it");
	d.reason = reason;
	if (rc == STORE_NOT_FOUND) {
		memset(&inst, 0, sizeof inst);
		inst.id = item->instance;
		snprintf(inst.offer, sizeof inst.offer, "%s", item->offer);
	}
	snprintf(inst.provider_ref, sizeof inst.provider_ref, "%s", item->ref);
	if (recent)
		log_info("stopped instance", "ref=%s instance=%lld reason=\"%s\"", item->ref, (long long)item->instance,
			 reason);
	else
		log_warn("leaked instance", "ref=%s instance=%lld reason=\"%s\"", item->ref,
			 (long long)item->instance, reason);
	if (store_decision_insert(r->store, &d) != 0)
		return -1;
	return end_instance(r, &inst, done, arg);
}

int reconcile_run(const struct reconcile *r, const struct provider_item *items, int n, terminate_cb done,
		  void *arg)
{
	struct live l = {0};
	struct ebb_error err;
	int rc = 0;

	if (store_instance_list(r->store, add_live, &l) != 0) {
		if (l.nomem)
			log_error("reconcile: out of memory", "instances=%d", l.n);
		free(l.v);
		return -1;
	}
	for (int k = 0; k < l.n && rc == 0; k++)
		rc = check_live(r, &l.v[k], items, n, done, arg);
	for (int k = 0; k < n && rc == 0; k++) {
		if (!items[k].terminating && !known(&l, &items[k]))
			rc = end_leak(r, &items[k], done, arg);
	}
	free(l.v);
	if (rc == 0)
		rc = queue_process_due(r->queue, &err);
	return rc;
}
