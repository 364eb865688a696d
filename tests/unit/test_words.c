/* A config's command line cut into words (common/words.h): blanks,
 * quotes and backslashes as a shell has them, nothing expanded, and what
 * is refused. */
#include <string.h>

#include "harness.h"
#include "common/words.h"

/* The words of line joined by '|'; "ERR: why" when refused. */
static const char *cut(const char *line)
{
	static char buf[WORDS_LINE_MAX + 1], out[8192];
	char *words[WORDS_MAX], why[80];
	int n = words_split(line, buf, words, WORDS_MAX, why, sizeof why);

	if (n < 0) {
		snprintf(out, sizeof out, "ERR: %s", why);
		return out;
	}
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "|" : "", words[i]);
	return out;
}

static void words_cut(void **state)
{
	(void)state;
	assert_string_equal(cut("python3 serve.py"), "python3|serve.py");
	assert_string_equal(cut("  a \t b  "), "a|b");
	assert_string_equal(cut("/opt/m/run --model 'big model' --x=\"a b\""), "/opt/m/run|--model|big model|--x=a b");
	assert_string_equal(cut("'it''s'"), "its");
	assert_string_equal(cut("a\\ b c"), "a b|c");
	assert_string_equal(cut("\"say \\\"hi\\\" \\\\ \\n\""), "say \"hi\" \\ \\n");
	assert_string_equal(cut("'$HOME' ~ *"), "$HOME|~|*"); /* nothing expanded */
	assert_string_equal(cut("''"), "");
}

static void words_refused(void **state)
{
	char line[WORDS_MAX * 2 + 3], buf[sizeof line], *words[WORDS_MAX], why[80];

	(void)state;
	assert_string_equal(cut(""), "ERR: no program named");
	assert_string_equal(cut("   "), "ERR: no program named");
	assert_string_equal(cut("run 'open"), "ERR: a ' quote is not closed");
	assert_string_equal(cut("run \"open"), "ERR: a \" quote is not closed");
	assert_string_equal(cut("run \\"), "ERR: a backslash at the end");
	for (int i = 0; i <= WORDS_MAX; i++)
		memcpy(line + 2 * i, "a ", 2);
	line[2 * (WORDS_MAX + 1)] = '\0';
	assert_int(words_split(line, buf, words, WORDS_MAX, why, sizeof why), -1);
	assert_string_equal(why, "more than 256 words");
	line[2 * WORDS_MAX] = '\0';
	assert_int(words_split(line, buf, words, WORDS_MAX, why, sizeof why), WORDS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(words_cut),
		cmocka_unit_test(words_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
