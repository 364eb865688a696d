/* "Did you mean" (common/suggest.h): the edit distance, swaps counted
 * once, and which names are close enough to offer. */
#include <string.h>

#include "harness.h"
#include "common/suggest.h"

static int distance(const char *a, const char *b) { return suggest_distance(a, strlen(a), b); }

static void distances(void **state)
{
	(void)state;
	assert_int(distance("", ""), 0);
	assert_int(distance("interval", "interval"), 0);
	assert_int(distance("", "abc"), 3);
	assert_int(distance("abc", ""), 3);
	assert_int(distance("interva", "interval"), 1);  /* one missing */
	assert_int(distance("sbumit", "submit"), 1);     /* two swapped */
	assert_int(distance("submitt", "submit"), 1);    /* one too many */
	assert_int(distance("jobz", "jobs"), 1);         /* one wrong */
	assert_int(distance("kitten", "sitting"), 3);
	assert_int(distance("ca", "abc"), 3);            /* a swap is not edited again */
	assert_int(suggest_distance("interval=5", 8, "interval"), 0); /* the length given */
	char long_name[SUGGEST_MAX + 2];
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	assert_int(distance(long_name, "a"), -1);
	assert_int(distance("a", long_name), -1);
}

static const char *nearest(const char *word, const char *const *names)
{
	struct suggest s;

	suggest_init(&s, word, strlen(word));
	for (; *names; names++)
		suggest_consider(&s, *names);
	return s.best;
}

static void only_close_names(void **state)
{
	static const char *const commands[] = {"serve", "submit", "jobs", "job", "cancel", "team", "teams", NULL};

	(void)state;
	assert_string_equal(nearest("sbmit", commands), "submit");
	assert_string_equal(nearest("jbos", commands), "jobs");
	assert_string_equal(nearest("jo", commands), "job");
	assert_string_equal(nearest("cancle", commands), "cancel");
	assert_string_equal(nearest("tema", commands), "team"); /* the first of equals */
	assert_null(nearest("x", commands));                     /* one letter: anything is one edit */
	assert_null(nearest("frobnicate", commands));
	assert_null(nearest("sim", commands));
	assert_null(nearest("", commands));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(distances),
		cmocka_unit_test(only_close_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
