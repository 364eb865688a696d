/* Fleet calls: a worker registers; people list the fleet and the scaler's
 * decisions, and drain an instance (see docs/API.md). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "provider/provider.h"
#include "serve/api_internal.h"
#include "serve/reclaim.h"
#include "serve/scaler.h"
#include "serve/share.h"
#include "serve/workers.h"
#include "store/store.h"

const struct field api_register_fields[] = {
	{"instance", F_INT, 1, INT64_MAX},
	{"name", F_STRING, 1, CONF_NAME_MAX},
	{"gpus", F_INT, 0, INSTANCE_GPUS_MAX},
	{NULL, 0, 0, 0},
};

/* The settings a worker should use, beside what it registered as. */
static json_t *register_reply(struct api *a, const char *key, json_t *what)
{
	const struct config *cfg = a->cfg;

	/* gpu_shares: the types whose jobs share a GPU, for the worker to
	 * place them (serve/share.h). */
	return json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:I, s:o*}", key, what, "idle_timeout_s",
			 (double)(a->scaler ? scaler_worker_idle_timeout(a->scaler) : 0) / 1000.0, "orphan_timeout_s",
			 (double)cfg->orphan_timeout_ms / 1000.0, "lease_s", (double)cfg->lease_timeout_ms / 1000.0,
			 "heartbeat_s", (double)cfg->lease_timeout_ms / 3000.0, "reclaim_grace_s",
			 (double)cfg->reclaim_grace_ms / 1000.0, "result_max", (json_int_t)cfg->result_max,
			 "gpu_shares", share_types_json(cfg));
}

/* A worker registers: one started by a provider by its instance, one
 * started by hand by its name (it is then listed by GET /v1/workers). */
int api_register(struct api_call *c)
{
	struct api *a = c->api;
	int64_t id, now = clock_now(a->clock);
	const char *name;
	struct instance inst;
	struct ebb_error err;
	char own[32];

	if (api_body(c, api_register_fields) != 0)
		return -1;
	id = json_get_int(c->body, "instance", 0);
	name = json_get_str(c->body, "name", NULL);
	if (!id && !name) {
		error_set(&err, 400, "missing_field", "instance",
			  "instance or name: required, the instance id (a worker a provider started) or the "
			  "worker's name (one started by hand)");
		return api_fail(c, &err);
	}
	if (!id) {
		workers_seen(a->workers, name, 0, (int)json_get_int(c->body, "gpus", -1), now, 1);
		request_reply(c->req, 200,
			      register_reply(a, "worker", json_pack("{s:s, s:n}", "name", name, "instance")));
		return 0;
	}
	if (api_own_instance(c, id, "register instance") != 0)
		return -1;
	if (fleet_register(a->fleet, id, &inst, &err) != 0)
		return api_fail(c, &err);
	snprintf(own, sizeof own, "i-%lld", (long long)id);
	workers_seen(a->workers, name ? name : own, id, inst.gpus, now, 1);
	request_reply(c->req, 200, register_reply(a, "instance", instance_to_json(&inst, now)));
	return 0;
}

const struct field api_leave_fields[] = {
	{"instance", F_INT, 1, INT64_MAX}, {"reason", F_STRING, 0, 200}, {NULL, 0, 0, 0}};

/* The worker of an instance leaves by itself: see fleet_leave(). A lease
 * it still holds, as serve sees it, ends now and its job is queued again. */
int api_leave(struct api_call *c)
{
	struct api *a = c->api;
	struct instance inst;
	struct ebb_error err;
	int64_t id;

	if (api_body(c, api_leave_fields) != 0)
		return -1;
	if (!(id = json_get_int(c->body, "instance", 0))) {
		error_set(&err, 400, "missing_field", "instance", "instance: required, the instance id");
		return api_fail(c, &err);
	}
	if (api_own_instance(c, id, "leave for instance") != 0)
		return -1;
	if (fleet_get(a->fleet, id, &inst, &err) != 0)
		return api_fail(c, &err);
	if (inst.state != INST_TERMINATED && inst.job_id &&
	    (queue_expire_instance(a->queue, id, &err) != 0 || queue_process_due(a->queue, &err) != 0))
		return api_fail(c, &err);
	if (fleet_leave(a->fleet, id, json_get_str(c->body, "reason", "no reason given"), &inst, &err) != 0)
		return api_fail(c, &err);
	request_reply(c->req, 200, instance_to_json(&inst, clock_now(a->clock)));
	return 0;
}

