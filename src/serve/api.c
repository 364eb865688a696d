/* Routing and authentication of the HTTP API (see api.h). */
#include "serve/api_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/secret.h"
#include "serve/alerts.h"
#include "serve/scaler.h"
#include "store/store.h"
#include "common/units.h"

enum { OPEN = 0, ADMIN = 1 << ROLE_ADMIN, SUBMIT = 1 << ROLE_SUBMIT, WORKER = 1 << ROLE_WORKER };

static int api_healthz(struct api_call *c);
static int api_clock(struct api_call *c);

struct route {
	const char *method;
	const char *pattern; /* "{id}" matches a job id */
	int roles;           /* besides admin, who may call it; OPEN: anyone */
	int (*fn)(struct api_call *);
	int batch; /* the body may be an array of objects, one per item */
};

static const struct route routes[] = {
	{"GET", "/healthz", OPEN, api_healthz},
	{"GET", "/", OPEN, api_page},
	{"GET", "/dashboard.js", OPEN, api_page},
	{"GET", "/jobs.js", OPEN, api_page},
	{"GET", "/dashboard.css", OPEN, api_page},
	{"GET", "/favicon.svg", OPEN, api_page},
	{"GET", "/metrics", SUBMIT | WORKER, api_metrics},
	{"POST", "/v1/jobs", SUBMIT, api_submit, 1},
	{"GET", "/v1/jobs", SUBMIT, api_list},
	{"GET", "/v1/jobs/{id}", SUBMIT | WORKER, api_get},
	{"GET", "/v1/history", SUBMIT, api_history},
	{"POST", "/v1/jobs/{id}/cancel", SUBMIT, api_cancel},
	{"POST", "/v1/jobs/{id}/requeue", SUBMIT, api_requeue},
	{"POST", "/v1/jobs/{id}/heartbeat", WORKER, api_heartbeat},
	{"GET", "/v1/jobs/{id}/watch", WORKER, api_watch},
	{"POST", "/v1/jobs/{id}/checkpoint", WORKER, api_checkpoint},
	{"POST", "/v1/jobs/{id}/complete", WORKER, api_complete},
	{"POST", "/v1/jobs/{id}/fail", WORKER, api_fail_job},
	{"POST", "/v1/jobs/{id}/interrupt", WORKER, api_interrupt},
	{"POST", "/v1/jobs/{id}/logs", WORKER, api_logs_ship},
	{"GET", "/v1/jobs/{id}/logs", SUBMIT | WORKER, api_logs_read},
	{"POST", "/v1/lease", WORKER, api_lease},
	{"GET", "/v1/stats", SUBMIT | WORKER, api_stats},
	{"POST", "/v1/workers/register", WORKER, api_register},
	{"POST", "/v1/workers/leave", WORKER, api_leave},
	{"GET", "/v1/workers", SUBMIT, api_workers},
	{"GET", "/v1/fleet", SUBMIT | WORKER, api_fleet},
	{"GET", "/v1/decisions", SUBMIT, api_decisions},
	{"GET", "/v1/report", SUBMIT, api_report},
	{"GET", "/v1/teams", SUBMIT, api_teams},
	{"POST", "/v1/teams/budget", ADMIN, api_team_budget},
	{"GET", "/v1/offers", SUBMIT, api_offers},
	{"GET", "/v1/alerts", SUBMIT | WORKER, api_alerts},
	{"GET", "/v1/scale", SUBMIT | WORKER, api_scale},
	{"GET", "/v1/dashboard", SUBMIT | WORKER, api_dashboard},
	{"POST", "/v1/fleet/{id}/drain", ADMIN, api_drain},
	{"POST", "/v1/fleet/{id}/reclaim", ADMIN, api_reclaim},
	{"GET", "/v1/fleet/{id}/notice", WORKER, api_notice},
	{"POST", "/v1/admin/clock", ADMIN, api_clock},
	{"POST", "/v1/admin/tuning", ADMIN, api_tuning_publish},
	{"GET", "/v1/store/check", ADMIN, api_store_check},
	{NULL, NULL, 0, NULL},
};

