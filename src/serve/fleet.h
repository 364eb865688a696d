/* The fleet: instance records and their transitions, each with a reason,
 * kept in the store (history by trigger in instance_events). Called by the
 * scaler and by the worker-facing API, always inside a batch. */
#ifndef EBB_FLEET_H
#define EBB_FLEET_H

#include "common/error.h"
#include "common/instance.h"
#include "serve/server.h"

/* Moves inst to state with reason and writes it. */
int fleet_set_state(struct server *s, struct instance *inst, enum instance_state state,
		    const char *reason);
/* A worker started on its instance: idle from now. */
int fleet_register(struct server *s, int64_t id, struct instance *out, struct ebb_error *err);
/* The worker named `worker` runs job_id now (job_id 0: it runs nothing and
 * asks for work). Workers not started by ebb are ignored. */
void fleet_worker_job(struct server *s, const char *worker, int64_t job_id);
/* May the worker take a job? Not when its instance drains or is gone. */
int fleet_worker_may_lease(struct server *s, const char *worker);
int fleet_drain(struct server *s, int64_t id, const char *reason, struct instance *out,
		struct ebb_error *err);

#endif
