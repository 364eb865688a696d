/* The local provider's parts (local.c, local_faults.c): what they share.
 * Only those two files include it. */
#ifndef EBB_PROVIDER_LOCAL_INTERNAL_H
#define EBB_PROVIDER_LOCAL_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "provider/kind.h"

#define LOCAL_MAX_GPUS 256

/* [local]: its keys (local.c's table). */
struct local_conf {
	char *gpus;
	int64_t boot_ms;
	int64_t reclaim_notice_ms;
	int64_t seed;
	int64_t launch_latency_ms;
};

struct local_child {
	pid_t pid;
	int adopted; /* started by an earlier serve: not our child, polled */
	int64_t instance;
	int gpu_index[64];
	int ngpus;
};

struct reclaim_timer;
struct call;

struct local {
	struct provider *p;
	const struct local_conf *conf;
	uint64_t rng; /* the faults' generator, from [local] seed */
	struct reclaim_timer *timers;
	struct call *calls; /* launches, terminations and lists under way */
	int gpus[LOCAL_MAX_GPUS]; /* the configured indices */
	int gpu_busy[LOCAL_MAX_GPUS];
	int ngpus;
	struct local_child *children;
	int nchildren;
	struct event *sigchld;
};

struct local_child *local_child_of(struct local *l, int64_t instance);
/* The state letter and parent of pid from /proc/PID/stat: 0, or -1 when
 * the process is not there to read. */
int local_proc_stat(pid_t pid, char *state, pid_t *ppid);

/* ---- local_faults.c: the spot market's faults, simulated ---- */

/* A spot launch of offer o fails for capacity now: 1, with why. */
int local_fault_launch(struct local *l, const struct offer *o, char *why, size_t whysize);
/* When a spot instance of offer o will be reclaimed, drawn from its
 * reclaim rate: ms from now, 0 for never. */
int64_t local_fault_reclaim_in(struct local *l, const struct offer *o);
/* The instance's notice in_ms from now, its kill a notice later. */
void local_fault_schedule(struct local *l, int64_t instance, int64_t in_ms);
/* `ebb reclaim`: the kill comes a notice from now. -1: no such worker. */
int local_fault_reclaim(struct provider *p, const struct instance *inst);
/* The instance is gone: its reclaims are dropped. */
void local_fault_forget(struct local *l, int64_t instance);
void local_fault_close(struct local *l);

#endif
