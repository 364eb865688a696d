/* docs/API.md against serve's route table (serve/api.c), as CONFIG.md is
 * checked against the config's keys: every route has its row in the
 * index ("## Endpoints"), with the roles it has, and its own "## METHOD
 * PATH" section; every row and every such heading names a route. ID in
 * the page is {id} in the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "harness.h"
#include "serve/api_internal.h"

#define MAX_DOC 128

/* The routes the page names, "METHOD PATTERN", and their roles' text. */
struct named {
	char route[MAX_DOC][128], roles[MAX_DOC][64];
	int n;
};

/* The dashboard's files: one row of the index, and DASHBOARD.md's. */
static const char *const no_section[] = {"GET /", "GET /dashboard.js", "GET /jobs.js", "GET /dashboard.css",
					 "GET /favicon.svg", NULL};

/* "METHOD PATH" with each "ID" of the path as the table's "{id}". */
static void as_pattern(char *out, size_t size, const char *method, const char *path, size_t len)
{
	size_t n = (size_t)snprintf(out, size, "%s ", method);

	for (size_t i = 0; i < len && n + 5 < size; i++) {
		if (strncmp(path + i, "ID", 2) == 0 && (i + 2 == len || path[i + 2] == '/')) {
			memcpy(out + n, "{id}", 4);
			n += 4;
			i++;
		} else {
			out[n++] = path[i];
		}
	}
	out[n] = '\0';
}

static void add(struct named *d, const char *route, const char *roles)
{
	if (d->n == MAX_DOC)
		fail_msg("more than %d routes in docs/API.md", MAX_DOC);
	snprintf(d->route[d->n], sizeof d->route[0], "%s", route);
	snprintf(d->roles[d->n], sizeof d->roles[0], "%s", roles);
	d->n++;
}

/* The rows of the index: "| `GET /`, `/dashboard.js` | anyone | ... |":
 * each `...` of the first cell a route, a bare path taking the method of
 * the one before it. */
static void read_index(const char *page, struct named *d)
{
	const char *start = strstr(page, "\n## Endpoints\n"), *end, *line;

	if (!start) {
		fail_msg("docs/API.md has no \"## Endpoints\" section");
		return;
	}
	if (!(end = strstr(start + 1, "\n## ")))
		end = start + strlen(start);
	for (line = start; line && line < end; line = strchr(line + 1, '\n')) {
		const char *cell = line + 1, *bar = strstr(cell, " | "), *p;
		char method[16] = "", roles[64] = "";

		if (strncmp(cell, "| `", 3) != 0 || !bar)
			continue;
		sscanf(bar + 3, "%63[^|]", roles);
		roles[strcspn(roles, "\n")] = '\0';
		while (roles[0] && roles[strlen(roles) - 1] == ' ')
			roles[strlen(roles) - 1] = '\0';
		for (p = strchr(cell, '`'); p && p < bar; p = strchr(p + 1, '`')) {
			const char *close = strchr(p + 1, '`'), *path = p + 1;
			char route[128];

			if (!close || close > bar)
				fail_msg("docs/API.md: an unclosed ` in the row %.80s", cell);
			if (path[0] != '/') {
				if (sscanf(path, "%15[A-Z] ", method) != 1)
					fail_msg("docs/API.md: not METHOD PATH: %.*s", (int)(close - path), path);
				path += strlen(method) + 1;
			}
			if (!method[0])
				fail_msg("docs/API.md: a path with no method before it: %.*s", (int)(close - path), path);
			as_pattern(route, sizeof route, method, path, (size_t)(close - path));
			add(d, route, roles);
			p = close;
		}
	}
}

/* The "## METHOD PATH" headings. */
static void read_sections(const char *page, struct named *d)
{
	for (const char *h = strstr(page, "\n## "); h; h = strstr(h + 1, "\n## ")) {
		char method[16], path[100], route[128];

		if (sscanf(h + 4, "%15[A-Z] %99[^\n]", method, path) == 2 && path[0] == '/') {
			as_pattern(route, sizeof route, method, path, strlen(path));
			add(d, route, "");
		}
	}
}

static int count(const struct named *d, const char *route, const char **roles)
{
	int n = 0;

	for (int i = 0; i < d->n; i++) {
		if (strcmp(d->route[i], route) == 0) {
			*roles = d->roles[i];
			n++;
		}
	}
	return n;
}

/* The roles as the index writes them. */
static const char *roles_text(int roles)
{
	if (roles == 0)
		return "anyone";
	if (roles == 1 << ROLE_ADMIN)
		return "admin";
	if (roles == (1 << ROLE_SUBMIT | 1 << ROLE_WORKER))
		return "submit, worker";
	return roles == 1 << ROLE_SUBMIT ? "submit" : "worker";
}

