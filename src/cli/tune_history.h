/* `ebb tune --history WHEN`: tunes on serve's own jobs (cli/history.h)
 * and puts beside the recommendation what the running settings did over
 * the same period: replayed on the same trace, and in fact (the ledger's
 * cost, GET /v1/report; the p95 of the jobs' own waits). */
#ifndef EBB_CLI_TUNE_HISTORY_H
#define EBB_CLI_TUNE_HISTORY_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/history.h"
#include "cli/simcli.h"
#include "sim/tune.h"

struct tune_history {
	char path[512]; /* the trace, a temporary file; "" once removed */
	int64_t since; /* Unix seconds */
	struct history_facts facts;
	double actual_cost_usd; /* the ledger's since then; < 0: not known */
	double actual_p95_s;
	double running_cost_usd, running_p95_s; /* "ebb" with the config's settings, replayed */
};

/* Writes the trace of the jobs that finished since `since` into a
 * temporary file (h->path) and reads the ledger's cost since then from
 * the serve conn names. 0, or 1 after a message. */
int tune_history_fetch(struct tune_history *h, const char *name, const struct client_args *conn, int64_t since);
/* Replays the running settings (ebb's, as c's config sets them) on tr:
 * 0, or -1 with why in err. */
int tune_history_replay(struct tune_history *h, const struct trace *tr, const struct simcli *c, char *err,
			size_t errsize);
/* The comparison: lines for people, or an object for --json. */
void tune_history_print(const struct tune_history *h, const struct tune *t, FILE *out);
json_t *tune_history_json(const struct tune_history *h, const struct tune *t);
/* --publish: POST /v1/admin/tuning with tune_history_json(), for the
 * dashboard. 0, or 1 after a message. */
int tune_history_publish(const struct tune_history *h, const struct tune *t, const char *name,
			 const struct client_args *conn);
/* Removes the trace and frees what h holds. */
void tune_history_done(struct tune_history *h);

#endif
