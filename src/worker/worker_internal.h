/* The worker's insides, shared by its loop (worker.c), the run of one
 * job (job_run.c) and the jobs run side by side (runners.c): only
 * src/worker includes it; worker.h is the worker's API. */
#ifndef EBB_WORKER_INTERNAL_H
#define EBB_WORKER_INTERNAL_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/client.h"
#include "common/config.h"
#include "common/instance.h"
#include "worker/notice.h"
#include "worker/worker.h"

#define KILL_AFTER_MS 5000 /* from SIGTERM to SIGKILL of a job or handler that must stop */

/* Set by the signal handlers; the self-pipe wakes the waits. */
struct worker_signals {
	volatile sig_atomic_t stop;
	/* Any signal (a stop, a runner's end) cuts a lease's long-poll short:
	 * GPUs freed are offered at once. Cleared before each lease. */
	volatile sig_atomic_t cut;
	int wake[2];
};


/* A job run beside others, in a process of its own (runners.c). A
 * runner whose job ran on a resident handler keeps the handler and waits
 * for the next job of its type: its GPUs, or its share, stay its own
 * while it waits, and are offered to serve as free all the same. */
struct runner {
	pid_t pid;
	int64_t job;       /* the job it runs; 0 while its handler waits */
	uint64_t gpus;     /* its whole GPUs, a bit each */
	/* A job of a shared type (share.c): the GPU it shares, its part of
	 * it and its memory there; gpu -1 for a job on GPUs of its own. */
	int gpu;
	double share;
	int64_t vram_gb;
	/* The pipes to a runner of a handler job: the next job goes down
	 * `to` as a JSON value; `from` says "idle SETUP_MS" when its job
	 * ended and the handler waits. -1 for a runner of a plain job. */
	int to, from;
	char type[CONF_NAME_MAX + 1];
	char *handler;      /* the handler's command as the job gave it, compact JSON */
	int64_t setup_ms;   /* its handler's, once the runner said; -1 before */
	int64_t idle_since; /* monotonic ms: the runner waiting longest goes first */
};

/* gpu_job's mark for a GPU that jobs of shared types share. */
#define GPU_SHARED (-1)

struct worker {
	const struct worker_options *o;
	struct client client;
	struct worker_signals *sig;
	char name[80];
	int64_t idle_timeout_ms, orphan_timeout_ms, heartbeat_ms;
	int64_t last_contact_ms; /* the last reply from serve */
	struct notice *notice;   /* NULL: none watched */
	int64_t reclaim_grace_ms;
	int64_t result_max;      /* [queue] result_max, as serve's register reply said */
	int reclaimed;           /* a reclaim notice was seen: the instance is going away */
	int64_t terminate_ms;    /* when, by the wall clock, if the notice said; else 0 */
	char refused[400];       /* why serve refused the lease request, if it did */
	/* Several jobs at once (runners.c): with more than one GPU, a job
	 * that leaves some free runs in a runner, and the worker leases more
	 * for the GPUs left. */
	int ngpus;
	char gpu_names[INSTANCE_GPUS_MAX][16]; /* what CUDA_VISIBLE_DEVICES calls each */
	int64_t gpu_job[INSTANCE_GPUS_MAX];    /* the job on each GPU (the last one while a
	                                        * runner's handler waits there); 0: free; GPU_SHARED */
	/* GPUs shared (share.c): the types whose jobs share one, as serve's
	 * register reply said (NULL: none), and each shared GPU's parts
	 * taken and memory held. */
	json_t *gpu_shares;
	double gpu_shared[INSTANCE_GPUS_MAX];
	int64_t gpu_vram[INSTANCE_GPUS_MAX];
	struct runner runners[INSTANCE_GPUS_MAX];
	int nrunners;
	int runner_orphaned; /* a runner ended because serve was out of reach */
	/* A report asks for no next job: in a runner (the worker leases for
	 * the GPUs it frees), or a job the worker runs beside runners. */
	int no_next;
	/* The resident handler kept between jobs (handler.h), or NULL. */
	struct handler *handler;
	/* serve refused "handlers" on a heartbeat (a serve older than this
	 * worker): they go on lease requests only. */
	int no_heartbeat_handlers;
};


/* Runs one leased job to its end and reports it (job_run.c). Returns -1
 * when serve was out of reach for orphan_timeout. A complete or a fail
 * asks for the next job at once (worker_next_request): *next is the lease
 * reply that came back with it ({"job": ...}, to json_decref), or NULL. */
