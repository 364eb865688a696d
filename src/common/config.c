/* The core sections' key tables, the plug-ins' sections, and the INI
 * reader (see config.h). Each key is one row of a table (conftab.h). */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/suggest.h"
#include "common/units.h"
#include "common/words.h"

const struct conf_plugin *config_plugin_named(const struct conf_plugin *const *list, const char *name)
{
	for (const struct conf_plugin *const *p = list; p && *p; p++) {
		if (strcmp((*p)->name, name) == 0)
			return *p;
	}
	return NULL;
}

/* [store] kind and [provider] kind name a plug-in the configuration was
 * given (ctx: the config); without plug-ins, any name passes. */
static int check_kind(const struct conf_plugin *const *list, const char *none, const char *value,
		      char *why, size_t whysize)
{
	char names[256] = "";

	if ((none && strcmp(value, none) == 0) || config_plugin_named(list, value))
		return 0;
	if (none)
		snprintf(names, sizeof names, "%s", none);
	for (const struct conf_plugin *const *p = list; *p; p++) {
		strncat(names, names[0] ? ", " : "", sizeof names - strlen(names) - 1);
		strncat(names, (*p)->name, sizeof names - strlen(names) - 1);
	}
	conftab_errf(why, whysize, "expected one of %s, got '%s'", names, value);
	return -1;
}

static int check_store_kind(const void *ctx, const char *value, char *why, size_t whysize)
{
	const struct config *cfg = ctx;

	return cfg && cfg->plugins ? check_kind(cfg->plugins->stores, NULL, value, why, whysize) : 0;
}

static int check_provider_kind(const void *ctx, const char *value, char *why, size_t whysize)
{
	const struct config *cfg = ctx;

	return cfg && cfg->plugins ? check_kind(cfg->plugins->providers, "none", value, why, whysize) : 0;
}

struct conf_section {
	const char *name;
	/* Sections named "NAME.*" hold a list of items (one per [type.X]). */
	int multi;
	const struct conf_key *keys;
	size_t item_size, items_offset, count_offset, name_offset;
	const char *help;
};

static const char *const roles[] = {"admin", "submit", "worker", NULL};
static const char *const billings[] = {"per-second", "per-minute", "per-hour", NULL};

#define CFG(field) offsetof(struct config, field)
#define DAY_MS (86400LL * 1000)

static const struct conf_key server_keys[] = {
	{"listen", CONF_STRING, CFG(listen), 1, 255, "127.0.0.1:7070", NULL,
	 "Address and port of the HTTP API. Without a [token.*] section only a loopback address is accepted; off loopback it needs tls_cert, or private_network = on."},
	{"name", CONF_STRING, CFG(serve_name), 0, 255, "", NULL,
	 "This serve's name in GET /healthz and ebb status, to tell apart the serves on one database (docs/HA.md). Empty: HOST:PID."},
	{"data_dir", CONF_STRING, CFG(data_dir), 1, 4095, "./ebb-data", NULL,
	 "Directory holding the SQLite database (ebb.db); created if missing."},
	{"max_body", CONF_SIZE, CFG(max_body), 1024, 64LL << 20, "1MiB", NULL,
	 "Largest request body accepted; larger ones get 413."},
	{"log_level", CONF_ENUM, CFG(log_level), 0, 0, "info", log_level_names,
	 "Least severe log level written to stderr."},
	{"max_connections", CONF_INT, CFG(max_connections), 16, 1000000, "4096", NULL,
	 "Open HTTP connections at once, long-polling workers included."},
	{"connection_timeout", CONF_DURATION, CFG(connection_timeout_ms), 1000, DAY_MS, "60s", NULL,
	 "An idle keep-alive connection is closed after this long."},
	{"tls_cert", CONF_STRING, CFG(tls_cert), 0, 4095, "", NULL,
	 "PEM file of serve's certificate (its chain after it) for HTTPS; with tls_key. Re-read on SIGHUP. Empty: plain HTTP."},
	{"tls_key", CONF_STRING, CFG(tls_key), 0, 4095, "", NULL,
	 "PEM file of the certificate's private key, unencrypted; with tls_cert. Re-read on SIGHUP."},
	{"private_network", CONF_BOOL, CFG(private_network), 0, 1, "off", NULL,
	 "on: no one else can reach the network, so a listen address off loopback may serve plain HTTP (with a warning). off: it needs tls_cert."},
	{0},
};

static const struct conf_key store_keys[] = {
	{"kind", CONF_STRING, CFG(store_kind), 1, CONF_NAME_MAX, "sqlite", NULL,
	 "Store engine. sqlite: one file in data_dir, WAL mode, every commit fsynced.",
	 .check = check_store_kind},
	{0},
};

static const struct conf_key queue_keys[] = {
	{"lanes", CONF_STRING, CFG(lanes), 1, 1023, "express,standard,batch", NULL,
	 "Lanes in the order they are served: a job of an earlier lane is leased before any job of a later one."},
	{"default_lane", CONF_STRING, CFG(default_lane), 1, CONF_NAME_MAX, "standard", NULL,
	 "Lane of a job submitted without one."},
	{"max_queued", CONF_INT, CFG(max_queued), 1, 1000000000, "1000000", NULL,
	 "Queued plus delayed jobs at most; a submit beyond it gets 429."},
	{"lease_timeout", CONF_DURATION, CFG(lease_timeout_ms), 1000, 3600 * 1000, "60s", NULL,
	 "A lease not extended by a heartbeat within this long expires: the job is queued again and the attempt counts."},
	{"max_lease_wait", CONF_DURATION, CFG(max_lease_wait_ms), 0, 600 * 1000, "60s", NULL,
	 "Longest time a lease request long-polls for a job."},
	{"default_timeout", CONF_DURATION, CFG(default_timeout_ms), 1000, 30 * DAY_MS, "1h", NULL,
	 "Run-time limit of a job submitted without timeout_s."},
	{"max_attempts", CONF_INT, CFG(max_attempts), 1, 100, "3", NULL,
	 "Attempts of a job submitted without max_attempts; after the last failed one it is dead."},
	{"retry_base", CONF_DURATION, CFG(retry_base_ms), 0, DAY_MS, "10s", NULL,
	 "Delay before the first retry; it doubles with each attempt, with jitter (half to all of it)."},
	{"retry_max", CONF_DURATION, CFG(retry_max_ms), 0, 7 * DAY_MS, "10m", NULL,
	 "Longest delay between two attempts."},
	{"log_max", CONF_SIZE, CFG(log_max), 4096, 1LL << 30, "4MiB", NULL,
	 "Most bytes of a job's output kept per attempt: its first half, and the last lines past it; the bytes between are counted as dropped."},
	{"log_retention", CONF_DURATION, CFG(log_retention_ms), 1000, 3650 * DAY_MS, "7d", NULL,
	 "A job's log is deleted this long after its last line."},
	{"logs_max_total", CONF_SIZE, CFG(logs_max_total), 1LL << 20, 1LL << 40, "1GiB", NULL,
	 "Most bytes of all the jobs' logs in the store: past it, the oldest logs are deleted first."},
	{"result_max", CONF_SIZE, CFG(result_max), 1024, CONF_RESULT_MAX, "64KiB", NULL,
	 "Most bytes of a job's result (compact JSON), and no more than half of [server] max_body; a larger one fails the attempt, and serve refuses it on complete."},
	{0},
};

