/* serve's own finished jobs as a trace (docs/SIMULATION.md, "Tuning on
 * ebb's own history"): what `ebb trace export` writes and `ebb tune
 * --history` tunes on, read page by page from GET /v1/history, so that a
 * remote serve works and a team's token sees its own jobs only. */
#ifndef EBB_CLI_HISTORY_H
#define EBB_CLI_HISTORY_H

#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "common/config.h"

/* --since / --until (OPTION_CALL, into an int64_t of Unix seconds): "30d",
 * "12h" (that long before now), "@1700000000" (Unix seconds, as date(1)
 * writes them) or "2026-11-01" (midnight UTC). */
int history_when(void *at, const char *arg, char *why, size_t size);

/* What the exported jobs did in fact, for `ebb tune --history`. */
struct history_facts {
	size_t jobs;
	double *waits; /* seconds from submission to the run that succeeded */
	int64_t origin; /* Unix seconds of the trace's 0 */
	char team[CONF_NAME_MAX + 1]; /* the one team the rows are of (a team's token); "": all */
};

/* Writes the jobs that succeeded and finished in [since, until) (0: no
 * bound) as the simulator's CSV into out, submit_time_s counted from the
 * whole second the first of them was created (said on stderr, and in a
 * "# origin=SECONDS" line before the header, by which the replay keeps
 * calendar months): the replay's clock starts at 0, and would otherwise
 * run from 1970 (pollers polling, always-on billing) before the first job. Pages through cli;
 * facts, when not NULL, gathers what they did (to history_facts_free).
 * 0, or 1 after a message. */
int history_export(struct cli *cli, int64_t since, int64_t until, FILE *out, struct history_facts *facts);
void history_facts_free(struct history_facts *f);

#endif
