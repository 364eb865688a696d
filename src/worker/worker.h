/* `ebb worker`: the agent on each instance. It registers, long-polls for
 * leases, runs each job as a child process, forwards its progress and
 * checkpoints, heartbeats, and exits by itself when idle too long or when
 * serve has been out of reach too long, running its on-exit command (a
 * cloud VM's power-off). It watches for a spot reclaim notice: on one it
 * takes no new job, stops the one it runs (SIGTERM, then reclaim_grace
 * for a last checkpoint), reports it interrupted so that it resumes
 * elsewhere from that checkpoint, and exits. */
#ifndef EBB_WORKER_H
#define EBB_WORKER_H

#include <signal.h>
#include <stdint.h>

#include "common/client.h"
#include "worker/notice.h"

struct worker_options {
	const char *server, *token; /* NULL: EBB_SERVER / EBB_TOKEN */
	const char *cacert;          /* NULL: EBB_CACERT */
	int64_t instance;            /* 0: started by hand, not by a provider */
	const char *name;            /* worker name; "i-ID" for an instance */
	int gpus, vram_gb;
	const char *labels;          /* comma-separated, or NULL */
	int64_t boot_delay_ms;
	int64_t orphan_timeout_ms;
	int64_t idle_timeout_ms;     /* -1: what serve says (0 for a hand-started worker: never) */
	int64_t grace_ms;            /* a running job's time to finish after SIGTERM or a timeout */
	const char *on_exit;         /* shell command, or NULL */
	const char *notice_url;      /* "aws", "gcp", a URL, or NULL: no reclaim notice to watch */
	int64_t notice_interval_ms;  /* between two polls of it */
	int64_t reclaim_grace_ms;    /* -1: what serve says (25 s for a hand-started worker) */
};

/* Set by the signal handlers; the self-pipe wakes the waits. */
struct worker_signals {
	volatile sig_atomic_t stop;
	int wake[2];
};

struct worker {
	const struct worker_options *o;
	struct client client;
	struct worker_signals *sig;
	char name[80];
	int64_t idle_timeout_ms, orphan_timeout_ms, heartbeat_ms;
	int64_t last_contact_ms; /* the last reply from serve */
	struct notice *notice;   /* NULL: none watched */
	int64_t reclaim_grace_ms;
	int reclaimed;           /* a reclaim notice was seen: the instance is going away */
	int64_t terminate_ms;    /* when, by the wall clock, if the notice said; else 0 */
	char refused[400];       /* why serve refused the lease request, if it did */
};

int worker_run(const struct worker_options *o);

/* Runs one leased job to its end and reports it (job_run.c). Returns -1
 * when serve was out of reach for orphan_timeout. A complete or a fail
 * asks for the next job at once (worker_next_request): *next is the lease
 * reply that came back with it ({"job": ...}, to json_decref), or NULL. */
int job_run(struct worker *w, json_t *job, json_t **next);

/* The lease request a report carries as "next": NULL when the worker is
 * to take no new job (stopping, or a reclaim notice was seen). It does
 * not wait: with no job ready the worker long-polls as usual, a call that
 * SIGTERM may cut short, which a report must never be. */
json_t *worker_next_request(struct worker *w);

/* Waits up to ms, or until a signal arrives; drains the self-pipe. */
void worker_wait(struct worker *w, int64_t ms);
/* Polls the reclaim notice if a poll is due: 1 once one was seen. */
int worker_notice(struct worker *w);
/* A call to serve that keeps track of the last contact. */
int worker_call(struct worker *w, const char *method, const char *path, json_t *body, json_t **reply);

#endif