static const struct conf_key scaler_keys[] = {
	{"interval", CONF_DURATION, CFG(scaler_interval_ms), 100, 600 * 1000, "2s", NULL,
	 "Least time between two scaling decisions; events (submits, finished jobs) bring the next one forward to this."},
	{"max_instances", CONF_INT, CFG(max_instances), 0, 100000, "4", NULL,
	 "Hard limit: instances at once, booting and draining ones included. No decision passes it."},
	{"max_gpus", CONF_INT, CFG(max_gpus), 0, 1000000, "8", NULL,
	 "Hard limit: GPUs at once over all instances."},
	{"max_spend_per_hour", CONF_DOUBLE, CFG(max_spend_per_hour), 0, 0, "20", NULL,
	 "Hard limit: USD per hour of all instances at once, at their offers' prices; 0 means no limit.",
	 .fmin = 0, .fmax = 1e6},
	{"idle_timeout", CONF_DURATION, CFG(idle_timeout_ms), 0, DAY_MS, "10m", NULL,
	 "An idle instance is released after this long; auto: for each offer, the hold that costs least over recent gaps between submissions against a boot and its wait.",
	 .auto_ok = 1},
	{"idle_surplus_timeout", CONF_DURATION, CFG(idle_surplus_ms), 0, DAY_MS, "0s", NULL,
	 "While more than one instance is idle, the longest idle go after this; the last waits idle_timeout. 0s: off; auto: chosen as idle_timeout's auto, over times to the second next submission.",
	 .auto_ok = 1},
	{"arrival_window", CONF_DURATION, CFG(arrival_window_ms), 0, DAY_MS, "0s", NULL,
	 "Capacity is held and launched for the work expected at the rate it arrived lately, weighted by exp(-age / this); 0s: off, only queued work counts."},
	{"idle_timeout_min", CONF_DURATION, CFG(idle_timeout_min_ms), 0, DAY_MS, "1m", NULL,
	 "Shortest idle timeout auto may choose; also the shortest gap auto counts."},
	{"idle_timeout_max", CONF_DURATION, CFG(idle_timeout_max_ms), 0, DAY_MS, "30m", NULL,
	 "Longest idle timeout auto may choose."},
	{"idle_decay", CONF_BOOL, CFG(idle_decay), 0, 1, "off", NULL,
	 "on: release half of the idle instances at idle_decay_t1 and the rest at idle_decay_t2, instead of idle_timeout."},
	{"idle_decay_t1", CONF_DURATION, CFG(decay_t1_ms), 0, DAY_MS, "10m", NULL,
	 "With idle_decay: when the first half of the idle instances goes."},
	{"idle_decay_t2", CONF_DURATION, CFG(decay_t2_ms), 0, DAY_MS, "30m", NULL,
	 "With idle_decay: when the rest goes."},
	{"boot_timeout", CONF_DURATION, CFG(boot_timeout_ms), 1000, DAY_MS, "10m", NULL,
	 "An instance whose worker has not registered this long after launch is terminated as a failed launch."},
	{"warm", CONF_STRING, CFG(warm), 0, 1023, "", NULL,
	 "Warm pool: ready instances to keep by weekday and hour (UTC), e.g. 'mon-fri 08-18 2; * * 0'. Empty: none."},
	{"default_est", CONF_DURATION, CFG(default_est_ms), 1000, 30 * DAY_MS, "1m", NULL,
	 "Run time assumed for a job with no est_s and no finished job of its type to learn from."},
	{"max_price", CONF_DOUBLE, CFG(max_price), 0, 0, "0", NULL,
	 "Offers dearer than this, USD per hour, are never launched; 0 means no limit.", .fmin = 0, .fmax = 1e6},
	{"min_reliability", CONF_DOUBLE, CFG(min_reliability), 0, 0, "0", NULL,
	 "Spot offers whose chance of no reclaim in an hour is below this are not used.", .fmin = 0, .fmax = 1},
	{"max_share_per_offer", CONF_DOUBLE, CFG(max_share_per_offer), 0, 0, "0.5", NULL,
	 "Spot instances of one offer, as a share of all spot instances, at most (one reclaim wave hits one offer).",
	 .fmin = 0.01, .fmax = 1},
	{"spot", CONF_BOOL, CFG(use_spot), 0, 1, "on", NULL,
	 "Launch on the spot market where an offer has a spot price and it is cheaper per item."},
	{"capacity_rest", CONF_DURATION, CFG(capacity_rest_ms), 0, DAY_MS, "3m", NULL,
	 "An offer's market whose launch found no capacity is not launched on for this long (as Karpenter caches insufficient capacity)."},
	{"checkpoint_every", CONF_DURATION, CFG(checkpoint_every_ms), 1000, 30 * DAY_MS, "10m", NULL,
	 "Checkpoint interval assumed when pricing reclaims: a reclaim loses half of it, or half a job if shorter."},
	{"preempt_min_runtime", CONF_DURATION, CFG(preempt_min_runtime_ms), 0, DAY_MS, "1m", NULL,
	 "With teams: a job runs this long at least before it is preempted for a team owed its GPUs, so that no job is admitted only to be taken back at once."},
	{"preempt_backoff", CONF_DURATION, CFG(preempt_backoff_ms), 0, DAY_MS, "10m", NULL,
	 "With teams: a job preempted twice in a row waits this long before it is leased again, so that no job is taken back over and over."},
	{0},
};

