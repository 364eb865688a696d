/* Serve's side of a spot reclaim (see reclaim.h). */
#include "serve/reclaim.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

int reclaim_notice(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err)
{
	if (fleet_get(f, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is already terminated: %s",
				 (long long)id, out->reason);
	if (out->reclaim_at_ms)
		return 0;
	out->reclaim_at_ms = clock_now(f->clock);
	log_info("spot reclaim notice", "instance=%lld job=%lld", (long long)id, (long long)out->job_id);
	/* Draining: no new job, no longer capacity the scaler counts on, and
	 * terminated once its worker has interrupted its job. */
	if (fleet_set_state(f, out, INST_DRAINING, "spot reclaim notice: it is going away") != 0)
		return store_failure(f->store, err);
	return 0;
}

json_t *reclaim_notice_json(const struct instance *inst, int64_t notice_ms, const struct clock *clock)
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
	kill_ms = inst->reclaim_at_ms + notice_ms - (clock_now(clock) - wall_ms);
	t = (time_t)(kill_ms / 1000);
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof when - strlen(when), ".%03dZ", (int)(kill_ms % 1000));
	return json_pack("{s:s, s:s, s:I}", "action", "terminate", "time", when, "instance",
			 (json_int_t)inst->id);
}
