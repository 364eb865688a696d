/* See jsonout.h. */
#include "common/jsonout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static void append(struct jsonout *o, const char *s, size_t n)
{
	if (o->len + n + 2 > o->cap) { /* room for jsonout_finish's "\n\0" */
		o->cap = o->cap ? o->cap : 1024;
		while (o->len + n + 2 > o->cap)
			o->cap *= 2;
		o->text = mem_realloc(o->text, o->cap);
	}
	memcpy(o->text + o->len, s, n);
	o->len += n;
}

static void append_char(struct jsonout *o, char c) { append(o, &c, 1); }

/* The comma before a value unless it opens its container, then the key. */
static void member(struct jsonout *o, const char *key)
{
	if (o->len && o->text[o->len - 1] != '{' && o->text[o->len - 1] != '[')
		append_char(o, ',');
	if (key) {
		append_char(o, '"');
		append(o, key, strlen(key));
		append(o, "\":", 2);
	}
}

static int append_dumped(const char *buffer, size_t size, void *data)
{
	append(data, buffer, size);
	return 0;
}

/* The writers below hand jansson what only it writes the same way: escapes
 * and UTF-8 checks, %.13g with its ".0". */
void jsonout_json(struct jsonout *o, const char *key, json_t *v)
{
	member(o, key);
	if (!v || json_dump_callback(v, append_dumped, o, JSON_REPLY_FLAGS | JSON_ENCODE_ANY) != 0)
		append(o, "null", 4);
	json_decref(v);
}

/* Decimal digits of v, for the integers and the times of every reply
 * (snprintf's format parsing was most of their cost). */
static void append_uint(struct jsonout *o, uint64_t v)
{
	char digits[20];
	int i = sizeof digits;

	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	append(o, digits + i, sizeof digits - (size_t)i);
}

void jsonout_open(struct jsonout *o, const char *key, char bracket)
{
	member(o, key);
	append_char(o, bracket);
}

void jsonout_close(struct jsonout *o, char bracket) { append_char(o, bracket); }

void jsonout_reopen(struct jsonout *o)
{
	if (o->len && o->text[o->len - 1] == '}')
		o->len--;
}

void jsonout_null(struct jsonout *o, const char *key)
{
	member(o, key);
	append(o, "null", 4);
}

void jsonout_int(struct jsonout *o, const char *key, int64_t v)
{
	member(o, key);
	if (v < 0)
		append_char(o, '-');
	append_uint(o, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

void jsonout_real(struct jsonout *o, const char *key, double v)
{
	/* Costs and rates are mostly zero: skip jansson for those. */
	if (v == 0 && !signbit(v)) {
		member(o, key);
		append(o, "0.0", 3);
		return;
	}
	jsonout_json(o, key, json_real(v));
}

/* Below 10^13 ms a time has at most 13 significant digits, all of which
 * %.13g shows: seconds, a point, the milliseconds without trailing zeros
 * (or "0", as jansson adds to a whole number). */
#define SECONDS_EXACT_BELOW_MS 10000000000000LL

void jsonout_seconds(struct jsonout *o, const char *key, int64_t ms)
{
	char frac[4];
	int n;

	if (ms == 0) {
		jsonout_null(o, key);
		return;
	}
	if (ms < 0 || ms >= SECONDS_EXACT_BELOW_MS) {
		jsonout_json(o, key, json_real((double)ms / 1000.0));
		return;
	}
	member(o, key);
	append_uint(o, (uint64_t)(ms / 1000));
	frac[0] = '.';
	frac[1] = (char)('0' + ms / 100 % 10);
	frac[2] = (char)('0' + ms / 10 % 10);
	frac[3] = (char)('0' + ms % 10);
	for (n = 4; n > 2 && frac[n - 1] == '0'; n--)
		;
	append(o, frac, (size_t)n);
}

/* Printable ASCII but the quote and the backslash: as jansson writes it. */
static int plain(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
			return 0;
	}
	*len = (size_t)((const char *)p - s);
	return 1;
}

void jsonout_string(struct jsonout *o, const char *key, const char *s)
{
	size_t len;

	if (!s) {
		jsonout_null(o, key);
	} else if (plain(s, &len)) {
		member(o, key);
		append_char(o, '"');
		append(o, s, len);
		append_char(o, '"');
	} else {
		jsonout_json(o, key, json_string(s));
	}
}

void jsonout_text(struct jsonout *o, const char *key, const char *json)
{
	member(o, key);
	if (json)
		append(o, json, strlen(json));
	else
		append(o, "null", 4);
}

char *jsonout_finish(struct jsonout *o)
{
	char *text;

	append(o, "", 0); /* an empty value still gets its buffer */
	o->text[o->len] = '\n';
	o->text[o->len + 1] = '\0';
	text = o->text;
	*o = (struct jsonout){0};
	return text;
}
