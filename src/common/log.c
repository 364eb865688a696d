/* logfmt event lines on stderr (see log.h). */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level min_level = LOG_INFO;
const char *const log_level_names[] = {"debug", "info", "warn", "error", NULL};

void log_set_level(enum log_level level) { min_level = level; }

const char *log_quote(char *buf, size_t size, const char *s)
{
	size_t n = 0;
	int plain = s[0] != '\0' && strpbrk(s, " \"=\\\n\t") == NULL;

	if (plain) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	if (size < 3) {
		buf[0] = '\0';
		return buf;
	}
	buf[n++] = '"';
	for (; *s && n + 3 < size; s++) {
		char c = *s;
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = c;
		} else if (c == '\n' || c == '\t') {
			buf[n++] = '\\';
			buf[n++] = c == '\n' ? 'n' : 't';
		} else {
			buf[n++] = c;
		}
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

void log_event(enum log_level level, const char *msg, const char *fmt, ...)
{
	char line[2048], stamp[32], quoted[256];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (level < min_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof line, "ts=%s.%03ldZ level=%s msg=%s", stamp,
		     ts.tv_nsec / 1000000, log_level_names[level],
		     log_quote(quoted, sizeof quoted, msg));
	if (fmt[0] != '\0' && n > 0 && (size_t)n < sizeof line - 1) {
		line[n++] = ' ';
		va_start(ap, fmt);
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* One write per line so that lines of concurrent processes never mix. */
	n = (int)strnlen(line, sizeof line - 2);
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}
