/* The workers serve has heard from: each by its name, with its instance
 * (0: a worker started by hand), its GPUs, when it registered and when it
 * last called (a lease request, a heartbeat). Kept in memory: a serve
 * that starts hears from every live worker within a lease's wait, and an
 * instance's worker is listed from the fleet meanwhile (GET /v1/workers). */
#ifndef EBB_WORKERS_H
#define EBB_WORKERS_H

#include <jansson.h>
#include <stdint.h>

#include "common/config.h"

/* The most kept; past it the one heard from least recently is forgotten. */
#define WORKERS_MAX 1024
/* The resident handlers a worker tells of, at most (docs/JOBS.md). */
#define WORKER_HANDLERS_MAX 4
/* The leases of a worker's last lease reply kept, at most. */
#define WORKER_GRANTED_MAX 8

/* A resident handler a worker keeps, as its last lease request said. */
struct handler_seen {
	char type[CONF_NAME_MAX + 1];
	int ready;        /* 0: starting, its setup under way */
	int64_t setup_ms; /* from its start to its "ready"; -1 until then */
};

struct worker_seen {
	char name[CONF_NAME_MAX + 1];
	int64_t instance;
	int gpus;
	int64_t registered_ms, last_ms; /* registered 0: it never did */
	struct handler_seen handlers[WORKER_HANDLERS_MAX];
	int nhandlers;
	/* A worker started by hand: the leases its last lease reply carried,
	 * until its next request says which it runs. */
	int64_t granted_id[WORKER_GRANTED_MAX], granted_token[WORKER_GRANTED_MAX];
	int ngranted;
};

struct workers {
	struct worker_seen at[WORKERS_MAX];
	int n;
};

/* Worker name called at now_ms; registered: by POST /v1/workers/register.
 * gpus < 0: not said (kept). */
void workers_seen(struct workers *w, const char *name, int64_t instance, int gpus, int64_t now_ms,
		  int registered);
/* The handlers worker name keeps now, as its lease request said. */
void workers_handlers(struct workers *w, const char *name, const struct handler_seen *h, int n);
/* The handlers of s (NULL: none) as GET /v1/workers and /v1/fleet show
 * them: [{"type", "state", "setup_s"}]; NULL when out of memory. */
json_t *workers_handlers_json(const struct worker_seen *s);
/* For each of the types, the longest setup a worker heard from measured
 * of its handler (out_ms[k]; -1: none yet): the scaler's cold start
 * (policy/classes.h). Workers forgotten or from before serve started are
 * not counted: their types' [type.NAME] setup stands in. */
void workers_setups(const struct workers *w, const struct type_conf *types, size_t ntypes, int64_t *out_ms);
/* A lease reply reached worker name's connection with these leases. A
 * worker that cuts its long-poll short (to offer GPUs a runner freed)
 * may have closed it before reading them: an instance's worker then
 * names the jobs it runs and the fleet takes the others back
 * (fleet_worker_asks); one started by hand has no instance, so its last
 * reply is kept here. More than WORKER_GRANTED_MAX are not kept (their
 * leases run out if lost). */
void workers_granted(struct workers *w, const char *name, const int64_t *id, const int64_t *token, int n);
/* The leases of worker name's last reply that running (the jobs its
 * request names) leaves out, into id and token: how many; forgotten then. */
int workers_not_running(struct workers *w, const char *name, const int64_t *running, int nrunning, int64_t *id,
			int64_t *token);
/* The worker of that name, or NULL. */
const struct worker_seen *workers_find(const struct workers *w, const char *name);

#endif