static const struct conf_key provider_keys[] = {
	{"kind", CONF_STRING, CFG(provider_kind), 1, CONF_NAME_MAX, "none", NULL,
	 "Where instances come from. none: no scaling, workers are started by hand. local: ebb worker processes on this machine.",
	 .check = check_provider_kind},
	{"orphan_timeout", CONF_DURATION, CFG(orphan_timeout_ms), 1000, DAY_MS, "5m", NULL,
	 "A worker that cannot reach serve for this long exits and runs on_exit."},
	{"on_exit", CONF_STRING, CFG(on_exit), 0, 1023, "", NULL,
	 "Shell command a worker runs when it exits by itself (idle or orphaned): a cloud VM's power-off."},
	{"server_url", CONF_STRING, CFG(server_url), 0, 1023, "", NULL,
	 "URL workers use to reach serve; empty: the listen address, https:// with tls_cert, else http://. URL,URL,...: the serves on one database (docs/HA.md)."},
	{"worker_cacert", CONF_STRING, CFG(worker_cacert), 0, 4095, "", NULL,
	 "PEM file of the CA that signed serve's certificate, for the workers the provider starts; empty: the system's CAs."},
	{"reclaim_grace", CONF_DURATION, CFG(reclaim_grace_ms), 0, 3600 * 1000, "25s", NULL,
	 "After a reclaim notice, how long a worker waits for its job's last checkpoint before reporting it interrupted."},
	{0},
};

