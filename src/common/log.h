/* One line per event in logfmt on stderr:
 *   ts=2026-11-21T23:40:00.123Z level=info msg="job leased" job=12 worker=w1
 * The fields after msg are a printf format of key=value pairs; values that
 * may hold spaces or quotes go through log_quote(). */
#ifndef EBB_LOG_H
#define EBB_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* "debug" to "error" in the enum's order, then NULL: the names in the
 * lines and in [server] log_level, whose choices they are. */
extern const char *const log_level_names[];

void log_set_level(enum log_level level);

void log_event(enum log_level level, const char *msg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(msg, ...) log_event(LOG_DEBUG, msg, __VA_ARGS__)
#define log_info(msg, ...)  log_event(LOG_INFO, msg, __VA_ARGS__)
#define log_warn(msg, ...)  log_event(LOG_WARN, msg, __VA_ARGS__)
#define log_error(msg, ...) log_event(LOG_ERROR, msg, __VA_ARGS__)

/* Writes s as a logfmt value (quoted and escaped when needed) into buf. */
const char *log_quote(char *buf, size_t size, const char *s);

#endif
