/* See error.h. */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

/* The length of the UTF-8 character that starts s, or 0 if none does. */
static int utf8_len(const unsigned char *s)
{
	unsigned lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and
	 * code points past U+10FFFF (RFC 3629). */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (int i = 1; i < n; i++, lo = 0x80, hi = 0xbf) {
		if (s[i] < lo || s[i] > hi)
			return 0;
	}
	return n;
}

/* Messages quote what the client sent (a path, a query value, a field
 * name), and a buffer cut a character in two: JSON strings must be UTF-8,
 * so each byte that is not part of a whole character becomes '?'. */
static void utf8_scrub(char *text)
{
	unsigned char *s = (unsigned char *)text;

	while (*s) {
		int n = utf8_len(s);
		if (n == 0) {
			*s++ = '?';
			continue;
		}
		s += n;
	}
}

int error_set(struct ebb_error *e, int status, const char *code, const char *field,
	      const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	snprintf(e->code, sizeof e->code, "%s", code);
	snprintf(e->field, sizeof e->field, "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	utf8_scrub(e->field);
	utf8_scrub(e->message);
	return -1;
}

json_t *error_to_json(const struct ebb_error *e)
{
	return json_pack("{s:{s:s, s:s, s:o}}", "error", "code", e->code, "message", e->message,
			 "field", e->field[0] ? json_string(e->field) : json_null());
}
