/* `ebb submit --jobs FILE`: many jobs, one JSON object a line, sent as
 * batches (an array per POST /v1/jobs, docs/API.md). */
#ifndef EBB_SUBMIT_JOBS_H
#define EBB_SUBMIT_JOBS_H

#include <jansson.h>

#include "cli/cli.h"

/* The jobs per request: the server's most (API_SUBMIT_ARRAY_MAX). */
#define SUBMIT_JOBS_PER_CALL 1000

/* Submits every job of path ("-": standard input), each line's fields
 * over those of defaults (the command line's flags). Prints each job's
 * id, a line each in the file's order, and each refused job's error with
 * its line number on stderr. The exit code: 0, 1 when a job or a call
 * failed, 2 when the file is not JSON lines (nothing is sent then). */
int submit_jobs(struct cli *cli, const char *path, json_t *defaults);

#endif
