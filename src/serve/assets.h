/* The dashboard's files (src/serve/dashboard/: its page, script, style
 * and icon), compiled into the binary by scripts/embed.sh: nothing is read
 * from disk or downloaded to show it. docs/DASHBOARD.md. */
#ifndef EBB_ASSETS_H
#define EBB_ASSETS_H

#include <stddef.h>

struct asset {
	const char *path; /* what GET asks for: "/", "/dashboard.js", ... */
	const char *content_type;
	const char *body;
	size_t len;
};

/* Ended by an entry whose path is NULL. */
extern const struct asset dashboard_assets[];

#endif