static int is_route(const char *route)
{
	const char *method, *pattern;
	int roles;

	for (size_t i = 0; (pattern = api_route_at(i, &method, &roles)); i++) {
		if (strcmp(route, harness_fmt("%s %s", method, pattern)) == 0)
			return 1;
	}
	return 0;
}

static int listed(const char *const *list, const char *s)
{
	for (; *list; list++) {
		if (strcmp(*list, s) == 0)
			return 1;
	}
	return 0;
}

#define SAY(...) snprintf(wrong + strlen(wrong), sizeof wrong - strlen(wrong), __VA_ARGS__)

/* Where page and the route table differ, a line each ("" when nowhere). */
static const char *differences(const char *page)
{
	static char wrong[8192];
	static struct named index, sections;
	const char *method, *pattern, *roles = "", *unused;
	int r;

	wrong[0] = '\0';
	index.n = sections.n = 0;
	read_index(page, &index);
	read_sections(page, &sections);
	for (size_t i = 0; (pattern = api_route_at(i, &method, &r)); i++) {
		char route[128];
		int rows, heads;

		snprintf(route, sizeof route, "%s %s", method, pattern);
		rows = count(&index, route, &roles);
		heads = count(&sections, route, &unused);
		if (rows != 1)
			SAY("\n%s: %d rows in the index, not 1", route, rows);
		else if (strcmp(roles, roles_text(r)) != 0)
			SAY("\n%s: roles '%s' in the index, '%s' in the table", route, roles, roles_text(r));
		if (heads != !listed(no_section, route))
			SAY("\n%s: %d sections of its own, not %d", route, heads, !listed(no_section, route));
	}
	for (int i = 0; i < index.n; i++) {
		if (!is_route(index.route[i]))
			SAY("\n%s: in the index, but no such route", index.route[i]);
	}
	for (int i = 0; i < sections.n; i++) {
		if (!is_route(sections.route[i]))
			SAY("\n%s: a section, but no such route", sections.route[i]);
	}
	return wrong;
}

static char *read_page(void)
{
	const char *src = getenv("EBB_SRC");
	char *page = harness_read_file(harness_fmt("%s/docs/API.md", src && *src ? src : "."), NULL);

	if (!page)
		fail_msg("docs/API.md not found (EBB_SRC is the source tree; make test sets it)");
	return page;
}

static void page_matches_routes(void **state)
{
	char *page = read_page();
	const char *wrong = differences(page), *method;
	int roles;

	(void)state;
	if (wrong[0])
		fail_msg("docs/API.md and the route table (src/serve/api.c) differ:%s", wrong);
	assert_non_null(api_route_at(30, &method, &roles));
	free(page);
}

/* The page with its first `from` replaced by `to`: a drift. */
static const char *drift(const char *page, const char *from, const char *to)
{
	const char *at = strstr(page, from);
	static char out[256 << 10];

	if (!at)
		fail_msg("docs/API.md has no '%s' to change", from);
	snprintf(out, sizeof out, "%.*s%s%s", (int)(at - page), page, to, at + strlen(from));
	return out;
}

/* What each kind of drift is reported as. */
static void drift_is_found(void **state)
{
	char *page = read_page();

	(void)state;
	assert_string_equal(differences(drift(page, "| `POST /v1/lease` |", "| `POST /v1/leases` |")),
			    "\nPOST /v1/lease: 0 rows in the index, not 1"
			    "\nPOST /v1/leases: in the index, but no such route");
	assert_string_equal(differences(drift(page, "| `GET /v1/stats` | submit, worker |", "| `GET /v1/stats` | submit |")),
			    "\nGET /v1/stats: roles 'submit' in the index, 'submit, worker' in the table");
	assert_string_equal(differences(drift(page, "| `GET /`, `/dashboard.js`, `/jobs.js`, `/dashboard.css`, ",
					      "| `GET /`, `/dashboard.js`, `/jobs.js`, ")),
			    "\nGET /dashboard.css: 0 rows in the index, not 1");
	assert_string_equal(differences(drift(page, "\n## GET /v1/jobs/ID\n", "\n## GET /v1/job/ID\n")),
			    "\nGET /v1/jobs/{id}: 0 sections of its own, not 1"
			    "\nGET /v1/job/{id}: a section, but no such route");
	assert_string_equal(differences(drift(page, "\n## GET /v1/offers\n", "\n## POST /v1/offers\n")),
			    "\nGET /v1/offers: 0 sections of its own, not 1"
			    "\nPOST /v1/offers: a section, but no such route");
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(page_matches_routes),
		cmocka_unit_test(drift_is_found),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
