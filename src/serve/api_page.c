/* GET /, /dashboard.js, /jobs.js, /dashboard.css, /favicon.svg: the
 * dashboard, served from the binary (assets.h) to anyone: it holds no
 * data, and reads everything from the API (GET /v1/dashboard, the jobs)
 * with the token typed into it. */
#include <string.h>

#include "serve/api_internal.h"
#include "serve/assets.h"

int api_page(struct api_call *c)
{
	const char *path = request_path(c->req);
	struct ebb_error err;

	for (const struct asset *a = dashboard_assets; a->path; a++) {
		if (strcmp(a->path, path) != 0)
			continue;
		if (request_reply_page(c->req, a->content_type, a->body, a->len) == 0)
			return 0;
		error_set(&err, 500, "out_of_memory", NULL, ERROR_OUT_OF_MEMORY);
		return api_fail(c, &err);
	}
	error_set(&err, 404, "not_found", NULL, "no such path: %s", path);
	return api_fail(c, &err);
}