int job_run(struct worker *w, json_t *job, json_t **next);

/* Its resident handler as serve's fleet shows it ([{"type", "state",
 * "setup_s"}], docs/API.md), or NULL when it keeps none: on each lease
 * request, and on a job's heartbeats while the handler sets up. */
json_t *worker_handlers(const struct worker *w);

/* The lease request a report carries as "next": NULL when the worker is
 * to take no new job (stopping, or a reclaim notice was seen). It does
 * not wait: with no job ready the worker long-polls as usual, a call that
 * SIGTERM may cut short, which a report must never be. */
json_t *worker_next_request(struct worker *w);

/* The instance's GPUs: --gpus of them, named as CUDA_VISIBLE_DEVICES
 * lists them when it lists that many, else 0, 1, ... */
void runners_init(struct worker *w);
/* GPUs no job runs on. */
int runners_free_gpus(const struct worker *w);
/* Whether the job must run beside others: it leaves GPUs free, or some
 * already run, or a runner's handler waits. Otherwise the worker runs it
 * itself (job_run), as on an instance of one GPU. */
int runners_wanted(const struct worker *w, json_t *job);
/* Runs the job in a runner: one whose handler of its type waits on as
 * many GPUs (or the same share), else a new one on GPUs of its own (as
 * many as it asks, at least one), waiting handlers stopped first where
 * their GPUs are needed. 0, or -1 when no process could be started (the
 * job ran in the worker itself then, and -1 means it ended orphaned). */
int runners_start(struct worker *w, json_t *job);
/* Reaps the runners that ended and frees their GPUs, and hears those
 * whose handler now waits; how many did either. */
int runners_reap(struct worker *w);
/* The runners that run a job. */
int runners_busy(const struct worker *w);
/* Whether a waiting runner holds GPU g whole; adds to *share and
 * *vram_gb its waiting runners' parts of it (the lease offers them). */
int runners_idle_on(const struct worker *w, int g, double *share, int64_t *vram_gb);
/* The ids of the jobs the runners run: the lease's "running". */
json_t *runners_jobs(const struct worker *w);
/* The runners' handlers into list, one entry a type (serve keeps a few). */
void runners_handlers(const struct worker *w, json_t *list);
/* Waits for every runner to end; waiting handlers are stopped, a stop
 * asked meanwhile is passed on. */
void runners_wait_all(struct worker *w);

/* GPUs shared by jobs of shared types (share.c). Keeps the register
 * reply's gpu_shares. */
void share_read(struct worker *w, json_t *reply);
/* The part of one GPU the job takes (1: a whole GPU, as for any type
 * serve did not name) and, in *vram_gb (NULL: not wanted), its memory. */
double share_of(const struct worker *w, json_t *job, int64_t *vram_gb);
/* Takes the share on a GPU: one already shared with room first, else a
 * free one; its index, or -1 when every GPU runs a whole job. */
int share_place(struct worker *w, double share, int64_t vram_gb);
/* Gives back what share_place took on GPU g. */
void share_release(struct worker *w, int g, double share, int64_t vram_gb);
/* share_place's first choices only: a GPU where the share fits beside
 * what holds it now, waiting handlers included; -1 for none. */
int share_fit(const struct worker *w, double share, int64_t vram_gb);
/* Whether shared GPU g holds waiting handlers only: offered whole. */
int share_only_waiting(const struct worker *w, int g);
/* Whether a shared GPU has room left for the lease to offer. */
int share_room(const struct worker *w);
/* Adds to a lease request the room of the shared GPU with the most:
 * share_free, and share_vram_gb where the worker knows its memory. */
void share_offer(const struct worker *w, json_t *body);

/* A process of its own for a runner: a self-pipe and a client of its
 * own (worker.c), so that nothing is shared with the worker. */
void worker_renew_after_fork(struct worker *w);

/* Waits up to ms, or until a signal arrives; drains the self-pipe. */
void worker_wait(struct worker *w, int64_t ms);
/* Polls the reclaim notice if a poll is due: 1 once one was seen. */
int worker_notice(struct worker *w);
/* A call to serve that keeps track of the last contact. */
int worker_call(struct worker *w, const char *method, const char *path, json_t *body, json_t **reply);

#endif
