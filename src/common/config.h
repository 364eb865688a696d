/* ebb's configuration: one INI file, every key described once in a key
 * table (conftab.h), which drives parsing, bounds, defaults, `ebb config`
 * and the shipped ebb.conf.example. The core sections are config.c's; a
 * store engine or a provider kind brings its own section, [NAME], as a
 * plug-in (struct conf_plugin), read by the same machinery. */
#ifndef EBB_CONFIG_H
#define EBB_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/conftab.h"
#include "common/warm.h"

#define CONF_MAX_LANES 16
#define CONF_NAME_MAX 64
#define CONF_MAX_PLUGINS 16
#define CONF_MAX_TYPES 64

enum role { ROLE_ADMIN, ROLE_SUBMIT, ROLE_WORKER };

struct type_conf {
	char *name;
	int64_t max_running; /* 0: no limit */
	/* The part of one GPU a job of the type takes (docs/SCALING.md,
	 * "GPUs shared"): 1, a whole one, unless set; and the GPU memory it
	 * needs there, to keep the sum within the GPU's (0: not said). */
	double gpu_share;
	int64_t vram_gb;
	char *handler;       /* a resident handler's command line (common/words.h); "": none */
	/* The handler's setup (start to ready) to expect until a worker
	 * measured one: what the scaler adds to a boot, and the simulator's. */
	int64_t setup_ms;
};

struct lane_conf {
	char *name;
	int64_t wait_target_ms;
};

enum billing { BILL_PER_SECOND, BILL_PER_MINUTE, BILL_PER_HOUR };

struct offer_conf {
	char *name;
	char *command; /* the exec provider's program for it; "": [exec] command */
	char *machine; /* the cloud's name for the machine, for that program */
	char *gpu;
	int64_t gpus;
	int64_t vram_gb;
	double price_ondemand; /* USD/h; CONF_ABSENT: not sold on demand */
	double price_spot;     /* USD/h; CONF_ABSENT: no spot market */
	int64_t boot_ms;
	double speed;
	double reliability;
	int64_t billing; /* enum billing */
	int64_t billing_minimum_ms;
	int64_t max_instances;
	double spot_reclaim_rate;   /* local provider faults: reclaims per hour */
	double launch_failure_rate; /* local provider faults: share of launches */
};

/* A plug-in's share of the configuration: a store engine or a provider
 * kind, chosen by its name ([store] kind, [provider] kind), and, when keys
 * is not NULL, a section [NAME] of keys of its own. */
struct conf_plugin {
	const char *name;
	const char *help;            /* its section's comment */
	const struct conf_key *keys; /* NULL: no section */
	size_t size;                 /* of the struct its keys fill */
	/* Checks across its keys; NULL: none. 0, or -1 with the reason. */
	int (*check)(const void *values, char *err, size_t errsize);
};

/* The plug-ins a configuration may name, in NULL-terminated lists. */
struct conf_plugins {
	const struct conf_plugin *const *stores;
	const struct conf_plugin *const *providers;
};

/* [alerts]: each rule's switch, thresholds and `for` (how long its
 * condition must hold before it fires); for the rules of events, the
 * window they count in. serve/alert_rules.c reads them. */
struct alerts_conf {
	int64_t idle, idle_ondemand_ms, idle_spot_ms, idle_for_ms;
	int64_t queue_wait;
	double queue_wait_factor;
	int64_t queue_wait_for_ms;
	int64_t spot_share;
	double spot_share_min;
	int64_t spot_share_for_ms;
	int64_t launch_failures, launch_failures_for_ms;
	int64_t dead_letter, dead_letter_min, dead_letter_window_ms, dead_letter_for_ms;
	int64_t worker_lost, worker_lost_window_ms, worker_lost_for_ms;
	int64_t store_errors, store_errors_window_ms, store_errors_for_ms;
	int64_t team_budget;
	double team_budget_warn;
	int64_t team_budget_for_ms;
	int64_t unplaceable, unplaceable_for_ms;
	int64_t webhook_timeout_ms, webhook_retry_max_ms;
};

