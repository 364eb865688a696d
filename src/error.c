/* See error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

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
	return -1;
}

json_t *error_to_json(const struct ebb_error *e)
{
	return json_pack("{s:{s:s, s:s, s:o}}", "error", "code", e->code, "message", e->message,
			 "field", e->field[0] ? json_string(e->field) : json_null());
}
