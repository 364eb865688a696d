/* `ebb worker`: the agent on each instance. It registers, long-polls for
 * leases, runs each job as a child process (several side by side on an
 * instance of several GPUs, each on GPUs of its own), forwards its
 * progress and checkpoints, heartbeats, and exits by itself when idle too
 * long or when serve has been out of reach too long, running its on-exit
 * command (a cloud VM's power-off). It watches for a spot reclaim notice:
 * on one it takes no new job, stops the jobs it runs (SIGTERM, then
 * reclaim_grace for a last checkpoint), reports them interrupted so that
 * they resume elsewhere from that checkpoint, and exits. */
#ifndef EBB_WORKER_H
#define EBB_WORKER_H

#include <stdint.h>

struct worker_options {
	struct client_args conn;     /* NULL each: EBB_SERVER, EBB_TOKEN, EBB_CACERT */
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

int worker_run(const struct worker_options *o);

#endif