#define ALERT(field) CFG(alerts.field)
static const struct conf_key alerts_keys[] = {
	{"idle", CONF_BOOL, ALERT(idle), 0, 1, "on", NULL,
	 "Alert EbbInstanceIdle: an instance idle longer than idle_ondemand or idle_spot, with what it costs an hour."},
	{"idle_ondemand", CONF_DURATION, ALERT(idle_ondemand_ms), 1000, 30 * DAY_MS, "30m", NULL,
	 "An on-demand instance idle this long is one to tell of."},
	{"idle_spot", CONF_DURATION, ALERT(idle_spot_ms), 1000, 30 * DAY_MS, "1h", NULL,
	 "A spot instance idle this long is one to tell of."},
	{"idle_for", CONF_DURATION, ALERT(idle_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long an instance stays idle past its threshold before EbbInstanceIdle fires."},
	{"queue_wait", CONF_BOOL, ALERT(queue_wait), 0, 1, "on", NULL,
	 "Alert EbbQueueWaiting: the oldest queued job of a lane has waited longer than queue_wait_factor times the lane's wait target."},
	{"queue_wait_factor", CONF_DOUBLE, ALERT(queue_wait_factor), 0, 0, "3", NULL,
	 "How many of its lane's wait targets ([lane.NAME] wait_target) the oldest queued job may wait.",
	 .fmin = 1, .fmax = 1000},
	{"queue_wait_for", CONF_DURATION, ALERT(queue_wait_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long a lane's oldest job stays past it before EbbQueueWaiting fires."},
	{"spot_share", CONF_BOOL, ALERT(spot_share), 0, 1, "on", NULL,
	 "Alert EbbSpotShareLow: spot instances are under spot_share_min of the fleet, while an offer sells spot and [scaler] spot is on."},
	{"spot_share_min", CONF_DOUBLE, ALERT(spot_share_min), 0, 0, "0.5", NULL,
	 "The least share of the live instances on the spot market.", .fmin = 0, .fmax = 1},
	{"spot_share_for", CONF_DURATION, ALERT(spot_share_for_ms), 0, 30 * DAY_MS, "30m", NULL,
	 "How long the share stays under it before EbbSpotShareLow fires."},
	{"launch_failures", CONF_BOOL, ALERT(launch_failures), 0, 1, "on", NULL,
	 "Alert EbbLaunchesFailing: every launch of an offer on a market has failed since a time."},
	{"launch_failures_for", CONF_DURATION, ALERT(launch_failures_for_ms), 0, 30 * DAY_MS, "10m", NULL,
	 "How long from the first failure, with none working since, before EbbLaunchesFailing fires."},
	{"dead_letter", CONF_BOOL, ALERT(dead_letter), 0, 1, "on", NULL,
	 "Alert EbbJobsDeadLettered: jobs of a lane went dead (their last attempt failed) within dead_letter_window."},
	{"dead_letter_min", CONF_INT, ALERT(dead_letter_min), 1, 1000000, "1", NULL,
	 "Dead jobs of one lane within the window that make the alert."},
	{"dead_letter_window", CONF_DURATION, ALERT(dead_letter_window_ms), 1000, 30 * DAY_MS, "1h", NULL,
	 "The window dead jobs are counted in; the alert resolves when fewer than dead_letter_min are in it."},
	{"dead_letter_for", CONF_DURATION, ALERT(dead_letter_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long the count stays at dead_letter_min or more before EbbJobsDeadLettered fires."},
	{"worker_lost", CONF_BOOL, ALERT(worker_lost), 0, 1, "on", NULL,
	 "Alert EbbWorkerLost: an instance of an offer vanished while it booted or ran a job, or its worker left orphaned, within worker_lost_window."},
	{"worker_lost_window", CONF_DURATION, ALERT(worker_lost_window_ms), 1000, 30 * DAY_MS, "1h", NULL,
	 "How long after the last worker lost the alert holds."},
	{"worker_lost_for", CONF_DURATION, ALERT(worker_lost_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long the alert's condition holds before EbbWorkerLost fires."},
	{"store_errors", CONF_BOOL, ALERT(store_errors), 0, 1, "on", NULL,
	 "Alert EbbStoreErrors: calls to the store failed within store_errors_window."},
	{"store_errors_window", CONF_DURATION, ALERT(store_errors_window_ms), 1000, 30 * DAY_MS, "10m", NULL,
	 "How long after the last store error the alert holds."},
	{"store_errors_for", CONF_DURATION, ALERT(store_errors_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long the errors go on before EbbStoreErrors fires."},
	{"team_budget", CONF_BOOL, ALERT(team_budget), 0, 1, "on", NULL,
	 "Alert EbbTeamBudget: a team's spend this month reached team_budget_warn of its [team.NAME] monthly_budget (threshold 80%), or all of it (threshold 100%)."},
	{"team_budget_warn", CONF_DOUBLE, ALERT(team_budget_warn), 0, 0, "0.8", NULL,
	 "The share of a team's monthly budget that makes the first alert.", .fmin = 0.01, .fmax = 1},
	{"team_budget_for", CONF_DURATION, ALERT(team_budget_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long the spend stays past the mark before EbbTeamBudget fires."},
	{"unplaceable", CONF_BOOL, ALERT(unplaceable), 0, 1, "on", NULL,
	 "Alert EbbJobsUnplaceable: queued jobs of a lane that no [offer.NAME] and no worker registered now can hold (their GPUs or GPU memory)."},
	{"unplaceable_for", CONF_DURATION, ALERT(unplaceable_for_ms), 0, 30 * DAY_MS, "0s", NULL,
	 "How long such jobs stay queued before EbbJobsUnplaceable fires."},
	{"webhook_timeout", CONF_DURATION, ALERT(webhook_timeout_ms), 100, 600 * 1000, "10s", NULL,
	 "A webhook's answer must come within this long, or the post is tried again."},
	{"webhook_retry_max", CONF_DURATION, ALERT(webhook_retry_max_ms), 1000, DAY_MS, "5m", NULL,
	 "Longest wait between two tries of a post that failed; the wait doubles from 1s up to it."},
	{0},
};

#define WEBHOOK(field) offsetof(struct webhook_conf, field)
static const struct conf_key webhook_keys[] = {
	{"url", CONF_STRING, WEBHOOK(url), 0, 1023, "", NULL,
	 "Where alerts are posted, in Alertmanager's webhook format: an http:// or https:// URL. Required."},
	{"token", CONF_STRING, WEBHOOK(token), 0, 1023, "", NULL,
	 "Sent as Authorization: Bearer TOKEN when not empty.", 1},
	{0},
};

#define LANE(field) offsetof(struct lane_conf, field)
static const struct conf_key lane_keys[] = {
	{"wait_target", CONF_DURATION, LANE(wait_target_ms), 1000, 7 * DAY_MS, "5m", NULL,
	 "Queued work of this lane should start within this long after the boot of an instance launched for it: the scaler launches when it cannot."},
	{0},
};

#define OFFER(field) offsetof(struct offer_conf, field)
static const struct conf_key offer_keys[] = {
	{"command", CONF_STRING, OFFER(command), 0, 4095, "", NULL,
	 "With [provider] kind = exec: the program that launches this offer's instances; empty: [exec] command."},
	{"machine", CONF_STRING, OFFER(machine), 0, 255, "", NULL,
	 "With [provider] kind = exec: the cloud's name for this machine (an EC2 instance type, a GCP machine type, a RunPod GPU type), for the program to launch."},
	{"gpu", CONF_STRING, OFFER(gpu), 0, CONF_NAME_MAX, "", NULL, "GPU model, for people (e.g. A10G)."},
	{"gpus", CONF_INT, OFFER(gpus), 1, 64, "1", NULL, "GPUs of one instance."},
	{"vram_gb", CONF_INT, OFFER(vram_gb), 0, 4096, "24", NULL, "Memory of each GPU, GB."},
	{"price_ondemand", CONF_DOUBLE, OFFER(price_ondemand), 0, 0, "", NULL,
	 "USD per hour of one instance on demand; empty: not sold on demand.", .fmin = 0, .fmax = 10000,
	 .optional = 1},
	{"price_spot", CONF_DOUBLE, OFFER(price_spot), 0, 0, "", NULL,
	 "USD per hour of one instance on the spot market; empty: no spot.", .fmin = 0, .fmax = 10000,
	 .optional = 1},
	{"boot", CONF_DURATION, OFFER(boot_ms), 0, 3600 * 1000, "0s", NULL,
	 "Expected time from launch to a registered worker, until measured."},
	{"speed", CONF_DOUBLE, OFFER(speed), 0, 0, "1", NULL,
	 "Throughput relative to the reference GPU, until measured.", .fmin = 0.001, .fmax = 1000},
	{"reliability", CONF_DOUBLE, OFFER(reliability), 0, 0, "0.8", NULL,
	 "Spot: chance of no reclaim in an hour, until measured.", .fmin = 0, .fmax = 1},
	{"billing", CONF_ENUM, OFFER(billing), 0, 0, "per-second", billings,
	 "How the provider bills a running instance: per started second, minute or hour."},
	{"billing_minimum", CONF_DURATION, OFFER(billing_minimum_ms), 0, 3600 * 1000, "1m", NULL,
	 "Least time billed for one instance."},
	{"max_instances", CONF_INT, OFFER(max_instances), 0, 100000, "0", NULL,
	 "Instances of this offer at once; 0: only the global limits."},
	{"spot_reclaim_rate", CONF_DOUBLE, OFFER(spot_reclaim_rate), 0, 0, "0", NULL,
	 "Local provider faults: reclaims per hour of a spot instance of this offer.", .fmin = 0, .fmax = 3600},
	{"launch_failure_rate", CONF_DOUBLE, OFFER(launch_failure_rate), 0, 0, "0", NULL,
	 "Local provider faults: share of spot launches that fail with a capacity error.", .fmin = 0, .fmax = 1},
	{0},
};

/* A handler's command line must cut into words: the lease hands them to
 * the worker as the handler's argv. */
static int check_handler(const void *ctx, const char *value, char *why, size_t whysize)
{
	char buf[WORDS_LINE_MAX + 1], *words[WORDS_MAX];

	(void)ctx;
	return !value[0] || words_split(value, buf, words, WORDS_MAX, why, whysize) > 0 ? 0 : -1;
}

#define TYPE(field) offsetof(struct type_conf, field)
static const struct conf_key type_keys[] = {
	{"max_running", CONF_INT, TYPE(max_running), 0, 1000000, "0", NULL,
	 "Jobs of this type leased at once at most; 0 means no limit."},
	{"gpu_share", CONF_DOUBLE, TYPE(gpu_share), 0, 0, "1", NULL,
	 "The part of one GPU a job of this type takes (1/4 or 0.25): jobs of shared types run on one GPU, "
	 "time-sliced, up to shares adding to 1. Only for one-GPU jobs; 1 is a whole GPU.",
	 .fmin = 0, .fmax = 1, .fraction = 1},
	{"vram_gb", CONF_INT, TYPE(vram_gb), 0, 4096, "0", NULL,
	 "GPU memory a job of this type needs; on a shared GPU the jobs' vram_gb add up to at most its memory. "
	 "0: not said."},
	{"handler", CONF_STRING, TYPE(handler), 0, WORDS_LINE_MAX, "", NULL,
	 "A resident handler: a command line (words, no shell) a worker starts once and hands this type's payload jobs (docs/JOBS.md). Empty: none; each job needs a command.",
	 .check = check_handler},
	{"setup", CONF_DURATION, TYPE(setup_ms), 0, DAY_MS, "0s", NULL,
	 "A handler's setup (start to ready) until a worker measured one: a launch's cold start is its boot plus this "
	 "(docs/SCALING.md); ebb sim replays it. Only with a handler."},
	{0},
};

#define TEAM(field) offsetof(struct team_conf, field)
static const struct conf_key team_keys[] = {
	{"quota_gpus", CONF_INT, TEAM(quota_gpus), 0, 1000000, "0", NULL,
	 "GPUs the team is guaranteed when it has work, out of [scaler] max_gpus; the quotas of all teams add up to max_gpus at most."},
	{"borrowing_limit_gpus", CONF_DOUBLE, TEAM(borrowing_limit_gpus), 0, 0, "", NULL,
	 "Most GPUs the team may use beyond its quota, out of what others leave unused; empty: no limit.",
	 .fmin = 0, .fmax = 1000000, .optional = 1},
	{"lending_limit_gpus", CONF_DOUBLE, TEAM(lending_limit_gpus), 0, 0, "", NULL,
	 "Most of the team's unused quota that others may borrow; empty: all of it.",
	 .fmin = 0, .fmax = 1000000, .optional = 1},
	{"weight", CONF_DOUBLE, TEAM(weight), 0, 0, "1", NULL,
	 "The team's share when several teams borrow the same free GPUs (weighted max-min).",
	 .fmin = 0.001, .fmax = 1000},
	{"monthly_budget", CONF_DOUBLE, TEAM(monthly_budget), 0, 0, "", NULL,
	 "USD the team may spend in a calendar month (UTC); empty: no budget.", .fmin = 0, .fmax = 1e9,
	 .optional = 1},
	{"preempt_within", CONF_BOOL, TEAM(preempt_within), 0, 1, "off", NULL,
	 "When the team is at its share and no launch can serve it, a queued job of higher priority preempts a running one of lower priority of the same team, through its checkpoint."},
	{0},
};

#define TOKEN(field) offsetof(struct token_conf, field)
static const struct conf_key token_keys[] = {
	{"secret", CONF_STRING, TOKEN(secret), 16, 255, "", NULL,
	 "The bearer token itself (16 characters at least). Required.", 1},
	{"role", CONF_ENUM, TOKEN(role), 0, 0, "submit", roles,
	 "admin: everything. submit: submits and sees its team's jobs. worker: leases and reports jobs."},
	{"team", CONF_STRING, TOKEN(team), 0, CONF_NAME_MAX, "", NULL,
	 "Team of a submit token: its jobs carry this team and it sees only them. Required for role = submit."},
	{0},
};

static const struct conf_section core_sections[] = {
	{"server", 0, server_keys, 0, 0, 0, 0, "The HTTP API."},
	{"store", 0, store_keys, 0, 0, 0, 0, "Where jobs are kept."},
	{"queue", 0, queue_keys, 0, 0, 0, 0, "Queue semantics and their defaults."},
	{"scaler", 0, scaler_keys, 0, 0, 0, 0, "When instances are launched and released (docs/SCALING.md)."},
	{"provider", 0, provider_keys, 0, 0, 0, 0, "Where instances come from."},
	{"alerts", 0, alerts_keys, 0, 0, 0, 0, "What serve tells of, and when (docs/ALERTS.md). Each rule can be switched off."},
	{"lane", 1, lane_keys, sizeof(struct lane_conf), CFG(lane_confs), CFG(nlane_confs),
	 LANE(name), "One section per lane whose wait target is not the default, e.g. [lane.express]."},
	{"offer", 1, offer_keys, sizeof(struct offer_conf), CFG(offers), CFG(noffers),
	 OFFER(name), "Instance types the provider can launch, e.g. [offer.a10g]. With none, one offer 'default': 1 GPU, price 0, boot 0."},
	{"type", 1, type_keys, sizeof(struct type_conf), CFG(types), CFG(ntypes),
	 TYPE(name), "One section per job type that needs a limit or a resident handler, e.g. [type.transcode]."},
	{"token", 1, token_keys, sizeof(struct token_conf), CFG(tokens), CFG(ntokens),
	 TOKEN(name), "One section per bearer token, e.g. [token.ci]. With none, the API is open and listens on loopback only."},
	{"webhook", 1, webhook_keys, sizeof(struct webhook_conf), CFG(webhooks), CFG(nwebhooks),
	 WEBHOOK(name), "One section per receiver of alerts, e.g. [webhook.oncall]: Alertmanager's webhook JSON, with retries."},
	{"team", 1, team_keys, sizeof(struct team_conf), CFG(teams), CFG(nteams),
	 TEAM(name), "One section per team with a GPU quota, e.g. [team.research] (docs/TEAMS.md). With none, all jobs share the fleet alike."},
	{0},
};

int config_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CONF_NAME_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* Finds the item named name in a multi section, appending it if new. */
static void *multi_item(struct config *cfg, const struct conf_section *s, const char *name)
{
	char **items = (char **)((char *)cfg + s->items_offset);
	size_t *count = (size_t *)((char *)cfg + s->count_offset);
	char *item;

	for (size_t i = 0; i < *count; i++) {
		item = *items + i * s->item_size;
		if (strcmp(*(char **)(item + s->name_offset), name) == 0)
			return item;
	}
	*items = mem_realloc(*items, (*count + 1) * s->item_size);
	item = *items + (*count)++ * s->item_size;
	memset(item, 0, s->item_size);
	conftab_defaults(s->keys, item);
	*(char **)(item + s->name_offset) = mem_strdup(name);
	return item;
}

static const struct conf_section *find_section(const char *section, const char **item_name)
{
	for (const struct conf_section *s = core_sections; s->name; s++) {
		size_t n = strlen(s->name);
		if (!s->multi && strcmp(section, s->name) == 0)
			return s;
		if (s->multi && strncmp(section, s->name, n) == 0 && section[n] == '.') {
			*item_name = section + n + 1;
			return s;
		}
	}
	return NULL;
}

/* The plug-in section called name, or -1. */
static int plugin_section(const struct config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nsections; i++) {
		if (strcmp(cfg->sections[i].plugin->name, name) == 0)
			return i;
	}
	return -1;
}

const void *config_plugin(const struct config *cfg, const char *name)
{
	int i = plugin_section(cfg, name);

	return i >= 0 ? cfg->sections[i].values : NULL;
}

/* "server, store, ..., local, lane.NAME, ... or token.NAME": the sections
 * a file may hold, the plug-ins' after the core's single ones. */
static void section_names(const struct config *cfg, char *buf, size_t size)
{
	const char *names[64];
	int multi[64], n = 0;

	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi) {
			multi[n] = 0;
			names[n++] = s->name;
		}
	}
	for (int i = 0; i < cfg->nsections && n < 48; i++) {
		multi[n] = 0;
		names[n++] = cfg->sections[i].plugin->name;
	}
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (s->multi) {
			multi[n] = 1;
			names[n++] = s->name;
		}
	}
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i],
			 multi[i] ? ".NAME" : "");
	}
}

/* The section an unknown one may have meant, into buf ("scaler" for
 * "scalr", "lane.gpu" for "lan.gpu"); NULL when none is close. */
static const char *near_section(const struct config *cfg, const char *section, char *buf, size_t size)
{
	const char *dot = strchr(section, '.');
	struct suggest near;

	suggest_init(&near, section, dot ? (size_t)(dot - section) : strlen(section));
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi == !dot)
			suggest_consider(&near, s->name);
	}
	for (int i = 0; i < cfg->nsections && !dot; i++)
		suggest_consider(&near, cfg->sections[i].plugin->name);
	if (!near.best)
		return NULL;
	snprintf(buf, size, "%s%s", near.best, dot ? dot : "");
	return buf;
}

/* "; did you mean 'interval'?" for an unknown key, into buf, when one of
 * the section's keys is close to it; else "". */
static const char *near_key(const struct conf_key *keys, const char *key, char *buf, size_t size)
{
	struct suggest near;

	suggest_init(&near, key, strlen(key));
	for (const struct conf_key *k = keys; k->name; k++)
		suggest_consider(&near, k->name);
	if (!near.best)
		return "";
	snprintf(buf, size, "; did you mean '%s'?", near.best);
	return buf;
}

int config_set(struct config *cfg, const char *section, const char *key, const char *value,
	       char *err, size_t errsize)
{
	const char *item_name = NULL;
	const struct conf_section *s = find_section(section, &item_name);
	int plugin = s ? -1 : plugin_section(cfg, section);
	const struct conf_key *k;
	char why[200], names[512];
	void *base = cfg;

	if (!s && plugin < 0 && near_section(cfg, section, why, sizeof why)) {
		conftab_errf(err, errsize, "[%s]: unknown section; did you mean [%s]?", section, why);
		return -1;
	}
	if (!s && plugin < 0) {
		section_names(cfg, names, sizeof names);
		conftab_errf(err, errsize, "[%s]: unknown section (expected %s)", section, names);
		return -1;
	}
	if (s && s->multi) {
		if (!config_name_ok(item_name)) {
			conftab_errf(err, errsize, "[%s]: expected a name of letters, digits, '_', '.' or '-'",
				section);
			return -1;
		}
		base = multi_item(cfg, s, item_name);
	}
	if (plugin >= 0)
		base = cfg->sections[plugin].values;
	if (!(k = conftab_key(s ? s->keys : cfg->sections[plugin].plugin->keys, key))) {
		conftab_errf(err, errsize, "[%s] %s: unknown key%s", section, key,
			     near_key(s ? s->keys : cfg->sections[plugin].plugin->keys, key, why, sizeof why));
		return -1;
	}
	if (conftab_set(k, base, value, cfg, why, sizeof why) != 0) {
		conftab_errf(err, errsize, "[%s] %s: %s", section, key, why);
		return -1;
	}
	return 0;
}

/* Each plug-in with keys gets its section, at its defaults. */
static void add_plugin_sections(struct config *cfg, const struct conf_plugin *const *list)
{
	for (const struct conf_plugin *const *p = list; p && *p; p++) {
		void *values;
		if (!(*p)->keys || cfg->nsections == CONF_MAX_PLUGINS || !(values = mem_calloc(1, (*p)->size)))
			continue;
		conftab_defaults((*p)->keys, values);
		cfg->sections[cfg->nsections].plugin = *p;
		cfg->sections[cfg->nsections++].values = values;
	}
}

void config_defaults(struct config *cfg, const struct conf_plugins *plugins)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->plugins = plugins;
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi)
			conftab_defaults(s->keys, cfg);
	}
	if (plugins) {
		add_plugin_sections(cfg, plugins->stores);
		add_plugin_sections(cfg, plugins->providers);
	}
	/* The default lanes always split; config_load re-derives them. */
	cfg->nlanes = 3;
	strcpy(cfg->lane_names[0], "express");
	strcpy(cfg->lane_names[1], "standard");
	strcpy(cfg->lane_names[2], "batch");
}