json_t *api_instance_json(const struct api *a, const struct instance *inst, int64_t now_ms)
{
	char name[32];
	json_t *row = instance_to_json(inst, now_ms), *handlers;

	snprintf(name, sizeof name, "i-%lld", (long long)inst->id);
	handlers = workers_handlers_json(workers_find(a->workers, name));
	if (!row || !handlers || json_object_set_new(row, "handlers", handlers) != 0) {
		json_decref(row);
		return NULL;
	}
	return row;
}

struct fleet_list {
	const struct api *api;
	json_t *instances;
	int64_t now_ms;
	int n;
	int64_t last_id;
};

static int add_instance(void *arg, const struct instance *inst)
{
	struct fleet_list *l = arg;

	if (json_array_append_new(l->instances, api_instance_json(l->api, inst, l->now_ms)) != 0)
		return -1;
	l->n++;
	l->last_id = inst->id;
	return 0;
}

/* The live fleet whole (max_instances bounds it), or with all=1 a page
 * of every instance that ever was; *next the page's next_after (null for
 * the live fleet). 0, 1 after a reply of a bad query, -1 on a store
 * error. */
static int list_instances(struct api_call *c, struct fleet_list *l, json_t **next)
{
	const char *all = request_query(c->req, "all");
	int64_t after;
	int limit;
	struct ebb_error err;

	*next = json_null();
	if (!all || strcmp(all, "1") != 0) {
		if (!request_query(c->req, "after") && !request_query(c->req, "limit"))
			return store_instance_list(c->api->store, add_instance, l) != 0 ? -1 : 0;
		error_set(&err, 400, "bad_value", request_query(c->req, "after") ? "after" : "limit",
			  "after, limit: they page all=1, every instance that ever was; the live fleet comes whole");
		api_fail(c, &err);
		return 1;
	}
	if (api_query_page(c, 100, &after, &limit) != 0)
		return 1;
	if (store_instance_page(c->api->store, after, limit, add_instance, l) != 0)
		return -1;
	*next = api_next_after(l->n, limit, l->last_id);
	return 0;
}

/* The idle timeout in force for each offer, and why; NULL on a store
 * error or without memory. */
static json_t *idle_timeouts_json(struct scaler *sc)
{
	int64_t ms[64], surplus_ms[64];
	char (*why)[PLAN_IDLE_WHY] = mem_alloc(64 * sizeof *why), error[300];
	const struct offer *offers;
	json_t *list = NULL;
	int n;

	if (why && scaler_idle_timeouts(sc, &offers, &n, ms, surplus_ms, why, error, sizeof error) == 0) {
		list = json_array();
		for (int k = 0; k < n; k++)
			json_array_append_new(list, json_pack("{s:s, s:f, s:f, s:s}", "offer", offers[k].name,
							      "idle_timeout_s", (double)ms[k] / 1000.0,
							      "idle_surplus_timeout_s", (double)surplus_ms[k] / 1000.0,
							      "why", why[k]));
	}
	free(why);
	return list;
}

int api_fleet(struct api_call *c)
{
	struct api *a = c->api;
	struct fleet_list l = {.api = a, .instances = json_array(), .now_ms = clock_now(a->clock)};
	json_t *reply, *idle = NULL, *next = NULL;
	int64_t instance_ms = 0, job_ms = 0;
	int rc = list_instances(c, &l, &next);

	if (rc != 0 || store_usage(a->store, l.now_ms, &instance_ms, &job_ms) != 0 ||
	    (a->scaler && !(idle = idle_timeouts_json(a->scaler)))) {
		json_decref(l.instances);
		json_decref(next);
		return rc > 0 ? -1 : api_store_failed(c);
	}
	reply = json_pack("{s:o, s:o, s:o, s:{s:I, s:I, s:f}, s:f, s:f}", "instances", l.instances, "next_after", next,
			  "idle_timeouts", idle ? idle : json_array(), "limits",
			  "max_instances", (json_int_t)a->cfg->max_instances, "max_gpus",
			  (json_int_t)a->cfg->max_gpus, "max_spend_per_hour", a->cfg->max_spend_per_hour,
			  "instance_seconds", (double)instance_ms / 1000.0, "job_seconds", (double)job_ms / 1000.0);
	request_reply(c->req, 200, reply);
	return 0;
}

