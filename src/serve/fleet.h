/* The fleet: instance records and their transitions, each with a reason,
 * kept in the store (history by trigger in instance_events) and costed by
 * the ledger at every step. It follows the queue: a job leased on an
 * instance makes it busy, the end of the last lease on it idle again (an
 * instance of several GPUs runs several jobs at once), and a run stopped
 * from outside drains it (fleet_on_job, a queue subscriber).
 * Every call is made inside a batch. */
#ifndef EBB_FLEET_H
#define EBB_FLEET_H

#include "common/clock.h"
#include "common/error.h"
#include "common/instance.h"
#include "serve/ledger.h"
#include "serve/queue.h"

struct fleet {
	struct store *store;
	const struct clock *clock;
	struct ledger *ledger;
};

void fleet_init(struct fleet *f, struct store *st, const struct clock *clock, struct ledger *l);

/* Moves inst to state with reason and writes it: 0, or -1 on a store
 * error (store_error()). */
int fleet_set_state(struct fleet *f, struct instance *inst, enum instance_state state,
		    const char *reason) STORE_CHECK;
/* The instance: 0, or -1 with a 404 or 500 in err. */
int fleet_get(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err);
/* A worker started on its instance: idle from now. */
int fleet_register(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err);
/* The worker on instance id asks for a job: it runs those of running[0..
 * nrunning) now (several at once on an instance of several GPUs), none
 * else. 1 when it may take one, 0 when its instance drains or is gone, -1
 * on a store error (in err). Instance 0 (a worker ebb did not launch)
 * may. held[0..*nheld) gets the jobs still leased on the instance that
 * it does not run (up to INSTANCE_GPUS_MAX): their lease replies were
 * lost. */
int fleet_worker_asks(struct fleet *f, int64_t id, const int64_t *running, int nrunning, int64_t *held, int *nheld,
		      struct ebb_error *err);
/* May the worker on instance id still take a job (it asked before, and
 * waits)? 1, 0 when its instance drains or is gone, -1 on a store error
 * (store_error()). Instance 0 may. */
int fleet_may_lease(struct fleet *f, int64_t id);
int fleet_drain(struct fleet *f, int64_t id, const char *reason, struct instance *out,
		struct ebb_error *err);
/* The worker of instance id leaves by itself (idle, reclaimed), and its
 * machine powers off: the instance is gone from now, without waiting for
 * the provider's next list (which terminates it if it still runs). Its
 * job, if serve thinks it runs one, must have its lease ended first. */
int fleet_leave(struct fleet *f, int64_t id, const char *why, struct instance *out, struct ebb_error *err);
/* The instance is gone and its worker lost with it: terminated with
 * why, and counted among its offer's workers lost (an alert reads them). */
int fleet_lost(struct fleet *f, struct instance *inst, const char *why) STORE_CHECK;
/* The queue's subscriber (arg: the fleet). */
int fleet_on_job(void *arg, const struct job_change *c);

#endif