/* inih reads lines through this so that every error can name its line. */
struct reader {
	FILE *file;
	int line;
	struct config *cfg;
	char err[512];
	int err_line;
	int read_errno; /* the file could not be read (a directory) */
};

/* inih keeps this much of a section name and drops the rest (MAX_SECTION
 * in its ini.c): [type.NAME] would name another type. */
#define INI_SECTION_MAX 49

static char *refuse_line(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *refuse_line(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	r->err_line = r->line;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	return NULL;
}

/* One line for inih, or NULL at the end, at the first error, or for what
 * inih would silently mangle: it reads a long line as two (the rest as a
 * line of its own, or as the key's new value when it starts with a
 * space), ends a line at a NUL byte, and cuts long section names. */
static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	const char *section;
	int n = 0, c;

	if (r->err_line)
		return NULL;
	while ((c = getc(r->file)) != EOF && c != '\n') {
		if (c == '\0' || n == num - 1) {
			r->line++;
			if (c == '\0')
				return refuse_line(r, "a NUL byte: not a text file");
			return refuse_line(r, "line longer than %d characters", num - 1);
		}
		str[n++] = (char)c;
	}
	if (c == EOF && ferror(r->file))
		r->read_errno = errno;
	if (c == EOF && n == 0)
		return NULL;
	str[n] = '\0';
	r->line++;
	section = str + strspn(str, " \t");
	if (*section == '[' && strcspn(section + 1, "]") > INI_SECTION_MAX)
		return refuse_line(r, "section name longer than %d characters", INI_SECTION_MAX);
	return str;
}

