/* What `ebb sim` and `ebb tune` share on the command line: the trace, the
 * offers, the replay's options, and the output flags. */
#ifndef EBB_SIMCLI_H
#define EBB_SIMCLI_H

#include <getopt.h>

#include "sim/sim.h"

enum {
	SIMCLI_OFFERS = 0x200, SIMCLI_SEED, SIMCLI_CKPT, SIMCLI_FILTER, SIMCLI_SKIP, SIMCLI_JSON,
	SIMCLI_PLOT, SIMCLI_FROM, SIMCLI_TO, SIMCLI_ORACLE, SIMCLI_OWN = 0x300
};

#define SIMCLI_LONGOPTS                                                                         \
	{"offers", required_argument, NULL, SIMCLI_OFFERS},                                   \
	{"seed", required_argument, NULL, SIMCLI_SEED},                                       \
	{"checkpoint-every", required_argument, NULL, SIMCLI_CKPT},                           \
	{"filter", required_argument, NULL, SIMCLI_FILTER},                                   \
	{"skip-bad", no_argument, NULL, SIMCLI_SKIP}, {"json", no_argument, NULL, SIMCLI_JSON}, \
	{"plot", required_argument, NULL, SIMCLI_PLOT},                                       \
	{"from", required_argument, NULL, SIMCLI_FROM}, {"to", required_argument, NULL, SIMCLI_TO}, \
	{"oracle-durations", no_argument, NULL, SIMCLI_ORACLE}

#define SIMCLI_USAGE                                                                          \
	"  --offers FILE          an ebb config: its [offer.*] sections and ebb's settings\n"   \
	"  --seed N               seed of the spot reclaims (default 1)\n"                     \
	"  --checkpoint-every S   jobs checkpoint every S seconds (default: never)\n"          \
	"  --filter COL=VALUE     keep rows whose COL is VALUE (repeatable)\n"                 \
	"  --skip-bad             skip malformed rows (and count them) instead of stopping\n" \
	"  --from S, --to S       only jobs submitted from S to S seconds into the trace\n"    \
	"  --oracle-durations     tell ebb each job's exact duration from the trace, a what-if\n" \
	"                         (default: what serve knows, the est_s column, else the\n"     \
	"                         median of the newest finished jobs of the type)\n"          \
	"  --json                 print JSON for scripts\n"                                    \
	"  --plot FILE.svg        draw a chart\n"

struct simcli {
	const char *name; /* sim or tune, for messages */
	const char *offers, *plot;
	struct trace_filter filters[8];
	int nfilters, skip_bad, json;
	double from_s, to_s;
	struct sim_options o;
};

void simcli_init(struct simcli *c, const char *name);
/* Handles one of the shared options: 0, or 2 (exit code) after a message. */
int simcli_option(struct simcli *c, int opt, char *arg);
/* Loads the trace and offers; 0, or 1 after a message. */
int simcli_load(struct simcli *c, const char *trace_path, struct trace *t);

#endif
