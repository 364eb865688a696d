/* A running job's stdout and stderr: two pipes the worker reads without
 * blocking in its wait (job_run.c), cut into lines (one longer than
 * OUTPUT_LINE_MAX in pieces, bytes that are not UTF-8 replaced) that go
 * to the shipper (ship.h) stamped with the time they were read. The job
 * sees plain pipes, no terminal. The last lines are kept for the error
 * of a failed run. */
#ifndef EBB_WORKER_OUTPUT_H
#define EBB_WORKER_OUTPUT_H

#include <poll.h>
#include <stddef.h>

#include "worker/ship.h"

#define OUTPUT_LINE_MAX 16384

struct output;

/* The pipes, their lines to ship (NULL: the worker's log), their write ends in fds[0] (stdout) and fds[1] (stderr)
 * for the child; NULL when no pipe could be made. */
struct output *output_open(struct ship *ship, int fds[2]);
/* Where the lines go from now on: a job's shipper, or NULL for the
 * worker's own log (a resident handler between jobs); the last lines
 * kept for an error start again. */
void output_set_ship(struct output *o, struct ship *ship);
/* After the fork: the write ends are the child's alone. */
void output_forked(struct output *o);
/* Sets the pollfds of the pipes still open into p (room for 2): how many. */
int output_pollfds(const struct output *o, struct pollfd *p);
/* Reads what the pipes hold now, for those of p (from output_pollfds)
 * that polled ready. */
void output_read(struct output *o, const struct pollfd *p, int n);
/* At the job's end: what the pipes hold still, and the lines not ended. */
void output_drain(struct output *o);
/* The last lines the job wrote to stderr (else to stdout), joined by
 * " | ", at most size - 1 bytes, their end kept. */
void output_last_lines(const struct output *o, char *buf, size_t size);
void output_close(struct output *o);

#endif
