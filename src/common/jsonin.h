/* Strict reading of JSON request bodies: malformed text is reported with
 * its line and column, and every field is checked against a table (name,
 * type, bounds) so that an unknown field or an absurd value is a 400 that
 * names the field, never a guess. */
#ifndef EBB_JSONIN_H
#define EBB_JSONIN_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"

enum field_type {
	F_STRING,  /* length in bytes (UTF-8) from min to max */
	F_NAME,    /* a lane, type, team or worker name */
	F_INT,     /* integer from min to max */
	F_NUMBER,  /* any number from min to max */
	F_BOOL,
	F_STRINGS, /* array of at most max strings, each a name */
	F_IDS,     /* array of at most max ids (integers from 1) */
	F_ANY,     /* any JSON value */
};

struct field {
	const char *name;
	enum field_type type;
	int64_t min, max;
};

/* Parses body as one JSON object. An empty body is an empty object. */
int json_parse_object(const char *body, size_t len, json_t **out, struct ebb_error *err);
/* The same, where an array is welcome too (a batch of objects). */
int json_parse_object_or_array(const char *body, size_t len, json_t **out, struct ebb_error *err);
/* Checks obj against fields (ended by a {NULL} entry). */
int json_check_fields(json_t *obj, const struct field *fields, struct ebb_error *err);

/* Is the field set: present, and not null (a null field counts as absent)? */
int json_has(json_t *obj, const char *name);
/* Getters for checked objects: the default when the field is absent or null. */
const char *json_get_str(json_t *obj, const char *name, const char *def);
int64_t json_get_int(json_t *obj, const char *name, int64_t def);
double json_get_number(json_t *obj, const char *name, double def);
int json_get_bool(json_t *obj, const char *name, int def);

/* A Unix time in ms as the API writes it: seconds (a number with the
 * milliseconds), or null when the time is 0 (not yet). */
json_t *json_seconds(int64_t ms);

#endif