/* Why value would not read back the same from what `ebb config` writes,
 * "key = value", or NULL. inih takes "key =;x" as the value ";x", but
 * "key = ;x" as an empty value and a comment; and it takes an indented
 * line, which continues the key before it, whole, where on a key's line
 * " ;" starts a comment. A comment was surely meant. */
static const char *unwritable(const char *value)
{
	if (value[0] == ';')
		return "a value may not start with ';' (a comment needs a space before it)";
	for (const char *p = value; *p; p++) {
		if (isspace((unsigned char)p[0]) && p[1] == ';')
			return "a value may not hold ' ;', which starts a comment (is this an indented line? it continues"
			       " the key before it)";
	}
	return NULL;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;
	const char *why_not;
	char why[400];

	if (r->err_line)
		return 1; /* keep the first error */
	if ((why_not = unwritable(value))) {
		r->err_line = r->line;
		snprintf(r->err, sizeof r->err, "[%s] %s: %s", section, name, why_not);
		return 1;
	}
	if (config_set(r->cfg, section, name, value, why, sizeof why) != 0) {
		r->err_line = r->line;
		snprintf(r->err, sizeof r->err, "%s", why);
	}
	return 1;
}

static int derive_lanes(struct config *cfg, char *err, size_t errsize)
{
	char *list = mem_strdup(cfg->lanes), *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (n == CONF_MAX_LANES || !config_name_ok(tok)) {
			conftab_errf(err, errsize, "[queue] lanes: '%s' is not a lane name, or more than %d lanes",
				tok, CONF_MAX_LANES);
			free(list);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (strcmp(cfg->lane_names[i], tok) == 0) {
				conftab_errf(err, errsize, "[queue] lanes: '%s' is listed twice", tok);
				free(list);
				return -1;
			}
		}
		snprintf(cfg->lane_names[n++], CONF_NAME_MAX + 1, "%s", tok);
	}
	free(list);
	cfg->nlanes = n;
	if (config_lane_rank(cfg, cfg->default_lane) < 0) {
		conftab_errf(err, errsize, "[queue] default_lane: '%s' is not one of the lanes '%s'",
			cfg->default_lane, cfg->lanes);
		return -1;
	}
	return 0;
}