struct decision_list {
	json_t *decisions;
	int n;
	int64_t last_id;
};

static int add_decision(void *arg, const struct decision *d)
{
	struct decision_list *l = arg;

	l->n++;
	l->last_id = d->id;
	json_array_append_new(l->decisions, json_pack("{s:I, s:f, s:s, s:s, s:i, s:o, s:s}", "id", (json_int_t)d->id,
					      "at", (double)d->at_ms / 1000.0, "kind", d->kind, "offer",
					      d->offer, "count", d->count, "instance",
					      d->instance ? json_integer(d->instance) : json_null(),
					      "reason", d->reason));
	return 0;
}

/* Newest first: a page after another is of the decisions before it,
 * below the id it ended with. */
int api_decisions(struct api_call *c)
{
	struct decision_list l = {0};
	int64_t after;
	int limit;

	if (api_query_page(c, 20, &after, &limit) != 0)
		return -1;
	l.decisions = json_array();
	if (store_decision_list(c->api->store, after ? after : INT64_MAX, limit, add_decision, &l) != 0) {
		json_decref(l.decisions);
		return api_store_failed(c);
	}
	request_reply(c->req, 200, json_pack("{s:o, s:o}", "decisions", l.decisions, "next_after",
					     api_next_after(l.n, limit, l.last_id)));
	return 0;
}

int api_drain(struct api_call *c)
{
	struct instance inst;
	struct ebb_error err;

	if (api_body(c, api_no_fields) != 0)
		return -1;
	if (fleet_drain(c->api->fleet, c->id, "drained by request", &inst, &err) != 0)
		return api_fail(c, &err);
	request_reply(c->req, 200, instance_to_json(&inst, clock_now(c->api->clock)));
	return 0;
}

/* `ebb reclaim ID`: a spot reclaim of a local instance now, for tests and
 * demos. Its notice is served at once; the provider kills it [local]
 * reclaim_notice later. */
int api_reclaim(struct api_call *c)
{
	struct api *a = c->api;
	struct instance inst;
	struct ebb_error err;

	if (api_body(c, api_no_fields) != 0)
		return -1;
	if (!a->leads) {
		error_set(&err, 409, "not_supported", NULL,
			  "this serve follows: the serve that leads runs the provider (GET /healthz names it)");
		return api_fail(c, &err);
	}
	if (!provider_can_reclaim(a->provider)) {
		error_set(&err, 409, "not_supported", NULL,
			  "reclaims are simulated by the local provider only ([provider] kind = local), not by %s",
			  a->provider ? provider_name(a->provider) : "kind = none");
		return api_fail(c, &err);
	}
	if (reclaim_notice(a->fleet, c->id, &inst, &err) != 0)
		return api_fail(c, &err);
	/* A worker already gone is reclaimed already. */
	if (provider_reclaim(a->provider, &inst) != 0)
		log_info("spot reclaim: its worker is gone already", "instance=%lld", (long long)inst.id);
	request_reply(c->req, 200, instance_to_json(&inst, clock_now(a->clock)));
	return 0;
}

/* The reclaim notice of instance ID, as a cloud's metadata service serves
 * it: 404 until a reclaim is scheduled, then 200. */
int api_notice(struct api_call *c)
{
	struct api *a = c->api;
	struct instance inst;
	struct ebb_error err;

	if (api_own_instance(c, c->id, "read the notice of instance") != 0)
		return -1;
	if (fleet_get(a->fleet, c->id, &inst, &err) != 0)
		return api_fail(c, &err);
	if (!inst.reclaim_at_ms) {
		error_set(&err, 404, "not_found", NULL, "no reclaim notice for instance %lld", (long long)c->id);
		return api_fail(c, &err);
	}
	request_reply(c->req, 200, reclaim_notice_json(&inst, provider_notice_ms(a->provider), a->clock));
	return 0;
}
