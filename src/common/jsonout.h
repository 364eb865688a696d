/* Writing a JSON reply straight into text, for the job JSON that every call
 * of the job cycle returns. Building a jansson tree and dumping it took
 * about a third of serve's CPU per job: a malloc per value, a snprintf per
 * number, a loop check per object. Here a number or a plain string is a
 * copy into one growing buffer.
 *
 * The text is what json_dumps gives with JSON_REPLY_FLAGS for the same
 * values, so either way of replying reads the same: keys are the caller's
 * constants, written as given; a string with anything but printable ASCII,
 * and a real that is not a time, are written by jansson itself. */
#ifndef EBB_JSONOUT_H
#define EBB_JSONOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* How every JSON reply is dumped: 13 digits keep Unix times to the
 * millisecond without float noise. */
#define JSON_REPLY_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(13))

struct jsonout {
	char *text;
	size_t len, cap;
};

/* Every writer takes the member's key, or NULL for an array element or the
 * top-level value, and puts the comma before it when one is due. */
void jsonout_open(struct jsonout *o, const char *key, char bracket); /* '{' or '[' */
void jsonout_close(struct jsonout *o, char bracket);                 /* '}' or ']' */
void jsonout_null(struct jsonout *o, const char *key);
void jsonout_int(struct jsonout *o, const char *key, int64_t v);
void jsonout_real(struct jsonout *o, const char *key, double v);
/* A Unix time in ms as json_seconds() has it: seconds, or null for 0. */
void jsonout_seconds(struct jsonout *o, const char *key, int64_t ms);
/* A string (NULL: null). */
void jsonout_string(struct jsonout *o, const char *key, const char *s);
/* JSON text already in the replies' form, such as a job's stored command
 * (job_stored_json; NULL: null), copied as it is. */
void jsonout_text(struct jsonout *o, const char *key, const char *json);
/* Any jansson value, dumped by jansson (steals v; NULL: null). */
void jsonout_json(struct jsonout *o, const char *key, json_t *v);

/* Opens again the object o's text ends with, to add members to it (a
 * reply that is a job and more). */
void jsonout_reopen(struct jsonout *o);

/* The text with a newline after it, for request_reply_text; o is empty
 * again. */
char *jsonout_finish(struct jsonout *o);

#endif
