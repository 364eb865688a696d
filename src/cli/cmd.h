/* Subcommands: one file each (cmd_NAME.c), dispatched from main.c's table.
 * Each returns the process exit code; only main exits. */
#ifndef EBB_CMD_H
#define EBB_CMD_H

#include "cli/options.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

extern const struct command commands[];

/* The command called name, or NULL. */
const struct command *cmd_find(const char *name);
/* A usage error for an unknown command: "CMD: unknown command 'NAME'",
 * "; did you mean 'NEAR'?" when one is close, and "see 'ebb help'" on the
 * next line. cmd is "ebb" or "ebb help". Returns 2. */
int cmd_unknown(const char *cmd, const char *name);
/* Runs c on its arguments, argv[0] its name: "ebb NAME" for messages. */
int cmd_run(const struct command *c, int argc, char **argv);

struct conf_plugins;
struct config;
/* The store engines and provider kinds a config file may name. */
extern const struct conf_plugins cmd_plugins;
/* -c, --config FILE: a group of one option, into the const char * the
 * group's at names (NULL: not given). */
extern const struct option_spec cmd_config_options[];
/* The configuration in path, or the defaults when path is NULL: 0, or 1
 * after "CMD: why" on stderr. */
int cmd_config_load(struct config *cfg, const char *path, const char *cmd);

int cmd_serve(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_requeue(int argc, char **argv);
int cmd_workers(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_store_check(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_decisions(int argc, char **argv);
int cmd_teams(int argc, char **argv);
int cmd_team(int argc, char **argv);
int cmd_alerts(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_reclaim(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_offers(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

#endif