static int check_tokens(const struct config *cfg, char *err, size_t errsize)
{
	for (size_t i = 0; i < cfg->ntokens; i++) {
		const struct token_conf *t = &cfg->tokens[i];
		if (strlen(t->secret) < 16) {
			conftab_errf(err, errsize, "[token.%s] secret: required, 16 characters at least", t->name);
			return -1;
		}
		if (t->role == ROLE_SUBMIT && !config_name_ok(t->team)) {
			conftab_errf(err, errsize, "[token.%s] team: required for role = submit", t->name);
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->tokens[j].secret, t->secret) == 0) {
				conftab_errf(err, errsize, "[token.%s] secret: the same as [token.%s]", t->name,
					cfg->tokens[j].name);
				return -1;
			}
		}
	}
	return 0;
}

/* A limit given in GPUs is whole: "1.5 GPUs" is a typo, not a share. */
static int whole_gpus(const struct team_conf *t, const char *key, double v, char *err, size_t errsize)
{
	if (v != CONF_ABSENT && v != (double)(int64_t)v) {
		conftab_errf(err, errsize, "[team.%s] %s: expected a whole number of GPUs, got %g", t->name, key, v);
		return -1;
	}
	return 0;
}

/* The quotas are shares of max_gpus: more than it in all could never be
 * kept, so the file is refused with the numbers. */
static int check_teams(const struct config *cfg, char *err, size_t errsize)
{
	int64_t sum = 0;
	char each[256] = "";

	if (cfg->nteams > CONF_MAX_TEAMS) {
		conftab_errf(err, errsize, "[team.*]: %zu sections, %d at most", cfg->nteams, CONF_MAX_TEAMS);
		return -1;
	}
	for (size_t i = 0; i < cfg->nteams; i++) {
		const struct team_conf *t = &cfg->teams[i];
		size_t len = strlen(each);
		if (whole_gpus(t, "borrowing_limit_gpus", t->borrowing_limit_gpus, err, errsize) != 0 ||
		    whole_gpus(t, "lending_limit_gpus", t->lending_limit_gpus, err, errsize) != 0)
			return -1;
		sum += t->quota_gpus;
		snprintf(each + len, sizeof each - len, "%s%s %lld", i ? ", " : "", t->name, (long long)t->quota_gpus);
	}
	if (sum > cfg->max_gpus) {
		conftab_errf(err, errsize, "[team.*] quota_gpus: they add up to %lld (%s), more than [scaler] max_gpus = %lld",
			     (long long)sum, each, (long long)cfg->max_gpus);
		return -1;
	}
	return 0;
}

int config_check(struct config *cfg, char *err, size_t errsize)
{
	char why[300];

	for (int i = 0; i < cfg->nsections; i++) {
		const struct conf_plugin *p = cfg->sections[i].plugin;
		if (p->check && p->check(cfg->sections[i].values, why, sizeof why) != 0) {
			conftab_errf(err, errsize, "[%s] %s", p->name, why);
			return -1;
		}
	}
	for (size_t i = 0; i < cfg->noffers; i++) {
		const struct offer_conf *o = &cfg->offers[i];
		if (o->price_ondemand == CONF_ABSENT && o->price_spot == CONF_ABSENT) {
			conftab_errf(err, errsize, "[offer.%s]: needs price_ondemand, price_spot or both", o->name);
			return -1;
		}
	}
	if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
		conftab_errf(err, errsize, "[server] %s: set without %s; give both or neither",
			cfg->tls_cert[0] ? "tls_cert" : "tls_key", cfg->tls_cert[0] ? "tls_key" : "tls_cert");
		return -1;
	}
	for (size_t i = 0; i < cfg->nwebhooks; i++) {
		const char *url = cfg->webhooks[i].url;
		if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
			conftab_errf(err, errsize, "[webhook.%s] url: required, an http:// or https:// URL, got '%s'",
				     cfg->webhooks[i].name, url);
			return -1;
		}
	}
	if (check_teams(cfg, err, errsize) != 0)
		return -1;
	/* A complete carries the result in its body, with room to spare. */
	if (cfg->result_max > cfg->max_body / 2)
		cfg->result_max = cfg->max_body / 2;
	if (cfg->ntypes > CONF_MAX_TYPES) {
		conftab_errf(err, errsize, "[type.*]: %zu sections, %d at most", cfg->ntypes, CONF_MAX_TYPES);
		return -1;
	}
	for (size_t i = 0; i < cfg->ntypes; i++) {
		if (cfg->types[i].setup_ms > 0 && !cfg->types[i].handler[0]) {
			conftab_errf(err, errsize, "[type.%s] setup: is a resident handler's; the type has no handler",
				     cfg->types[i].name);
			return -1;
		}
	}

	if (warm_parse(cfg->warm, &cfg->warm_schedule, why, sizeof why) != 0) {
		conftab_errf(err, errsize, "[scaler] warm: %s", why);
		return -1;
	}
	if (cfg->idle_timeout_min_ms > cfg->idle_timeout_max_ms) {
		conftab_errf(err, errsize, "[scaler] idle_timeout_min is above idle_timeout_max");
		return -1;
	}
	if (cfg->decay_t1_ms > cfg->decay_t2_ms) {
		conftab_errf(err, errsize, "[scaler] idle_decay_t1 is after idle_decay_t2");
		return -1;
	}
	for (size_t i = 0; i < cfg->nlane_confs; i++) {
		if (config_lane_rank(cfg, cfg->lane_confs[i].name) < 0) {
			conftab_errf(err, errsize, "[lane.%s]: not one of [queue] lanes (%s)", cfg->lane_confs[i].name,
				cfg->lanes);
			return -1;
		}
	}
	return 0;
}

