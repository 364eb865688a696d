/* ebb: one binary, many subcommands, dispatched from one table. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"

const struct command commands[] = {
	{"serve", cmd_serve, "run the control plane: queue, HTTP API, scaler"},
	{"submit", cmd_submit, "submit a job"},
	{"jobs", cmd_jobs, "list jobs"},
	{"job", cmd_job, "show one job"},
	{"cancel", cmd_cancel, "cancel a job"},
	{"logs", cmd_logs, "print what a job wrote to stdout and stderr, or follow it as it runs"},
	{"requeue", cmd_requeue, "queue a failed or dead job again, with a new budget of attempts"},
	{"workers", cmd_workers, "list the workers, by instance or by name, and the jobs they run"},
	{"fleet", cmd_fleet, "list the instances, the idle timeout in force, instance time against job time"},
	{"decisions", cmd_decisions, "show the scaler's last decisions and their reasons"},
	{"alerts", cmd_alerts, "show the alerts firing and pending: idle instances, waiting queues, failing launches, ..."},
	{"drain", cmd_drain, "stop giving jobs to an instance; it is terminated once idle"},
	{"reclaim", cmd_reclaim, "reclaim a local instance as the spot market would (tests, demos)"},
	{"teams", cmd_teams, "each team's GPU quota, use, borrowing, queued work and spend against its budget"},
	{"team", cmd_team, "set a team's monthly budget at run time: team set NAME --budget USD|none"},
	{"report", cmd_report, "what the fleet cost per team, offer or job type: cost per item, idle, spot share"},
	{"offers", cmd_offers, "list the offers: prices, cost per unit of work, the estimates in force"},
	{"worker", cmd_worker, "run the agent that leases and runs jobs on an instance"},
	{"sim", cmd_sim, "replay a job trace against ebb's policy and the usual ones"},
	{"tune", cmd_tune, "sweep the policies' settings over a trace; recommend ebb's"},
	{"trace", cmd_trace, "write serve's succeeded jobs as a trace for sim and tune: trace export [--since WHEN]"},
	{"config", cmd_config, "check a config file, or print the example config"},
	{"store", cmd_store, "copy a SQLite store into an empty PostgreSQL database (store copy --from sqlite:DIR --to postgres:URL); check its tallies (store check)"},
	{"status", cmd_status, "which serve answered (of several: the leader), its role and its store"},
	{"version", cmd_version, "print the version"},
	{"help", cmd_help, "list the commands, or print one's help: help COMMAND"},
	{NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		cmd_help(argc, argv);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_help(1, argv);
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(1, argv);
	if ((c = cmd_find(argv[1])))
		return cmd_run(c, argc - 1, argv + 1);
	return cmd_unknown("ebb", argv[1]);
}
