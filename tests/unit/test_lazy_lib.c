/* The libraries only some configurations use are loaded when first
 * needed: what a failed load says, and that an idle serve maps libpq only
 * on the PostgreSQL store and libcurl not at all (docs/BENCHMARKS.md, the
 * idle memory goal). */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "common/lazy_lib.h"
#include "store/pq_lazy.h"

struct one_fn {
	void (*fn)(void);
};

static void a_missing_library_is_named(void **state)
{
	static const struct lazy_sym syms[] = {{"f", offsetof(struct one_fn, fn)}};
	struct one_fn t = {0};
	char why[256] = "";

	(void)state;
	assert_int(lazy_lib_load("libebb-no-such-library.so.1", &t, syms, 1, why, sizeof why), -1);
	assert_contains(why, "cannot load libebb-no-such-library.so.1");
	assert_true(t.fn == NULL);
}

static void a_missing_symbol_is_named(void **state)
{
	static const struct lazy_sym syms[] = {{"PQclear", offsetof(struct one_fn, fn)},
					       {"PQebbNoSuchFunction", offsetof(struct one_fn, fn)}};
	struct one_fn t = {0};
	char why[256] = "";

	(void)state;
	assert_int(lazy_lib_load("libpq.so.5", &t, syms, 2, why, sizeof why), -1);
	assert_contains(why, "libpq.so.5 lacks PQebbNoSuchFunction");
}

/* The table calls the real libpq: a connection string it cannot parse
 * gives a connection in CONNECTION_BAD with libpq's own message. */
static void libpq_loads_and_answers(void **state)
{
	char err[256] = "";
	PGconn *c;

	(void)state;
	assert_int(pq_lib_ready(err, sizeof err), 0);
	c = PQconnectdb("ebb_no_such_option=1");
	assert_non_null(c);
	assert_int(PQstatus(c), CONNECTION_BAD);
	assert_contains(PQerrorMessage(c), "ebb_no_such_option");
	PQfinish(c);
}

static int maps(pid_t pid, const char *lib)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		fail_msg("%s: cannot read", path);
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, lib) != NULL;
	fclose(f);
	return found;
}

static void an_idle_serve_maps_only_what_its_store_needs(void **state)
{
	struct harness_server *s = harness_serve("[scaler]\nmax_instances = 0\n", 0);
	int postgres = strcmp(harness_store_kind(), "postgres") == 0;

	(void)state;
	assert_int(harness_call(s, "GET", "/v1/fleet", NULL, NULL), 200);
	assert_int(maps(s->pid, "/libpq.so"), postgres);
	assert_int(maps(s->pid, "/libcurl"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_missing_library_is_named),
		cmocka_unit_test(a_missing_symbol_is_named),
		cmocka_unit_test(libpq_loads_and_answers),
		cmocka_unit_test(an_idle_serve_maps_only_what_its_store_needs),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
