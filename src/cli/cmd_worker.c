/* `ebb worker`: see worker.h. Providers start it with --instance; people
 * can start it by hand on any machine to serve a queue. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/units.h"
#include "worker/worker.h"

static const char usage[] =
	"usage: ebb worker [OPTIONS]\n"
	"  -s, --server URL        serve's address (default $EBB_SERVER, else http://127.0.0.1:7070);\n"
	"                          URL,URL,...: serves on one database, tried in turn\n"
	"  --token TOKEN           a worker token (default $EBB_TOKEN)\n"
	"  --cacert FILE           CA certificates (PEM) to trust for an https:// server\n"
	"                          (default $EBB_CACERT, else the system's)\n"
	"  --instance ID           the instance this worker runs on (set by providers)\n"
	"  --name NAME             worker name when started by hand (default host-pid)\n"
	"  --gpus N                GPUs offered; jobs that leave some free run side by side,\n"
	"                          each on its own (CUDA_VISIBLE_DEVICES) (default 1)\n"
	"  --vram GB               memory per GPU offered (default 0)\n"
	"  --labels a,b            labels offered\n"
	"  --idle-timeout D        exit after D with no job (default: what serve says, or never)\n"
	"  --orphan-timeout D      exit after D without reaching serve (default 5m)\n"
	"  --grace D               time a running job gets to finish after SIGTERM (default 30s)\n"
	"  --boot-delay D          wait D before starting (stands in for a cold start)\n"
	"  --on-exit CMD           shell command to run when exiting by itself (a power-off)\n"
	"  --notice-url URL        watch for a spot reclaim notice: aws, gcp, or a URL that answers\n"
	"                          200 once a reclaim is scheduled (default: none)\n"
	"  --notice-interval D     time between two looks at it (default 5s)\n"
	"  --reclaim-grace D       after a notice, time the job gets for a last checkpoint\n"
	"                          (default: what serve says, else 25s)\n";

static int duration(const char *flag, const char *arg, int64_t *out)
{
	if (parse_duration_ms(arg, out) != 0) {
		fprintf(stderr, "ebb worker: %s: expected a duration such as 30s or 5m, got '%s'\n%s", flag,
			arg, usage);
		return -1;
	}
	return 0;
}

int cmd_worker(int argc, char **argv)
{
	enum { O_TOKEN = 256, O_CACERT, O_INSTANCE, O_NAME, O_GPUS, O_VRAM, O_LABELS, O_IDLE, O_ORPHAN, O_GRACE,
	       O_BOOT, O_ON_EXIT, O_NOTICE_URL, O_NOTICE_INTERVAL, O_RECLAIM_GRACE };
	static const struct option longopts[] = {
		{"server", required_argument, NULL, 's'},
		{"token", required_argument, NULL, O_TOKEN},
		{"cacert", required_argument, NULL, O_CACERT},
		{"instance", required_argument, NULL, O_INSTANCE},
		{"name", required_argument, NULL, O_NAME},
		{"gpus", required_argument, NULL, O_GPUS},
		{"vram", required_argument, NULL, O_VRAM},
		{"labels", required_argument, NULL, O_LABELS},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		{"orphan-timeout", required_argument, NULL, O_ORPHAN},
		{"grace", required_argument, NULL, O_GRACE},
		{"boot-delay", required_argument, NULL, O_BOOT},
		{"on-exit", required_argument, NULL, O_ON_EXIT},
		{"notice-url", required_argument, NULL, O_NOTICE_URL},
		{"notice-interval", required_argument, NULL, O_NOTICE_INTERVAL},
		{"reclaim-grace", required_argument, NULL, O_RECLAIM_GRACE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct worker_options o = {
		.gpus = 1, .orphan_timeout_ms = 300000, .idle_timeout_ms = -1, .grace_ms = 30000,
		.notice_interval_ms = 5000, .reclaim_grace_ms = -1,
	};
	int c;

	while ((c = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.server = optarg; break;
		case O_TOKEN: o.token = optarg; break;
		case O_CACERT: o.cacert = optarg; break;
		case O_NAME: o.name = optarg; break;
		case O_LABELS: o.labels = optarg; break;
		case O_ON_EXIT: o.on_exit = optarg; break;
		case O_NOTICE_URL: o.notice_url = optarg; break;
		case O_INSTANCE:
		case O_GPUS:
		case O_VRAM: {
			char *end;
			long long n = strtoll(optarg, &end, 10);
			if (*end || n < 0 || n > (c == O_INSTANCE ? 1LL << 62 : 4096)) {
				fprintf(stderr, "ebb worker: bad number '%s'\n%s", optarg, usage);
				return 2;
			}
			if (c == O_INSTANCE)
				o.instance = n;
			else if (c == O_GPUS)
				o.gpus = (int)n;
			else
				o.vram_gb = (int)n;
			break;
		}
		case O_IDLE:
			if (duration("--idle-timeout", optarg, &o.idle_timeout_ms) != 0)
				return 2;
			break;
		case O_ORPHAN:
			if (duration("--orphan-timeout", optarg, &o.orphan_timeout_ms) != 0)
				return 2;
			break;
		case O_GRACE:
			if (duration("--grace", optarg, &o.grace_ms) != 0)
				return 2;
			break;
		case O_NOTICE_INTERVAL:
			if (duration("--notice-interval", optarg, &o.notice_interval_ms) != 0)
				return 2;
			break;
		case O_RECLAIM_GRACE:
			if (duration("--reclaim-grace", optarg, &o.reclaim_grace_ms) != 0)
				return 2;
			break;
		case O_BOOT:
			if (duration("--boot-delay", optarg, &o.boot_delay_ms) != 0)
				return 2;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ebb worker: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	if (!o.instance && o.idle_timeout_ms < 0)
		o.idle_timeout_ms = 0;
	return worker_run(&o);
}
