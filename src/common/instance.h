/* An instance: one machine (or, with the local provider, one worker
 * process) that ebb launched, as the store keeps it. */
#ifndef EBB_INSTANCE_H
#define EBB_INSTANCE_H

#include <jansson.h>
#include <stdint.h>

#include "common/config.h"
#include "common/offer.h"

/* An instance's life, each step with a reason (fleet.c). */
enum instance_state {
	INST_REQUESTED, /* asked of the provider */
	INST_BOOTING,   /* the provider has it; its worker has not registered */
	INST_IDLE,
	INST_BUSY,
	INST_DRAINING, /* takes no new job; terminated once idle */
	INST_TERMINATED,
	INST_NSTATES
};

/* The reason a worker gives when it leaves (POST /v1/workers/leave)
 * because serve was out of its reach for its orphan_timeout: serve counts
 * it among its offer's workers lost. */
#define WORKER_ORPHANED "orphaned: serve out of reach"

/* The most GPUs of an instance (an offer's limit, and a lease's): so the
 * most jobs it runs at once, one a GPU. */
#define INSTANCE_GPUS_MAX 64

struct instance {
	int64_t id;
	char offer[CONF_NAME_MAX + 1];
	enum market market;
	enum instance_state state;
	int gpus;
	int vram_gb;
	char gpu_ids[128];     /* what CUDA_VISIBLE_DEVICES says on it */
	char provider_ref[256]; /* the provider's own name for it (local: "pid:N") */
	int64_t launched_ms;
	int64_t registered_ms;
	int64_t idle_since_ms;
	int64_t terminated_ms;
	int64_t updated_ms;
	int64_t job_id; /* the job it runs; 0 when none */
	char reason[320]; /* why it is in its state */
	int64_t billed_ms; /* once terminated, under its offer's billing rule */
	double cost;       /* USD, once terminated */
	int64_t reclaim_at_ms; /* a reclaim notice is served from then on; 0: none */
	/* Its worker's bearer token, minted at launch: valid for this
	 * instance's calls while it lives. "" when the API is open. Never
	 * shown. */
	char token[65];
	/* The team whose queued work its launch was for (docs/TEAMS.md): its
	 * boot and idle time are that team's. "": shared (the warm pool, a
	 * worker started by hand, teams off). */
	char team[CONF_NAME_MAX + 1];
};

const char *instance_state_name(enum instance_state s);
int instance_state_parse(const char *name); /* -1: unknown */

json_t *instance_to_json(const struct instance *i, int64_t now_ms);

#endif
