/* The API's insides, shared by its files (api.c: routing and tokens;
 * api_*.c: the handlers): the call a handler gets, the replies and checks
 * they share, and each route's handler. Only src/serve/api*.c include it;
 * api.h is what serve's wiring calls. */
#ifndef EBB_API_INTERNAL_H
#define EBB_API_INTERNAL_H

#include "serve/api.h"

struct api_call {
	struct api *api;
	struct request *req;
	/* The caller's token; NULL when no token is configured (open API),
	 * or when the caller is an instance's worker with its own token. */
	const struct token_conf *token;
	/* The instance whose own token the caller holds; 0 otherwise. */
	int64_t instance;
	/* Jobs the caller may see: its team, or NULL for all. */
	const char *team;
	int64_t id; /* the {id} of the path */
	json_t *body;
};

/* Replies with the error and returns -1, for `return api_fail(c, &err)`. */
int api_fail(struct api_call *c, const struct ebb_error *e);
/* Replies with the store's last failure (store_failure()) and returns -1. */
int api_store_failed(struct api_call *c);
/* 200 with the job, and the member key: value when key is not NULL. */
void api_reply_job(struct api_call *c, const struct job *job, const char *key, const char *value);
/* A caller with an instance's own token acts for that instance alone:
 * 0 when instance is its own (or the caller holds no instance token),
 * else replies 403 and returns -1. what names the call for the message. */
int api_own_instance(struct api_call *c, int64_t instance, const char *what);
/* The same check, with the error in err instead of a reply. */
/* The job c->id as c's token may read it (its team's; an instance's
 * token, a job leased on it): 0, or -1 with the error replied. */
int api_job_read(struct api_call *c, struct job *job);
int api_check_own_instance(const struct api_call *c, int64_t instance, const char *what, struct ebb_error *err);
/* Checks the body against fields; on error replies and returns -1. */
int api_body(struct api_call *c, const struct field *fields);
/* The fields of the endpoints that take none: any field is unknown. */
extern const struct field api_no_fields[];
/* Each endpoint's body fields, which its handler checks with api_body. */
extern const struct field api_submit_fields[], api_lease_fields[], api_heartbeat_fields[],
	api_checkpoint_fields[], api_complete_fields[], api_fail_fields[], api_interrupt_fields[],
	api_register_fields[], api_leave_fields[], api_clock_fields[], api_team_budget_fields[],
	api_tuning_fields[];
/* The route pattern ("/v1/jobs/{id}/cancel") for method and path, with
 * its {id} in *id and *status 200; or NULL with *status 404 (no such
 * path) or 405 (the path has routes, not for method). */
const char *api_route(const char *method, const char *path, int64_t *id, int *status);
/* Route i of the table, from 0: its pattern, its method in *method and
 * in *roles who may call it besides admin (1 << ROLE_* of each role; 0:
 * anyone); NULL past the last. docs/API.md's index is checked against
 * them (tests/unit/test_api_doc.c). */
const char *api_route_at(size_t i, const char **method, int *roles);
/* The query parameter name as an integer in [min, max], def when absent;
 * on error replies and returns -1. */
int api_query_int(struct api_call *c, const char *name, int64_t min, int64_t max, int64_t def,
		  int64_t *out);
/* The query parameter wait, a duration from 0 to max_ms: seconds ("30")
 * or with a unit ("30s", "500ms", "1m"); 0 when absent. On error replies
 * 400 and returns -1. */
int api_query_wait(struct api_call *c, int64_t max_ms, int64_t *out_ms);
/* The longest wait of GET /v1/jobs/ID?wait= for the job's end. */
#define JOB_WAIT_MAX_MS 60000
/* A keyset page's query (docs/API.md, "Pages"): after, where the page
 * before ended (0: the first page), and limit, 1 to 1000, def when
 * absent; on error replies and returns -1. */
int api_query_page(struct api_call *c, int64_t def, int64_t *after, int *limit);
/* A page's next_after: the id of its last row when it is full (the next
 * page may be empty), null when it is not (nothing more). */
json_t *api_next_after(int n, int limit, int64_t last_id);

int api_submit(struct api_call *c);
/* Checks and queues the job body describes, for the caller's team: 0
 * with the job (to job_free) and whether its idempotency key was seen
 * before, or -1 with the error. No reply: the caller gives it. */
int api_submit_job(struct api_call *c, json_t *body, struct job *job, int *existed, struct ebb_error *err);
/* The most jobs one POST /v1/jobs may carry. */
#define API_SUBMIT_ARRAY_MAX 1000
/* POST /v1/jobs with an array of jobs (api_submit_array.c). */
int api_submit_array(struct api_call *c);
int api_list(struct api_call *c);
/* GET /v1/store/check: the tallies against a recount (api_store.c). */
int api_store_check(struct api_call *c);
/* GET /v1/history: succeeded jobs as trace rows (api_history.c). */
int api_history(struct api_call *c);
/* POST /v1/admin/tuning: keeps the comparison `ebb tune --history
 * --publish` sends (api_tuning.c). */
int api_tuning_publish(struct api_call *c);
/* The last one kept, {published_at, comparison}, or JSON null before any
 * (NULL out of memory); 0, or -1 on a store error. */
int api_tuning_last(struct api_call *c, json_t **out);
int api_get(struct api_call *c);
int api_cancel(struct api_call *c);
int api_requeue(struct api_call *c);
int api_workers(struct api_call *c);
int api_stats(struct api_call *c);
int api_teams(struct api_call *c);
int api_team_budget(struct api_call *c);

int api_lease(struct api_call *c);
int api_heartbeat(struct api_call *c);
int api_watch(struct api_call *c);
int api_checkpoint(struct api_call *c);
int api_complete(struct api_call *c);
int api_fail_job(struct api_call *c);
int api_interrupt(struct api_call *c);
/* The jobs' logs (api_logs.c): a worker ships lines, a client reads them. */
extern const struct field api_logs_fields[];
int api_logs_ship(struct api_call *c);
int api_logs_read(struct api_call *c);

int api_register(struct api_call *c);
int api_leave(struct api_call *c);
int api_fleet(struct api_call *c);
/* Instance inst as GET /v1/fleet lists it: instance_to_json() with the
 * resident handlers its worker keeps (also the dashboard's); NULL out of
 * memory. */
json_t *api_instance_json(const struct api *a, const struct instance *inst, int64_t now_ms);
int api_decisions(struct api_call *c);
int api_drain(struct api_call *c);
int api_reclaim(struct api_call *c);
int api_notice(struct api_call *c);

int api_report(struct api_call *c); /* api_report.c */
int api_offers(struct api_call *c);

/* GET /metrics, in the Prometheus text format (api_metrics.c). */
int api_metrics(struct api_call *c);
/* GET /v1/alerts (api_alerts.c). */
int api_alerts(struct api_call *c);
/* GET /v1/scale, plan()'s decision as numbers for KEDA (api_scale.c). */
int api_scale(struct api_call *c);
/* GET /v1/dashboard, what the dashboard shows (api_dashboard.c). */
int api_dashboard(struct api_call *c);
/* GET / and the dashboard's script and style (api_page.c). */
int api_page(struct api_call *c);

#endif
