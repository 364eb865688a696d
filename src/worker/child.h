/* The start of a process the worker runs for jobs, a job's command or a
 * resident handler (job_run.c, handler.c): in the child, after the fork;
 * and what goes down a pipe to such a process, or to a runner. */
#ifndef EBB_WORKER_CHILD_H
#define EBB_WORKER_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* Execs argv (by PATH) in a process group of its own (so that a stop
 * reaches its children too), with the default signals, in (or -1: the
 * worker's) as stdin, out[0] and out[1] as stdout and stderr, and the
 * write end of the control pipe as fd 3, named by EBB_CONTROL_FD. It dies
 * with its worker: a worker killed -9 could not stop it, and once the
 * lease expired the job would run twice at once. (Only the process
 * itself: those it starts live on until they end.) Never returns. */
void child_exec(char **argv, int in, int control_w, const int out[2], pid_t worker) __attribute__((noreturn));

/* Writes all of buf to fd, a blocking pipe, across the signals that cut
 * a write short: 0, or -1 when the reader is gone. */
int child_send(int fd, const char *buf, size_t len);

#endif