int api_fail(struct api_call *c, const struct ebb_error *e)
{
	request_reply(c->req, e->status, error_to_json(e));
	return -1;
}

int api_check_own_instance(const struct api_call *c, int64_t instance, const char *what, struct ebb_error *err)
{
	if (!c->instance || instance == c->instance)
		return 0;
	return error_set(err, 403, "forbidden", NULL, "the token of instance %lld may not %s %lld",
			 (long long)c->instance, what, (long long)instance);
}

int api_own_instance(struct api_call *c, int64_t instance, const char *what)
{
	struct ebb_error err;

	return api_check_own_instance(c, instance, what, &err) == 0 ? 0 : api_fail(c, &err);
}

int api_store_failed(struct api_call *c)
{
	struct ebb_error err;
	char quoted[1100];

	store_failure(c->api->store, &err);
	/* The client is told; whoever runs serve must be able to find why. */
	log_warn("request failed in the store", "status=%d error=%s", err.status,
		 log_quote(quoted, sizeof quoted, err.message));
	return api_fail(c, &err);
}

void api_reply_job(struct api_call *c, const struct job *job, const char *key, const char *value)
{
	char *text = job_json_text(job);
	json_t *body;

	if (!key || !text || !(body = json_loads(text, 0, NULL))) {
		request_reply_json(c->req, 200, text);
		return;
	}
	free(text);
	json_object_set_new(body, key, json_string(value));
	request_reply(c->req, 200, body);
}

const struct field api_no_fields[] = {{NULL, 0, 0, 0}};

int api_body(struct api_call *c, const struct field *fields)
{
	struct ebb_error err;

	if (json_check_fields(c->body, fields, &err) != 0)
		return api_fail(c, &err);
	return 0;
}

int api_query_int(struct api_call *c, const char *name, int64_t min, int64_t max, int64_t def,
		  int64_t *out)
{
	const char *v = request_query(c->req, name);
	struct ebb_error err;

	*out = def;
	if (!v)
		return 0;
	if (parse_int64(v, out) != 0 || *out < min || *out > max) {
		error_set(&err, 400, "out_of_range", name, "%s: expected an integer from %lld to %lld", name,
			  (long long)min, (long long)max);
		return api_fail(c, &err);
	}
	return 0;
}

int api_query_wait(struct api_call *c, int64_t max_ms, int64_t *out_ms)
{
	const char *v = request_query(c->req, "wait");
	struct ebb_error err;
	char max[32];
	int64_t s;

	*out_ms = 0;
	if (!v)
		return 0;
	if (parse_int64(v, &s) == 0 && s >= 0 && s <= max_ms / 1000)
		*out_ms = s * 1000;
	else if (parse_duration_ms(v, out_ms) != 0 || *out_ms > max_ms)
		*out_ms = -1;
	if (*out_ms >= 0)
		return 0;
	format_duration(max, sizeof max, max_ms);
	error_set(&err, 400, "out_of_range", "wait",
		  "wait: expected seconds (30) or a duration (30s, 500ms, 1m) from 0 to %s, got '%.40s'", max, v);
	return api_fail(c, &err);
}

int api_query_page(struct api_call *c, int64_t def, int64_t *after, int *limit)
{
	int64_t n;

	if (api_query_int(c, "after", 0, INT64_MAX, 0, after) != 0 || api_query_int(c, "limit", 1, 1000, def, &n) != 0)
		return -1;
	*limit = (int)n;
	return 0;
}

json_t *api_next_after(int n, int limit, int64_t last_id)
{
	return n == limit ? json_integer(last_id) : json_null();
}

/* Matches path against pattern, reading {id} into *id. 1 on a match. */
static int match(const char *pattern, const char *path, int64_t *id)
{
	while (*pattern && *path) {
		if (strncmp(pattern, "{id}", 4) == 0) {
			char *end;
			long long v;
			/* Digits only: strtoll would skip spaces and take a sign,
			 * and clamp an id past 2^63-1 to the largest one. */
			if (!isdigit((unsigned char)path[0]))
				return 0;
			errno = 0;
			v = strtoll(path, &end, 10);
			if (errno || v <= 0 || (*end && *end != '/'))
				return 0;
			*id = v;
			pattern += 4;
			path = end;
			continue;
		}
		if (*pattern++ != *path++)
			return 0;
	}
	return *pattern == '\0' && *path == '\0';
}