/* [webhook.NAME]: where alerts are posted, in Alertmanager's format. */
struct webhook_conf {
	char *name;
	char *url;
	char *token; /* a bearer token the receiver wants; "" for none */
};

/* [team.NAME]: a team's share of [scaler] max_gpus (docs/TEAMS.md). */
struct team_conf {
	char *name;
	int64_t quota_gpus;
	double borrowing_limit_gpus; /* whole GPUs; CONF_ABSENT: no limit */
	double lending_limit_gpus;   /* whole GPUs; CONF_ABSENT: all its unused quota */
	double weight;
	double monthly_budget; /* USD; CONF_ABSENT: none */
	int preempt_within;    /* at its share, a higher priority preempts a lower one of its own */
};

/* The team of jobs whose team has no [team.NAME] section. */
#define CONF_DEFAULT_TEAM "default"
/* [team.NAME] sections at most, [team.default] included. */
#define CONF_MAX_TEAMS 32

struct token_conf {
	char *name;
	char *secret;
	int64_t role; /* enum role */
	char *team;
};

/* The most [queue] result_max may be: a job's result, as serve stores it
 * (job_stored_json), is never larger, and the longest control line a
 * worker reads is sized for it. */
#define CONF_RESULT_MAX (1024 * 1024)

struct config {
	/* [server] */
	char *listen;
	char *serve_name; /* "": HOST:PID */
	char *data_dir;
	int64_t max_body;
	int64_t log_level; /* enum log_level */
	int64_t max_connections;
	int64_t connection_timeout_ms;
	char *tls_cert, *tls_key; /* PEM files; "": plain HTTP */
	int64_t private_network;  /* plain HTTP off loopback is allowed */
	/* [store] */
	char *store_kind; /* a store engine's name */
	/* [queue] */
	char *lanes;
	char *default_lane;
	int64_t max_queued;
	int64_t lease_timeout_ms;
	int64_t max_lease_wait_ms;
	int64_t default_timeout_ms;
	int64_t max_attempts;
	int64_t retry_base_ms;
	int64_t retry_max_ms;
	int64_t log_max;
	int64_t log_retention_ms;
	int64_t logs_max_total;
	int64_t result_max; /* at most half of max_body (config_check cuts it) */
	/* [scaler] */
	int64_t scaler_interval_ms;
	int64_t max_instances;
	int64_t max_gpus;
	double max_spend_per_hour;
	int64_t idle_timeout_ms; /* CONF_AUTO: from the arrival gaps */
	int64_t idle_surplus_ms;
	int64_t arrival_window_ms;
	int64_t idle_timeout_min_ms;
	int64_t idle_timeout_max_ms;
	int64_t idle_decay;
	int64_t decay_t1_ms;
	int64_t decay_t2_ms;
	int64_t boot_timeout_ms;
	char *warm;
	int64_t default_est_ms;
	double max_price;
	double min_reliability;
	double max_share_per_offer;
	int64_t use_spot;
	int64_t checkpoint_every_ms;
	int64_t capacity_rest_ms;
	int64_t preempt_min_runtime_ms;
	int64_t preempt_backoff_ms;
	/* [provider] */
	char *provider_kind; /* "none" or a provider kind's name */
	int64_t orphan_timeout_ms;
	char *on_exit;
	char *server_url;
	char *worker_cacert; /* PEM file of the CA workers trust; "": the system's */
	int64_t reclaim_grace_ms;
	/* [alerts] */
	struct alerts_conf alerts;
	/* [type.NAME], [token.NAME], [lane.NAME], [offer.NAME], [webhook.NAME], [team.NAME] */
	struct type_conf *types;
	size_t ntypes;
	struct token_conf *tokens;
	size_t ntokens;
	struct lane_conf *lane_confs;
	size_t nlane_confs;
	struct offer_conf *offers;
	size_t noffers;
	struct webhook_conf *webhooks;
	size_t nwebhooks;
	struct team_conf *teams;
	size_t nteams;