int config_load(struct config *cfg, const struct conf_plugins *plugins, const char *path, char *err,
		size_t errsize)
{
	struct reader r = {.cfg = cfg};
	char why[512];
	int rc;

	config_defaults(cfg, plugins);
	r.file = fopen(path, "r");
	if (!r.file) {
		conftab_errf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(read_line, &r, on_key, &r);
	fclose(r.file);
	if (r.read_errno) {
		conftab_errf(err, errsize, "%s: cannot read: %s", path, strerror(r.read_errno));
		return -1;
	}
	/* The first error by line: inih's syntax error (rc) comes before the
	 * key it leads us to refuse ("[server" leaves the next keys in no
	 * section). */
	if (r.err_line && (rc <= 0 || r.err_line < rc)) {
		conftab_errf(err, errsize, "%s:%d: %s", path, r.err_line, r.err);
		return -1;
	}
	if (rc != 0) {
		conftab_errf(err, errsize, "%s:%d: expected [section] or key = value",
			path, rc);
		return -1;
	}
	if (derive_lanes(cfg, why, sizeof why) != 0 || check_tokens(cfg, why, sizeof why) != 0 ||
	    config_check(cfg, why, sizeof why) != 0) {
		conftab_errf(err, errsize, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

void config_free(struct config *cfg)
{
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi) {
			conftab_free(s->keys, cfg);
			continue;
		}
		char *items = *(char **)((char *)cfg + s->items_offset);
		size_t count = *(size_t *)((char *)cfg + s->count_offset);
		for (size_t i = 0; i < count; i++) {
			conftab_free(s->keys, items + i * s->item_size);
			free(*(char **)(items + i * s->item_size + s->name_offset));
		}
		free(items);
	}
	for (int i = 0; i < cfg->nsections; i++) {
		conftab_free(cfg->sections[i].plugin->keys, cfg->sections[i].values);
		free(cfg->sections[i].values);
	}
	memset(cfg, 0, sizeof *cfg);
}

/* The plug-ins' sections come after the core's single sections, before
 * the lists ([lane.NAME], ...), in the example and in config_write. */
static void write_plugin_examples(FILE *out, const struct conf_plugin *const *list)
{
	for (const struct conf_plugin *const *p = list; p && *p; p++) {
		if (!(*p)->keys)
			continue;
		fprintf(out, "\n# %s\n[%s]\n", (*p)->help, (*p)->name);
		conftab_write_example(out, (*p)->keys, 0);
	}
}

void config_write_example(FILE *out, const struct conf_plugins *plugins)
{
	fprintf(out, "# ebb.conf: every key with its default. Generated by `ebb config --example`.\n"
		     "# Durations take a unit (500ms, 3s, 10m, 1h, 2d); sizes too (64KiB, 1MiB).\n");
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (s->multi)
			continue;
		fprintf(out, "\n# %s\n[%s]\n", s->help, s->name);
		conftab_write_example(out, s->keys, 0);
	}
	if (plugins) {
		write_plugin_examples(out, plugins->stores);
		write_plugin_examples(out, plugins->providers);
	}
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi)
			continue;
		fprintf(out, "\n# %s\n#[%s.NAME]\n", s->help, s->name);
		conftab_write_example(out, s->keys, 1);
	}
}

void config_write(const struct config *cfg, FILE *out)
{
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (s->multi)
			continue;
		fprintf(out, "[%s]\n", s->name);
		conftab_write_values(out, s->keys, cfg);
		fputc('\n', out);
	}
	for (int i = 0; i < cfg->nsections; i++) {
		fprintf(out, "[%s]\n", cfg->sections[i].plugin->name);
		conftab_write_values(out, cfg->sections[i].plugin->keys, cfg->sections[i].values);
		fputc('\n', out);
	}
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (!s->multi)
			continue;
		const char *items = *(char *const *)((const char *)cfg + s->items_offset);
		size_t count = *(const size_t *)((const char *)cfg + s->count_offset);
		for (size_t i = 0; i < count; i++) {
			const char *item = items + i * s->item_size;
			fprintf(out, "[%s.%s]\n", s->name, *(char *const *)(item + s->name_offset));
			conftab_write_values(out, s->keys, item);
			fputc('\n', out);
		}
	}
}

int config_lane_rank(const struct config *cfg, const char *lane)
{
	for (int i = 0; i < cfg->nlanes; i++) {
		if (strcmp(cfg->lane_names[i], lane) == 0)
			return i;
	}
	return -1;
}

json_t *config_offer_json(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->noffers; i++) {
		if (strcmp(cfg->offers[i].name, name) == 0) {
			json_t *o = conftab_json(offer_keys, &cfg->offers[i]);
			json_object_set_new(o, "name", json_string(name));
			return o;
		}
	}
	return NULL;
}

const struct type_conf *config_type(const struct config *cfg, const char *type)
{
	for (size_t i = 0; i < cfg->ntypes; i++) {
		if (strcmp(cfg->types[i].name, type) == 0)
			return &cfg->types[i];
	}
	return NULL;
}

double config_gpu_share(const struct config *cfg, const char *type)
{
	const struct type_conf *t = config_type(cfg, type);

	return t ? t->gpu_share : 1;
}

const char *config_handler(const struct config *cfg, const char *type)
{
	const struct type_conf *t = config_type(cfg, type);

	return t && t->handler[0] ? t->handler : NULL;
}

const struct team_conf *config_team(const struct config *cfg, const char *team)
{
	for (size_t i = 0; i < cfg->nteams; i++) {
		if (strcmp(cfg->teams[i].name, team) == 0)
			return &cfg->teams[i];
	}
	return NULL;
}

int64_t config_wait_target_ms(const struct config *cfg, const char *lane)
{
	for (size_t i = 0; lane && i < cfg->nlane_confs; i++) {
		if (strcmp(cfg->lane_confs[i].name, lane) == 0)
			return cfg->lane_confs[i].wait_target_ms;
	}
	return 5 * 60 * 1000;
}

int config_keys(const char *section, void (*fn)(const struct config_key_info *key, void *arg), void *arg)
{
	for (const struct conf_section *s = core_sections; s->name; s++) {
		if (strcmp(s->name, section) != 0)
			continue;
		for (const struct conf_key *k = s->keys; k->name; k++) {
			struct config_key_info info = {
				.name = k->name, .type = conftab_type_name(k->type), .def = k->def, .auto_ok = k->auto_ok,
			};
			conftab_bounds(k, info.min, info.max, sizeof info.min);
			fn(&info, arg);
		}
		return 0;
	}
	return -1;
}

void config_serve_id(const struct config *cfg, char *id, size_t size)
{
	char host[256] = "localhost";

	if (cfg->serve_name[0]) {
		snprintf(id, size, "%s", cfg->serve_name);
		return;
	}
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	snprintf(id, size, "%.200s:%d", host, (int)getpid());
}
