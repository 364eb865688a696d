/* The workers serve has heard from: each by its name, with its instance
 * (0: a worker started by hand), its GPUs, when it registered and when it
 * last called (a lease request, a heartbeat). Kept in memory: a serve
 * that starts hears from every live worker within a lease's wait, and an
 * instance's worker is listed from the fleet meanwhile (GET /v1/workers). */
#ifndef EBB_WORKERS_H
#define EBB_WORKERS_H

#include <stdint.h>

#include "common/config.h"

/* The most kept; past it the one heard from least recently is forgotten. */
#define WORKERS_MAX 1024

struct worker_seen {
	char name[CONF_NAME_MAX + 1];
	int64_t instance;
	int gpus;
	int64_t registered_ms, last_ms; /* registered 0: it never did */
};

struct workers {
	struct worker_seen at[WORKERS_MAX];
	int n;
};

/* Worker name called at now_ms; registered: by POST /v1/workers/register.
 * gpus < 0: not said (kept). */
void workers_seen(struct workers *w, const char *name, int64_t instance, int gpus, int64_t now_ms,
		  int registered);
/* The worker of that name, or NULL. */
const struct worker_seen *workers_find(const struct workers *w, const char *name);

#endif