/* The worker token a launched instance got: worker calls only, for that
 * instance only, while it lives. */
static int instance_token(struct api_call *c, const struct route *r, const char *token, struct ebb_error *err)
{
	struct instance inst;
	int rc = strlen(token) == SECRET_TOKEN_LEN ? store_instance_by_token(c->api->store, token, &inst)
						    : STORE_NOT_FOUND;

	if (rc < 0)
		return store_failure(c->api->store, err);
	if (rc == STORE_NOT_FOUND)
		return error_set(err, 401, "unauthorized", NULL, "unknown token");
	if (inst.state == INST_TERMINATED)
		return error_set(err, 401, "unauthorized", NULL, "the token of instance %lld, which is terminated",
				 (long long)inst.id);
	if (!(r->roles & WORKER))
		return error_set(err, 403, "forbidden", NULL, "the token of instance %lld (role worker) may not call %s %s",
				 (long long)inst.id, r->method, r->pattern);
	c->instance = inst.id;
	return 0;
}

static int authenticate(struct api_call *c, const struct route *r, struct ebb_error *err)
{
	const struct config *cfg = c->api->cfg;
	const char *auth = request_header(c->req, "Authorization");

	if (r->roles == OPEN || cfg->ntokens == 0)
		return 0;
	if (!auth || strncmp(auth, "Bearer ", 7) != 0)
		return error_set(err, 401, "unauthorized", NULL,
				 "missing bearer token (Authorization: Bearer TOKEN, or EBB_TOKEN for the CLI)");
	for (size_t i = 0; i < cfg->ntokens; i++) {
		if (secret_equal(cfg->tokens[i].secret, auth + 7))
			c->token = &cfg->tokens[i];
	}
	if (!c->token)
		return instance_token(c, r, auth + 7, err);
	if (c->token->role != ROLE_ADMIN && !(r->roles & (1 << c->token->role)))
		return error_set(err, 403, "forbidden", NULL, "token '%s' (role %s) may not call %s %s",
				 c->token->name, c->token->role == ROLE_SUBMIT ? "submit" : "worker",
				 r->method, r->pattern);
	if (c->token->role == ROLE_SUBMIT)
		c->team = c->token->team;
	return 0;
}

/* The route of method and path, with its {id} in *id; NULL when there
 * is none, with *path_known set when the path has a route for another
 * method. */
static const struct route *find_route(const char *method, const char *path, int64_t *id, int *path_known)
{
	*path_known = 0;
	for (const struct route *r = routes; r->method; r++) {
		if (match(r->pattern, path, id)) {
			*path_known = 1;
			if (strcmp(r->method, method) == 0)
				return r;
		}
	}
	return NULL;
}

const char *api_route(const char *method, const char *path, int64_t *id, int *status)
{
	int path_known;
	const struct route *r = find_route(method, path, id, &path_known);

	*status = r ? 200 : path_known ? 405 : 404;
	return r ? r->pattern : NULL;
}

const char *api_route_at(size_t i, const char **method, int *roles)
{
	if (i >= sizeof routes / sizeof *routes - 1)
		return NULL;
	*method = routes[i].method;
	*roles = routes[i].roles;
	return routes[i].pattern;
}

/* Tests only: EBB_TEST_FAIL_ALLOC="METHOD PATH N" makes the Nth
 * allocation through common/mem.h fail while each request of METHOD to
 * PATH is handled, so that the request path's out-of-memory rule (a 500,
 * nothing stored) is tested in every build, the sanitizers' included
 * (tests/integration/test_out_of_memory.c). Read once; unset, nothing. */
