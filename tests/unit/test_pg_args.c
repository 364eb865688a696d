/* A PostgreSQL statement's parameters (store/pg_args.h), as the engine
 * and `ebb store copy` gather them: every one of PG_ARGS_MAX is held as
 * its text; one past the bound is counted, never written past the array,
 * and makes the statement an error instead of a run. Run under ASan
 * (make test SANITIZER=address), a write past the array would stop it. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "store/pg_args.h"

/* The array with what lies after it in memory, to see that it stays. */
struct guarded {
	struct pg_args a;
	unsigned char after[64];
};

static void every_parameter_as_its_text(void **state)
{
	struct pg_args a = {0};
	char err[128] = "";

	(void)state;
	pg_args_int(&a, -42);
	pg_args_num(&a, 0.1);
	pg_args_text(&a, "x");
	pg_args_text(&a, NULL);
	pg_args_limit(&a, -1);
	pg_args_limit(&a, 7);
	assert_int(a.n, 6);
	assert_string_equal(a.v[0], "-42");
	assert_string_equal(a.v[1], "0.10000000000000001");
	assert_string_equal(a.v[2], "x");
	assert_null(a.v[3]);
	assert_null(a.v[4]);
	assert_string_equal(a.v[5], "7");
	assert_int(pg_args_check(&a, err, sizeof err), 0);
	assert_string_equal(err, "");
}

static void one_past_the_bound_is_an_error(void **state)
{
	struct guarded g;
	char err[128] = "";

	(void)state;
	memset(&g, 0, sizeof g);
	memset(g.after, 0xa5, sizeof g.after);
	for (int i = 0; i < PG_ARGS_MAX; i++)
		pg_args_int(&g.a, i);
	assert_int(pg_args_check(&g.a, err, sizeof err), 0);

	pg_args_num(&g.a, 1e300);
	assert_int(g.a.n, PG_ARGS_MAX);
	assert_int(pg_args_check(&g.a, err, sizeof err), -1);
	assert_string_equal(err, harness_fmt("%d parameters, more than the %d a statement may have here",
					     PG_ARGS_MAX + 1, PG_ARGS_MAX));
	/* Each kind of parameter past it, counted. */
	pg_args_int(&g.a, 1);
	pg_args_text(&g.a, "x");
	pg_args_limit(&g.a, 3);
	assert_int(g.a.over, 4);
	assert_int(pg_args_check(&g.a, err, sizeof err), -1);
	assert_contains(err, harness_fmt("%d parameters", PG_ARGS_MAX + 4));
	/* What was held stays, and nothing past the array was written. */
	assert_string_equal(g.a.v[0], "0");
	assert_string_equal(g.a.v[PG_ARGS_MAX - 1], harness_fmt("%d", PG_ARGS_MAX - 1));
	for (size_t i = 0; i < sizeof g.after; i++)
		assert_int(g.after[i], 0xa5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_parameter_as_its_text),
		cmocka_unit_test(one_past_the_bound_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
