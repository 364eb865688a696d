/* The request target: the path and query of a request line as the client
 * sent it, before any %-decoding, held to ebb's limits (docs/API.md,
 * "Request limits"). httpd.c checks it the moment libmicrohttpd has the
 * request line, before the library reads the query's parameters. */
#ifndef EBB_TARGET_H
#define EBB_TARGET_H

#include "common/error.h"

#define TARGET_MAX_BYTES 4096 /* the target as sent: else 414 */
#define TARGET_MAX_PARAMS 100 /* query parameters: else 414 */

/* The parameters of target's query as the library reads them: each piece
 * between two '&', an empty one too, but not an empty last one ("a=1&b&c="
 * is three, "a&" one, "a&&b" three); 0 with no query or an empty one. */
int target_params(const char *target);

/* 0 when target (NUL-terminated) is within the limits. Else -1, with the
 * 414 in e, and the query cut to nothing in place: the library, which
 * parses the query out of the same bytes next, then reads no parameter
 * of a target that is refused anyway. Were it to read them, a query of
 * some 550 parameters or more would not fit in the connection's memory,
 * and libmicrohttpd 0.9.75 would then neither answer nor close until the
 * connection timed out. */
int target_check(char *target, struct ebb_error *e);

#endif
