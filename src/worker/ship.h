/* Ships a running job's output to serve (POST /v1/jobs/ID/logs) from a
 * thread of its own with a client of its own, so that serve's latency
 * never holds up the reading of the job's pipes (output.h). Lines wait in
 * a bounded queue; when it is full the oldest waiting ones are dropped
 * and their bytes counted, never the job stalled. A batch sent is sent
 * again, with the same seq numbers, until serve acknowledges it (serve
 * stores a line once, whatever the resends): a serve that restarts or
 * fails over loses nothing it acknowledged. */
#ifndef EBB_WORKER_SHIP_H
#define EBB_WORKER_SHIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/client.h"

struct ship;

enum ship_stream { SHIP_STDOUT, SHIP_STDERR };

/* Starts shipping the lines of attempt (the lease's token) of job,
 * through a client like c (its serves, token and CA, from the one that
 * answered last). */
struct ship *ship_start(const struct client *c, int64_t job, int64_t attempt);
/* Queues a line (text: valid UTF-8 of len bytes, no newline). Never
 * waits but for the queue's lock. */
void ship_line(struct ship *s, enum ship_stream stream, int64_t at_ms, const char *text, size_t len);
/* Waits up to wait_ms for serve to acknowledge every line, then stops
 * the thread and frees s. */
void ship_finish(struct ship *s, int64_t wait_ms);

#endif
