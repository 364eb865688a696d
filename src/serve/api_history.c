/* GET /v1/history: the jobs that succeeded, as rows of the simulator's
 * trace (src/sim/trace.c), for `ebb trace export` and `ebb tune --history`
 * (docs/SIMULATION.md, "Tuning on ebb's own history").
 *
 * A row's duration_s is on the reference GPU, as a trace's are: the run
 * that succeeded (finished_at - started_at) times the configured speed of
 * the offer its instance was launched on; 1 for a worker ebb did not
 * launch, or an offer no longer configured. Only succeeded jobs: a failed
 * or dead job's runs are retries of a fault, which a trace row (one run)
 * cannot say. Pages go by id (after, next_after), as GET /v1/jobs; a
 * submit token's team sees its own jobs only. */
#include <stdio.h>
#include <stdlib.h>

#include "serve/api_internal.h"
#include "common/mem.h"
#include "store/store.h"

/* What a row needs of a job: the walk's job lives only in its callback. */
struct history_row {
	int64_t id, created_ms, submit_ms, started_ms, finished_ms, instance, est_s;
	int gpus, priority;
	double cost;
	char lane[CONF_NAME_MAX + 1], type[CONF_NAME_MAX + 1], team[CONF_NAME_MAX + 1];
};

struct history_page {
	struct history_row *rows;
	int n;
};

static int add_row(void *arg, const struct job *job)
{
	struct history_page *p = arg;
	struct history_row *r = &p->rows[p->n++];

	*r = (struct history_row){.id = job->id, .created_ms = job->created_ms, .started_ms = job->started_ms, .finished_ms = job->finished_ms,
				  .instance = job->instance, .est_s = job->est_s, .gpus = job->gpus,
				  .priority = job->priority, .cost = job->cost};
	/* A delayed job waits from its run_at, as serve counts its wait. */
	r->submit_ms = job->run_at_ms > job->created_ms ? job->run_at_ms : job->created_ms;
	snprintf(r->lane, sizeof r->lane, "%s", job->lane);
	snprintf(r->type, sizeof r->type, "%s", job->type);
	snprintf(r->team, sizeof r->team, "%s", job->team);
	return 0;
}

/* The offer the row's run had, and its speed: NULL and 1 when unknown.
 * -1 on a store error. */
static int run_offer(struct api_call *c, const struct history_row *r, struct instance *inst, double *speed)
{
	int rc, k;

	*speed = 1;
	inst->offer[0] = '\0';
	if (!r->instance)
		return 0;
	if ((rc = store_instance_get(c->api->store, r->instance, inst)) < 0)
		return -1;
	if (rc == STORE_NOT_FOUND) {
		inst->offer[0] = '\0';
		return 0;
	}
	if ((k = offer_index(c->api->offers, c->api->noffers, inst->offer)) >= 0 && c->api->offers[k].speed > 0)
		*speed = c->api->offers[k].speed;
	return 0;
}

static int write_rows(struct api_call *c, const struct history_page *p, struct jsonout *out)
{
	struct instance inst;
	double speed = 1;
	int64_t looked_up = -1;

	for (int i = 0; i < p->n; i++) {
		const struct history_row *r = &p->rows[i];
		int64_t run_ms = r->finished_ms - r->started_ms;
		/* Jobs in a row mostly ran on one instance: one read for them. */
		if (r->instance != looked_up && run_offer(c, r, &inst, &speed) != 0)
			return -1;
		looked_up = r->instance;
		if (run_ms < 0)
			run_ms = 0;
		jsonout_open(out, NULL, '{');
		jsonout_int(out, "id", r->id);
		jsonout_real(out, "submit_time_s", (double)r->submit_ms / 1000.0);
		jsonout_real(out, "duration_s", (double)run_ms / 1000.0 * speed);
		jsonout_int(out, "gpus", r->gpus);
		jsonout_int(out, "priority", r->priority);
		jsonout_string(out, "lane", r->lane);
		jsonout_string(out, "job_class", r->type);
		if (r->est_s > 0)
			jsonout_int(out, "est_s", r->est_s);
		else
			jsonout_null(out, "est_s");
		jsonout_string(out, "team", r->team);
		jsonout_string(out, "offer", inst.offer[0] ? inst.offer : NULL);
		jsonout_real(out, "speed", speed);
		jsonout_real(out, "run_s", (double)run_ms / 1000.0);
		jsonout_real(out, "wait_s", (double)(r->started_ms > r->submit_ms ? r->started_ms - r->submit_ms : 0) /
						    1000.0);
		jsonout_seconds(out, "created_at", r->created_ms);
		jsonout_seconds(out, "finished_at", r->finished_ms);
		jsonout_real(out, "cost", r->cost);
		jsonout_close(out, '}');
	}
	return 0;
}

int api_history(struct api_call *c)
{
	struct job_filter f = {.state = JOB_SUCCEEDED};
	struct history_page p = {0};
	struct jsonout out = {0};
	struct ebb_error err;
	int64_t since, until;

	f.team = c->team ? c->team : request_query(c->req, "team");
	if (api_query_int(c, "since", 0, INT64_MAX / 1000, 0, &since) != 0 ||
	    api_query_int(c, "until", 0, INT64_MAX / 1000, 0, &until) != 0 ||
	    api_query_page(c, 1000, &f.after_id, &f.limit) != 0)
		return -1;
	if (until && until <= since) {
		error_set(&err, 400, "bad_value", "until", "until (%lld) is not after since (%lld)", (long long)until,
			  (long long)since);
		return api_fail(c, &err);
	}
	f.finished_from_ms = since * 1000;
	f.finished_to_ms = until * 1000;
	if (!(p.rows = mem_calloc((size_t)f.limit, sizeof *p.rows))) {
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	if (store_job_list(c->api->store, &f, add_row, &p) != 0) {
		free(p.rows);
		return api_store_failed(c);
	}
	jsonout_open(&out, NULL, '{');
	jsonout_open(&out, "jobs", '[');
	if (write_rows(c, &p, &out) != 0) {
		free(out.text);
		free(p.rows);
		return api_store_failed(c);
	}
	jsonout_close(&out, ']');
	jsonout_string(&out, "team", f.team);
	if (p.n == f.limit)
		jsonout_int(&out, "next_after", p.rows[p.n - 1].id);
	else
		jsonout_null(&out, "next_after");
	jsonout_close(&out, '}');
	free(p.rows);
	request_reply_json(c->req, 200, jsonout_finish(&out));
	return 0;
}
