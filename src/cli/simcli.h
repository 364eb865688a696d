/* What `ebb sim` and `ebb tune` share on the command line: the trace, the
 * offers, the replay's options, and the output flags. */
#ifndef EBB_CLI_SIMCLI_H
#define EBB_CLI_SIMCLI_H

#include "cli/options.h"
#include "sim/sim.h"

#define SIMCLI_FILTERS_MAX 8

/* --filter COL=VALUE, repeatable: each column's name copied out of its
 * word, the value pointing into it. */
struct simcli_filters {
	struct trace_filter f[SIMCLI_FILTERS_MAX];
	char columns[SIMCLI_FILTERS_MAX][64];
	int n;
};

struct simcli {
	const char *name; /* "ebb sim", "ebb tune": main's argv[0], for messages */
	const char *offers, *plot, *reclaims;
	struct simcli_filters filters;
	int skip_bad, json;
	double from_s, to_s, checkpoint_s;
	struct sim_options o;
};

/* The options, into a struct simcli: a command's table includes them as a
 * group. */
extern const struct option_spec simcli_options[];

/* The start of `ebb sim` and `ebb tune`: parses argv into args, the
 * command's struct, whose struct simcli is c, then loads the trace its
 * one word names and the offers. Returns OPTIONS_GO_ON with *t loaded,
 * else the exit code, after a message. */
int simcli_start(struct simcli *c, const struct usage *u, void *args, int argc, char **argv, struct trace *t);
/* Its two halves, for a command whose trace is not a word (`ebb tune
 * --history`): the parse, which returns as options_parse; and the load
 * of the trace at trace_path and the offers, 0 or 1 after a message. */
int simcli_parse(struct simcli *c, const struct usage *u, void *args, int argc, char **argv);
int simcli_load(struct simcli *c, const char *trace_path, struct trace *t);

#endif