static long test_failing_allocation(const char *method, const char *path)
{
	static int read;
	static char route[300];
	static long n;
	const char *env;
	char *space;

	if (!read) {
		read = 1;
		if ((env = getenv("EBB_TEST_FAIL_ALLOC")) && (space = strrchr(env, ' ')) &&
		    (size_t)(space - env) < sizeof route) {
			snprintf(route, sizeof route, "%.*s", (int)(space - env), env);
			n = strtol(space + 1, NULL, 10);
		}
	}
	return n > 0 && strncmp(route, method, strlen(method)) == 0 && route[strlen(method)] == ' ' &&
			       strcmp(route + strlen(method) + 1, path) == 0
		       ? n
		       : 0;
}

static int route(struct api_call *c)
{
	const char *method = request_method(c->req), *path = request_path(c->req);
	const struct route *found;
	struct ebb_error err;
	size_t len;
	int path_known, rc;

	found = find_route(method, path, &c->id, &path_known);
	if (!found) {
		if (path_known)
			error_set(&err, 405, "method_not_allowed", NULL, "%s is not allowed on %s", method, path);
		else
			error_set(&err, 404, "not_found", NULL, "no such path: %s", path);
		return api_fail(c, &err);
	}
	if (authenticate(c, found, &err) != 0)
		return api_fail(c, &err);
	if (request_body_too_large(c->req)) {
		error_set(&err, 413, "too_large", NULL, "request body over %lld bytes ([server] max_body)",
			  (long long)c->api->cfg->max_body);
		return api_fail(c, &err);
	}
	/* Only a POST has fields; a body that comes with a GET is ignored. */
	if (strcmp(method, "POST") == 0) {
		const char *body = request_body(c->req, &len);
		if ((found->batch ? json_parse_object_or_array(body, len, &c->body, &err)
				  : json_parse_object(body, len, &c->body, &err)) != 0)
			return api_fail(c, &err);
	}
	mem_fail_after(test_failing_allocation(method, path));
	rc = found->fn(c);
	mem_fail_after(0);
	return rc;
}

void api_handle(struct api *api, struct request *req)
{
	struct api_call c = {.api = api, .req = req};
	int rc;

	if (batch_begin(api->batch) != 0) {
		api_store_failed(&c);
		return;
	}
	rc = route(&c);
	batch_end(api->batch, rc == 0);
	json_decref(c.body);
}

static int api_healthz(struct api_call *c)
{
	/* Whether calls need a token: the dashboard asks for one before it
	 * calls, rather than after a 401. A serve that answers leads, or
	 * follows one that does (docs/HA.md); a standby does not listen. */
	char leader[300];
	int known = 1;

	if (c->api->leads)
		snprintf(leader, sizeof leader, "%s", c->api->serve_id);
	else
		known = store_leader(c->api->store, leader, sizeof leader) == 0;
	request_reply(c->req, 200, json_pack("{s:s, s:s, s:s, s:s?, s:s, s:b}", "status", "ok", "role",
					     c->api->leads ? "leader" : "follower", "serve", c->api->serve_id,
					     "leader", known ? leader : NULL, "store", store_kind(c->api->store),
					     "token_required", c->api->cfg->ntokens > 0));
	return 0;
}

/* Only with `ebb serve --test-clock`: tests move time instead of sleeping. */
const struct field api_clock_fields[] = {{"advance_ms", F_INT, 0, 10LL * 365 * 86400 * 1000}, {0}};

static int api_clock(struct api_call *c)
{
	struct ebb_error err;

	if (!c->api->test_clock) {
		error_set(&err, 404, "not_found", NULL, "the clock is real (start serve with --test-clock)");
		return api_fail(c, &err);
	}
	if (api_body(c, api_clock_fields) != 0)
		return -1;
	clock_advance(c->api->clock, json_get_int(c->body, "advance_ms", 0));
	if (queue_process_due(c->api->queue, &err) != 0)
		return api_fail(c, &err);
	/* Idle timeouts and the warm floor run on this clock, and no store
	 * change tells the scaler or the alerts that it moved: they look at
	 * the new time, as the simulator would. */
	scaler_wake(c->api->scaler);
	alerts_wake(c->api->alerts);
	request_reply(c->req, 200, json_pack("{s:f}", "now", (double)clock_now(c->api->clock) / 1000.0));
	return 0;
}
