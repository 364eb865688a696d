/* A resident handler (docs/JOBS.md): the process a type's handler
 * command starts, kept by the worker and handed that type's payload jobs
 * one after another, each as a JSON line on its stdin. The worker keeps
 * one at a time for the jobs it runs itself: they take all its GPUs, so
 * a handler of another type, or a plain job, needs the one there stopped
 * first; each runner (runners.c) keeps its own, on its GPUs. Its
 * stdout and stderr are the running job's log while it runs one, the
 * worker's log between jobs. The run of a job on it is job_run.c's. */
#ifndef EBB_WORKER_HANDLER_H
#define EBB_WORKER_HANDLER_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/job.h"
#include "worker/control.h"
#include "worker/output.h"

struct handler {
	char type[CONF_NAME_MAX + 1];
	char *argv_text;   /* the command as the lease gave it, compact JSON: which handler this is */
	pid_t pid;
	int in;            /* the write end of its stdin */
	int control;       /* the read end of its control pipe; -1 at its end */
	struct control_reader reader;
	struct output *out; /* its stdout and stderr */
	int64_t spawned_ms;
	int64_t setup_ms;  /* from its start to its "ready"; -1 until then */
};

/* The type a leased job names ("" for a lease reply without one), and
 * its handler's command as compact JSON (to free; NULL without memory):
 * together, which handler the job wants. */
const char *handler_type(json_t *job);
char *handler_command(json_t *job);
/* The handler for job (its type and "handler" argv): w_handler when it is
 * that one and alive, else a new one started after w_handler is stopped
 * (and freed). NULL, with why, when it could not be started. */
struct handler *handler_for(struct handler *w_handler, json_t *job, const char *worker, char *why, size_t whysize);
/* Writes line (ended by '\n') to its stdin: 0, or -1 when it is gone. */
int handler_send(struct handler *h, const char *line);
/* Whether it has ended; its wait status into *status then (reaped). */
int handler_ended(struct handler *h, int *status);
/* Stops it, if it runs (SIGTERM; SIGKILL grace_ms later), and frees it. */
void handler_stop(struct handler *h, int64_t grace_ms, const char *worker, const char *why);

#endif
