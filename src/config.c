/* The configuration table and its INI parser (see config.h).
 *
 * Each key is one row: section, name, type, bounds, default and help. The
 * defaults are strings run through the same parser as the file, so the
 * example file, the docs and the values in force cannot drift apart. */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "units.h"

enum conf_type { CONF_STRING, CONF_INT, CONF_DURATION, CONF_SIZE, CONF_ENUM };

struct conf_key {
	const char *name;
	enum conf_type type;
	size_t offset;
	int64_t min, max; /* ints, ms, bytes; for strings the longest length */
	const char *def;
	const char *const *choices; /* CONF_ENUM, NULL-terminated */
	const char *help;
	int secret; /* never printed back */
};

struct conf_section {
	const char *name;
	/* Sections named "NAME.*" hold a list of items (one per [type.X]). */
	int multi;
	const struct conf_key *keys;
	size_t item_size, items_offset, count_offset, name_offset;
	const char *help;
};

static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const store_kinds[] = {"sqlite", NULL};
static const char *const roles[] = {"admin", "submit", "worker", NULL};

#define CFG(field) offsetof(struct config, field)
#define DAY_MS (86400LL * 1000)

static const struct conf_key server_keys[] = {
	{"listen", CONF_STRING, CFG(listen), 1, 255, "127.0.0.1:7070", NULL,
	 "Address and port of the HTTP API. Without a [token.*] section only a loopback address is accepted."},
	{"data_dir", CONF_STRING, CFG(data_dir), 1, 4095, "./ebb-data", NULL,
	 "Directory holding the SQLite database (ebb.db); created if missing."},
	{"max_body", CONF_SIZE, CFG(max_body), 1024, 64LL << 20, "1MiB", NULL,
	 "Largest request body accepted; larger ones get 413."},
	{"log_level", CONF_ENUM, CFG(log_level), 0, 0, "info", log_levels,
	 "Least severe log level written to stderr."},
	{"max_connections", CONF_INT, CFG(max_connections), 16, 1000000, "4096", NULL,
	 "Open HTTP connections at once, long-polling workers included."},
	{"connection_timeout", CONF_DURATION, CFG(connection_timeout_ms), 1000, DAY_MS, "60s", NULL,
	 "An idle keep-alive connection is closed after this long."},
	{0},
};

static const struct conf_key store_keys[] = {
	{"kind", CONF_ENUM, CFG(store_kind), 0, 0, "sqlite", store_kinds,
	 "Store engine. sqlite: one file in data_dir, WAL mode, every commit fsynced."},
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
	{0},
};

