/* ebb's configuration: one INI file, every key described once in the table
 * in config.c, which drives parsing, bounds, defaults, `ebb config` and the
 * shipped ebb.conf.example. */
#ifndef EBB_CONFIG_H
#define EBB_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_MAX_LANES 16
#define CONF_NAME_MAX 64

enum role { ROLE_ADMIN, ROLE_SUBMIT, ROLE_WORKER };

struct type_conf {
	char *name;
	int64_t max_running; /* 0: no limit */
};

struct token_conf {
	char *name;
	char *secret;
	int64_t role; /* enum role */
	char *team;
};

struct config {
	/* [server] */
	char *listen;
	char *data_dir;
	int64_t max_body;
	int64_t log_level; /* enum log_level */
	int64_t max_connections;
	int64_t connection_timeout_ms;
	/* [store] */
	int64_t store_kind;
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
	/* [type.NAME] and [token.NAME] */
	struct type_conf *types;
	size_t ntypes;
	struct token_conf *tokens;
	size_t ntokens;

	/* Derived from `lanes`: names in rank order (0 is served first). */
	char lane_names[CONF_MAX_LANES][CONF_NAME_MAX + 1];
	int nlanes;
};

/* Defaults for every key. */
void config_defaults(struct config *cfg);
/* Defaults, then the file. On error returns -1 and writes
 * "FILE:LINE: [section] key: what was expected" into err. */
int config_load(struct config *cfg, const char *path, char *err, size_t errsize);
/* Sets one key as if read from a file; used by `ebb sim` overrides and tests. */
int config_set(struct config *cfg, const char *section, const char *key, const char *value,
	       char *err, size_t errsize);
void config_free(struct config *cfg);

/* The example file: every key with its default and a comment. */
void config_write_example(FILE *out);
/* The configuration in force, in the file's own syntax. */
void config_write(const struct config *cfg, FILE *out);

int config_lane_rank(const struct config *cfg, const char *lane); /* -1: unknown */
const struct type_conf *config_type(const struct config *cfg, const char *type);
/* A name usable for lanes, types, teams and sections: [A-Za-z0-9_.-], 1..64. */
int config_name_ok(const char *s);

#endif
