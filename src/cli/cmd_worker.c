/* `ebb worker`: see worker.h. Providers start it with --instance; people
 * can start it by hand on any machine to serve a queue. */
#include "cli/cli.h"
#include "cli/cmd.h"
#include "worker/worker.h"

#define W(member) OPTION_AT(struct worker_options, member)

static const struct option_spec options[] = {
	{.kind = OPTION_GROUP, .group = cli_server_options, .at = W(conn)},
	{"instance", 0, OPTION_INT, "ID", W(instance), "the instance this worker runs on (set by providers)",
	 .max = 1LL << 62},
	{"name", 0, OPTION_STRING, "NAME", W(name), "worker name when started by hand (default host-pid)"},
	{"gpus", 0, OPTION_INT, "N", W(gpus),
	 "GPUs offered; jobs that leave some free run side by side,\n"
	 "each on its own (CUDA_VISIBLE_DEVICES)",
	 .max = 4096, .def = "1"},
	{"vram", 0, OPTION_INT, "GB", W(vram_gb), "memory per GPU offered", .max = 4096, .def = "0"},
	{"labels", 0, OPTION_STRING, "a,b", W(labels), "labels offered"},
	{"idle-timeout", 0, OPTION_DURATION, "D", W(idle_timeout_ms),
	 "exit after D with no job (default: what serve says, or never)"},
	{"orphan-timeout", 0, OPTION_DURATION, "D", W(orphan_timeout_ms), "exit after D without reaching serve",
	 .def = "5m"},
	{"grace", 0, OPTION_DURATION, "D", W(grace_ms), "time a running job gets to finish after SIGTERM", .def = "30s"},
	{"boot-delay", 0, OPTION_DURATION, "D", W(boot_delay_ms), "wait D before starting (stands in for a cold start)"},
	{"on-exit", 0, OPTION_STRING, "CMD", W(on_exit), "shell command to run when exiting by itself (a power-off)"},
	{"notice-url", 0, OPTION_STRING, "URL", W(notice_url),
	 "watch for a spot reclaim notice: aws, gcp, or a URL that answers\n"
	 "200 once a reclaim is scheduled (default: none)"},
	{"notice-interval", 0, OPTION_DURATION, "D", W(notice_interval_ms), "time between two looks at it", .def = "5s"},
	{"reclaim-grace", 0, OPTION_DURATION, "D", W(reclaim_grace_ms),
	 "after a notice, time the job gets for a last checkpoint\n"
	 "(default: what serve says, else 25s)"},
	{0},
};

static const struct usage usage = {"ebb worker [OPTIONS]",
	"Leases jobs from serve with a worker token and runs them, until it is idle or serve\n"
	"is out of reach for too long.",
	options,
};

int cmd_worker(int argc, char **argv)
{
	/* -1: not given; what serve says then. */
	struct worker_options o = {.idle_timeout_ms = -1, .reclaim_grace_ms = -1};
	int rc = options_parse(&usage, &o, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if (!o.instance && o.idle_timeout_ms < 0)
		o.idle_timeout_ms = 0;
	return worker_run(&o);
}