#define TYPE(field) offsetof(struct type_conf, field)
static const struct conf_key type_keys[] = {
	{"max_running", CONF_INT, TYPE(max_running), 0, 1000000, "0", NULL,
	 "Jobs of this type leased at once at most; 0 means no limit."},
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

static const struct conf_section sections[] = {
	{"server", 0, server_keys, 0, 0, 0, 0, "The HTTP API."},
	{"store", 0, store_keys, 0, 0, 0, 0, "Where jobs are kept."},
	{"queue", 0, queue_keys, 0, 0, 0, 0, "Queue semantics and their defaults."},
	{"type", 1, type_keys, sizeof(struct type_conf), CFG(types), CFG(ntypes),
	 TYPE(name), "One section per job type that needs a limit, e.g. [type.transcode]."},
	{"token", 1, token_keys, sizeof(struct token_conf), CFG(tokens), CFG(ntokens),
	 TOKEN(name), "One section per bearer token, e.g. [token.ci]. With none, the API is open and listens on loopback only."},
	{0},
};

static void fmt_err(char *err, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fmt_err(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
}

int config_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CONF_NAME_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static void format_value(char *buf, size_t size, const struct conf_key *k, const void *base)
{
	const char *p = (const char *)base + k->offset;
	int64_t v = *(const int64_t *)p;

	switch (k->type) {
	case CONF_STRING:
		snprintf(buf, size, "%s", *(char *const *)p ? *(char *const *)p : "");
		break;
	case CONF_INT:
		snprintf(buf, size, "%lld", (long long)v);
		break;
	case CONF_DURATION:
		format_duration(buf, size, v);
		break;
	case CONF_SIZE:
		format_size(buf, size, v);
		break;
	case CONF_ENUM:
		snprintf(buf, size, "%s", k->choices[v]);
		break;
	}
}

static void format_bound(char *buf, size_t size, const struct conf_key *k, int64_t v)
{
	if (k->type == CONF_DURATION)
		format_duration(buf, size, v);
	else if (k->type == CONF_SIZE)
		format_size(buf, size, v);
	else
		snprintf(buf, size, "%lld", (long long)v);
}

/* Parses value for key k into base + k->offset; on error writes what was
 * expected into err. */
static int set_value(const struct conf_key *k, void *base, const char *value, char *err,
		     size_t errsize)
{
	char *p = (char *)base + k->offset;
	char lo[32], hi[32];
	int64_t v = 0;
	int rc = 0;

	switch (k->type) {
	case CONF_STRING: {
		size_t n = strlen(value);
		if ((int64_t)n > k->max || (n > 0 && (int64_t)n < k->min)) {
			fmt_err(err, errsize, "expected %lld to %lld characters, got %zu",
				(long long)k->min, (long long)k->max, n);
			return -1;
		}
		free(*(char **)p);
		*(char **)p = strdup(value);
		return 0;
	}
	case CONF_ENUM:
		for (int i = 0; k->choices[i]; i++) {
			if (strcmp(value, k->choices[i]) == 0) {
				*(int64_t *)p = i;
				return 0;
			}
		}
		{
			char list[256] = "";
			for (int i = 0; k->choices[i]; i++) {
				strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, k->choices[i], sizeof list - strlen(list) - 1);
			}
			fmt_err(err, errsize, "expected one of %s, got '%s'", list, value);
		}
		return -1;
	case CONF_INT:
		rc = parse_int64(value, &v);
		if (rc)
			fmt_err(err, errsize, "expected an integer, got '%s'", value);
		break;
	case CONF_DURATION:
		rc = parse_duration_ms(value, &v);
		if (rc)
			fmt_err(err, errsize,
				"expected a duration with a unit (500ms, 3s, 10m, 1h, 2d), got '%s'", value);
		break;
	case CONF_SIZE:
		rc = parse_size_bytes(value, &v);
		if (rc)
			fmt_err(err, errsize, "expected a size with a unit (512B, 64KiB, 1MiB), got '%s'",
				value);
		break;
	}
	if (rc)
		return -1;
	if (v < k->min || v > k->max) {
		format_bound(lo, sizeof lo, k, k->min);
		format_bound(hi, sizeof hi, k, k->max);
		fmt_err(err, errsize, "expected a value from %s to %s, got '%s'", lo, hi, value);
		return -1;
	}
	*(int64_t *)p = v;
	return 0;
}

static void apply_defaults(const struct conf_key *keys, void *base)
{
	char ignored[256];

	for (const struct conf_key *k = keys; k->name; k++) {
		/* The table's own defaults always parse; a test checks that. */
		if (set_value(k, base, k->def, ignored, sizeof ignored) != 0)
			log_error("config default does not parse", "key=%s", k->name);
	}
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
	*items = realloc(*items, (*count + 1) * s->item_size);
	item = *items + (*count)++ * s->item_size;
	memset(item, 0, s->item_size);
	apply_defaults(s->keys, item);
	*(char **)(item + s->name_offset) = strdup(name);
	return item;
}

static const struct conf_section *find_section(const char *section, const char **item_name)
{
	for (const struct conf_section *s = sections; s->name; s++) {
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

int config_set(struct config *cfg, const char *section, const char *key, const char *value,
	       char *err, size_t errsize)
{
	const char *item_name = NULL;
	const struct conf_section *s = find_section(section, &item_name);
	char why[200];
	void *base = cfg;

	if (!s) {
		fmt_err(err, errsize,
			"[%s]: unknown section (expected server, store, queue, type.NAME or token.NAME)",
			section);
		return -1;
	}
	if (s->multi) {
		if (!config_name_ok(item_name)) {
			fmt_err(err, errsize, "[%s]: expected a name of letters, digits, '_', '.' or '-'",
				section);
			return -1;
		}
		base = multi_item(cfg, s, item_name);
	}
	for (const struct conf_key *k = s->keys; k->name; k++) {
		if (strcmp(k->name, key) != 0)
			continue;
		if (set_value(k, base, value, why, sizeof why) != 0) {
			fmt_err(err, errsize, "[%s] %s: %s", section, key, why);
			return -1;
		}
		return 0;
	}
	fmt_err(err, errsize, "[%s] %s: unknown key", section, key);
	return -1;
}

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	for (const struct conf_section *s = sections; s->name; s++) {
		if (!s->multi)
			apply_defaults(s->keys, cfg);
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
};

static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	char *s = fgets(str, num, r->file);

	if (s)
		r->line++;
	return s;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;
	char why[400];

	if (r->err_line)
		return 1; /* keep the first error */
	if (config_set(r->cfg, section, name, value, why, sizeof why) != 0) {
		r->err_line = r->line;
		snprintf(r->err, sizeof r->err, "%s", why);
	}
	return 1;
}

static int derive_lanes(struct config *cfg, char *err, size_t errsize)
{
	char *list = strdup(cfg->lanes), *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (n == CONF_MAX_LANES || !config_name_ok(tok)) {
			fmt_err(err, errsize, "[queue] lanes: '%s' is not a lane name, or more than %d lanes",
				tok, CONF_MAX_LANES);
			free(list);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (strcmp(cfg->lane_names[i], tok) == 0) {
				fmt_err(err, errsize, "[queue] lanes: '%s' is listed twice", tok);
				free(list);
				return -1;
			}
		}
		snprintf(cfg->lane_names[n++], CONF_NAME_MAX + 1, "%s", tok);
	}
	free(list);
	cfg->nlanes = n;
	if (config_lane_rank(cfg, cfg->default_lane) < 0) {
		fmt_err(err, errsize, "[queue] default_lane: '%s' is not one of the lanes '%s'",
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
			fmt_err(err, errsize, "[token.%s] secret: required, 16 characters at least", t->name);
			return -1;
		}
		if (t->role == ROLE_SUBMIT && !config_name_ok(t->team)) {
			fmt_err(err, errsize, "[token.%s] team: required for role = submit", t->name);
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->tokens[j].secret, t->secret) == 0) {
				fmt_err(err, errsize, "[token.%s] secret: the same as [token.%s]", t->name,
					cfg->tokens[j].name);
				return -1;
			}
		}
	}
	return 0;
}

