/* Key tables: the machinery behind every section of the configuration.
 * A table lists a section's keys, each with its type, bounds, default and
 * help, and the offset of the field it fills in a struct; one parser,
 * one printer and one documentation writer serve every table, so the
 * core sections (config.c) and the sections a plug-in brings (a store
 * engine's, a provider kind's) are checked alike. */
#ifndef EBB_CONFTAB_H
#define EBB_CONFTAB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_AUTO (-1)     /* a duration set to "auto" */
#define CONF_ABSENT (-1.0) /* an optional number left empty */

enum conf_type { CONF_STRING, CONF_INT, CONF_DOUBLE, CONF_BOOL, CONF_DURATION, CONF_SIZE, CONF_ENUM };

struct conf_key {
	const char *name;
	enum conf_type type;
	size_t offset;
	int64_t min, max; /* ints, ms, bytes; for strings the longest length */
	const char *def;
	const char *const *choices; /* CONF_ENUM, NULL-terminated */
	const char *help;
	int secret;  /* never printed back */
	int auto_ok; /* a duration that may be "auto" (CONF_AUTO) */
	int optional; /* a number that may be left empty (CONF_ABSENT) */
	double fmin, fmax; /* CONF_DOUBLE bounds */
	/* A CONF_DOUBLE that is a share: "1/4" as well as "0.25", and above
	 * fmin rather than at it (a share of nothing is no share). */
	int fraction;
	/* A check of the value's text beyond its type, with what the caller
	 * of conftab_set passes as ctx: 0, or -1 with what was expected in
	 * why. NULL: none. */
	int (*check)(const void *ctx, const char *value, char *why, size_t whysize);
};

/* A message into err, cut to errsize: the messages quote values of any
 * length, and a cut one still names the key. */
void conftab_errf(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The key called name in the NULL-terminated table, or NULL. */
const struct conf_key *conftab_key(const struct conf_key *keys, const char *name);
/* Parses value into base + k->offset: 0, or -1 with what was expected in
 * why. ctx goes to the key's own check. */
int conftab_set(const struct conf_key *k, void *base, const char *value, const void *ctx, char *why,
		size_t whysize);
/* Every key of the table at its default. */
void conftab_defaults(const struct conf_key *keys, void *base);
/* Frees the strings the table's keys hold in base. */
void conftab_free(const struct conf_key *keys, void *base);
/* "string", "integer", "number", "on/off", "duration", "size", "choice". */
const char *conftab_type_name(enum conf_type t);
/* The least and the greatest value of k as the file spells them (a
 * choice's first and last); empty for a string. */
void conftab_bounds(const struct conf_key *k, char *min, char *max, size_t size);
/* "# help", the bounds or choices, and "KEY = DEFAULT" (commented out
 * when commented), for each key: the example file's lines. */
void conftab_write_example(FILE *out, const struct conf_key *keys, int commented);
/* The values as a JSON object, for programs to read: a number, a string,
 * true or false, null for an optional number left empty; a duration in
 * seconds under KEY_s, a size in bytes. Secrets are left out. */
json_t *conftab_json(const struct conf_key *keys, const void *base);
/* "KEY = VALUE" for each key, secrets hidden: the values in force. */
void conftab_write_values(FILE *out, const struct conf_key *keys, const void *base);

#endif
