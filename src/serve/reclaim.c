/* Serve's side of a spot reclaim (see reclaim.h). */
#include "serve/reclaim.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve/fleet.h"
#include "common/log.h"
#include "serve/scaler.h"

int reclaim_notice(struct server *s, int64_t id, struct instance *out, struct ebb_error *err)
{
	int rc = s->store->ops->instance_get(s->store, id, out);

	if (rc < 0)
		return error_set(err, 500, "store", NULL, "store: %s", s->store->errmsg);
	if (rc == STORE_NOT_FOUND)
		return error_set(err, 404, "not_found", NULL, "no instance %lld", (long long)id);
	if (out->state == INST_TERMINATED)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is already terminated: %s",
				 (long long)id, out->reason);
	if (out->reclaim_at_ms)
		return 0;
	out->reclaim_at_ms = clock_now(&s->clock);
	log_info("spot reclaim notice", "instance=%lld job=%lld", (long long)id, (long long)out->job_id);
	/* Draining: no new job, no longer capacity the scaler counts on, and
	 * terminated once its worker has interrupted its job. */
	if (fleet_set_state(s, out, INST_DRAINING, "spot reclaim notice: it is going away") != 0)
		return error_set(err, 500, "store", NULL, "store: %s", s->store->errmsg);
	scaler_poke(s->scaler);
	return 0;
}

void reclaim_from_provider(void *arg, int64_t id)
{
	struct server *s = arg;
	struct instance inst;
	struct ebb_error err;

	if (server_begin_request(s) != 0)
		return;
	server_end_request(s, reclaim_notice(s, id, &inst, &err) == 0);
	httpd_flush(s->httpd);
}

json_t *reclaim_notice_json(const struct server *s, const struct instance *inst)
{
	struct timespec ts;
	struct tm tm;
	char when[40];
	time_t t;
	/* serve's clock may run ahead of the wall clock (--test-clock): the
	 * notice says when the worker's own clock will see the kill. */
	int64_t wall_ms, kill_ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	wall_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	kill_ms = inst->reclaim_at_ms + s->cfg->local_reclaim_notice_ms - (clock_now(&s->clock) - wall_ms);
	t = (time_t)(kill_ms / 1000);
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof when - strlen(when), ".%03dZ", (int)(kill_ms % 1000));
	return json_pack("{s:s, s:s, s:I}", "action", "terminate", "time", when, "instance",
			 (json_int_t)inst->id);
}