int config_load(struct config *cfg, const char *path, char *err, size_t errsize)
{
	struct reader r = {.cfg = cfg};
	char why[512];
	int rc;

	config_defaults(cfg);
	r.file = fopen(path, "r");
	if (!r.file) {
		fmt_err(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(read_line, &r, on_key, &r);
	fclose(r.file);
	if (r.err_line) {
		fmt_err(err, errsize, "%s:%d: %s", path, r.err_line, r.err);
		return -1;
	}
	if (rc != 0) {
		fmt_err(err, errsize, "%s:%d: expected [section] or key = value (lines up to 200 characters)",
			path, rc);
		return -1;
	}
	if (derive_lanes(cfg, why, sizeof why) != 0 || check_tokens(cfg, why, sizeof why) != 0) {
		fmt_err(err, errsize, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

static void free_strings(const struct conf_key *keys, void *base)
{
	for (const struct conf_key *k = keys; k->name; k++) {
		if (k->type == CONF_STRING)
			free(*(char **)((char *)base + k->offset));
	}
}

void config_free(struct config *cfg)
{
	for (const struct conf_section *s = sections; s->name; s++) {
		if (!s->multi) {
			free_strings(s->keys, cfg);
			continue;
		}
		char *items = *(char **)((char *)cfg + s->items_offset);
		size_t count = *(size_t *)((char *)cfg + s->count_offset);
		for (size_t i = 0; i < count; i++) {
			free_strings(s->keys, items + i * s->item_size);
			free(*(char **)(items + i * s->item_size + s->name_offset));
		}
		free(items);
	}
	memset(cfg, 0, sizeof *cfg);
}

static void write_key_doc(FILE *out, const struct conf_key *k, const char *indent)
{
	char lo[32], hi[32];

	fprintf(out, "%s# %s\n", indent, k->help);
	switch (k->type) {
	case CONF_ENUM:
		fprintf(out, "%s# One of:", indent);
		for (int i = 0; k->choices[i]; i++)
			fprintf(out, " %s", k->choices[i]);
		fputc('\n', out);
		break;
	case CONF_STRING:
		break;
	default:
		format_bound(lo, sizeof lo, k, k->min);
		format_bound(hi, sizeof hi, k, k->max);
		fprintf(out, "%s# From %s to %s.\n", indent, lo, hi);
	}
}

void config_write_example(FILE *out)
{
	fprintf(out, "# ebb.conf: every key with its default. Generated by `ebb config --example`.\n"
		     "# Durations take a unit (500ms, 3s, 10m, 1h, 2d); sizes too (64KiB, 1MiB).\n");
	for (const struct conf_section *s = sections; s->name; s++) {
		fprintf(out, "\n# %s\n", s->help);
		if (s->multi) {
			fprintf(out, "#[%s.NAME]\n", s->name);
			for (const struct conf_key *k = s->keys; k->name; k++) {
				write_key_doc(out, k, "");
				fprintf(out, "#%s = %s\n", k->name, k->def);
			}
			continue;
		}
		fprintf(out, "[%s]\n", s->name);
		for (const struct conf_key *k = s->keys; k->name; k++) {
			write_key_doc(out, k, "");
			fprintf(out, "%s = %s\n", k->name, k->def);
		}
	}
}

static void write_keys(FILE *out, const struct conf_key *keys, const void *base)
{
	char value[1024];

	for (const struct conf_key *k = keys; k->name; k++) {
		if (k->secret)
			snprintf(value, sizeof value, "(hidden)");
		else
			format_value(value, sizeof value, k, base);
		fprintf(out, "%s = %s\n", k->name, value);
	}
}

void config_write(const struct config *cfg, FILE *out)
{
	for (const struct conf_section *s = sections; s->name; s++) {
		if (!s->multi) {
			fprintf(out, "[%s]\n", s->name);
			write_keys(out, s->keys, cfg);
			fputc('\n', out);
			continue;
		}
		const char *items = *(char *const *)((const char *)cfg + s->items_offset);
		size_t count = *(const size_t *)((const char *)cfg + s->count_offset);
		for (size_t i = 0; i < count; i++) {
			const char *item = items + i * s->item_size;
			fprintf(out, "[%s.%s]\n", s->name, *(char *const *)(item + s->name_offset));
			write_keys(out, s->keys, item);
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

const struct type_conf *config_type(const struct config *cfg, const char *type)
{
	for (size_t i = 0; i < cfg->ntypes; i++) {
		if (strcmp(cfg->types[i].name, type) == 0)
			return &cfg->types[i];
	}
	return NULL;
}
