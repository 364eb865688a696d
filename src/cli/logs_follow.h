/* A job's log as `ebb logs` and `ebb submit --wait` read it (GET
 * /v1/jobs/ID/logs): the lines as the job wrote them, stdout's to
 * stdout and stderr's to stderr (under --json, each reply with lines, a
 * line each), page after page; following, the calls
 * long-poll for more until the attempt ends, then go on to the job's
 * next attempt until the job has finished. */
#ifndef EBB_CLI_LOGS_FOLLOW_H
#define EBB_CLI_LOGS_FOLLOW_H

#include <stdint.h>

#include "cli/cli.h"

struct logs_follow {
	int64_t job;
	int attempt; /* 0: the latest, and the later ones when following */
	int tail;    /* the last N lines only; 0: all */
	int follow;
};

/* 0, or 1 after a call failed (said on stderr). */
int logs_follow(struct cli *cli, const struct logs_follow *f);

#endif