	/* Derived from `warm`. */
	struct warm_schedule warm_schedule;
	/* Derived from `lanes`: names in rank order (0 is served first). */
	char lane_names[CONF_MAX_LANES][CONF_NAME_MAX + 1];
	int nlanes;

	/* The plug-ins it may name (NULL: none, only the core sections), and
	 * the values of their sections. */
	const struct conf_plugins *plugins;
	struct {
		const struct conf_plugin *plugin;
		void *values;
	} sections[CONF_MAX_PLUGINS];
	int nsections;
};

/* Defaults for every key, the plug-ins' sections included. */
void config_defaults(struct config *cfg, const struct conf_plugins *plugins);
/* Defaults, then the file. On error returns -1 and writes
 * "FILE:LINE: [section] key: what was expected" into err. */
int config_load(struct config *cfg, const struct conf_plugins *plugins, const char *path, char *err,
		size_t errsize);
/* The plug-in called name in the NULL-terminated list, or NULL: the one
 * lookup of a registry by name. */
const struct conf_plugin *config_plugin_named(const struct conf_plugin *const *list, const char *name);
/* The values of the plug-in's section [name] (its struct), or NULL. */
const void *config_plugin(const struct config *cfg, const char *name);
/* The checks across keys, and what they derive (the warm schedule):
 * config_load makes them; make them again after config_set. 0, or -1
 * with the reason. */
int config_check(struct config *cfg, char *err, size_t errsize);
/* Sets one key as if read from a file; used by `ebb sim` overrides and tests. */
int config_set(struct config *cfg, const char *section, const char *key, const char *value,
	       char *err, size_t errsize);
void config_free(struct config *cfg);

/* The example file: every key with its default and a comment, the
 * plug-ins' sections included. */
void config_write_example(FILE *out, const struct conf_plugins *plugins);
/* The configuration in force, in the file's own syntax. */
void config_write(const struct config *cfg, FILE *out);

int config_lane_rank(const struct config *cfg, const char *lane); /* -1: unknown */
const struct type_conf *config_type(const struct config *cfg, const char *type);
/* The part of a GPU a job of the type takes: its gpu_share, 1 (a whole
 * GPU) for a type without a section. */
double config_gpu_share(const struct config *cfg, const char *type);
/* The [type.NAME] handler's command line, or NULL when the type has none. */
const char *config_handler(const struct config *cfg, const char *type);
/* The [team.NAME] section, or NULL. */
const struct team_conf *config_team(const struct config *cfg, const char *team);
/* The [offer.NAME] section as a JSON object (conftab_json), its name
 * included; NULL when there is no such offer. */
json_t *config_offer_json(const struct config *cfg, const char *name);
/* The lane's wait target: its [lane.NAME] section or the default (for
 * lane NULL, the default). */
int64_t config_wait_target_ms(const struct config *cfg, const char *lane);
/* A name usable for lanes, types, teams and sections: [A-Za-z0-9_.-], 1..64. */
int config_name_ok(const char *s);

/* One key of the table, its values written as in the file. */
struct config_key_info {
	const char *name;
	const char *type; /* string, integer, number, on/off, duration, size or choice */
	const char *def;
	/* The least and the greatest value (a choice's first and last); empty
	 * for a string. */
	char min[32], max[32];
	int auto_ok; /* a duration that takes "auto" too */
};
/* Calls fn with each key of section, in the table's order: "scaler", or
 * "lane" for the keys of every [lane.NAME]. 0, or -1 when there is no such
 * section. A test walks the keys so that one added later is covered. */
int config_keys(const char *section, void (*fn)(const struct config_key_info *key, void *arg), void *arg);

/* The name this serve goes by: [server] name, else HOST:PID (GET
 * /healthz; with several serves on one database, how they know each
 * other). */
void config_serve_id(const struct config *cfg, char *id, size_t size);

#endif
