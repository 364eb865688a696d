/* The options parser of every command (cli/options.h): each kind of value
 * read into its place, the defaults, the help as printed, and each usage
 * error in its exact words, with where to look. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "cli/options.h"

struct inner {
	const char *name;
	int on;
};

struct args {
	int flag, small;
	const char *text;
	int64_t big, ms, whole;
	double secs;
	json_t *body;
	const char *upper;
	struct inner inner;
};

#define ARG(member) OPTION_AT(struct args, member)

/* A parse function: words in capitals only. */
static int upper(void *at, const char *arg, char *why, size_t size)
{
	for (const char *c = arg; *c; c++) {
		if (*c < 'A' || *c > 'Z')
			return options_why(why, size, "expected capitals, got '%s'", arg);
	}
	*(const char **)at = arg;
	return 0;
}

static const struct option_spec inner_options[] = {
	{"name", 'n', OPTION_STRING, "NAME", OPTION_AT(struct inner, name), "a name from a group"},
	{"on", 0, OPTION_FLAG, NULL, OPTION_AT(struct inner, on), "a flag from a group"},
	{0},
};

static const struct option_spec options[] = {
	{"flag", 'f', OPTION_FLAG, NULL, ARG(flag), "a flag"},
	{"text", 0, OPTION_STRING, "T", ARG(text), "some text,\nover two lines"},
	{"small", 0, OPTION_INT, "N", ARG(small), "an int", .min = -5, .max = 5, .def = "3"},
	{"big", 0, OPTION_INT, "N", ARG(big), "an int64_t", .max = INT64_MAX},
	{"ms", 0, OPTION_DURATION, "D", ARG(ms), "a duration", .def = "5m"},
	{"whole", 0, OPTION_WHOLE_SECONDS, "DURATION", ARG(whole), "whole seconds", .min = 1, .max = 3600},
	{"secs", 0, OPTION_SECONDS, "S", ARG(secs), "seconds", .fmin = 0.001, .fmax = 1e10},
	{"field", 0, OPTION_INT, "N", ARG(body), "into the body", .max = 9, .field = "n"},
	{"payload", 0, OPTION_JSON, "JSON", ARG(body), "any JSON, into the body", .field = "payload"},
	{"upper", 0, OPTION_CALL, "WORD", ARG(upper), "capitals", .parse = upper},
	{"a-rather-long-option-name", 0, OPTION_FLAG, NULL, ARG(flag), "its help on the next line"},
	{.kind = OPTION_GROUP, .group = inner_options, .at = ARG(inner)},
	{0},
};

static const struct usage usage = {"ebb test [OPTIONS] [WORD]\nebb test --text T", "Tests the parser.", options,
				   "A note after the options.", .max_words = 1};

/* A run of options_parse on "ebb test" and words: its return, and what
 * it wrote on stdout and stderr. */
struct run {
	int rc;
	char *out, *err;
	struct args a;
};

static char *slurp(FILE *f)
{
	long n;
	char *text;

	fflush(f);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	if (fread(text, 1, (size_t)n, f) != (size_t)n)
		fail_msg("cannot read back what was written");
	fclose(f);
	return text;
}

static void run(struct run *r, const struct usage *u, ...)
{
	FILE *out = tmpfile(), *err = tmpfile();
	char *argv[32] = {"ebb test"};
	int argc = 1, saved_out, saved_err;
	va_list ap;

	va_start(ap, u);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(&r->a, 0, sizeof r->a);
	r->a.body = json_object();
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	r->rc = options_parse(u, &r->a, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	r->out = slurp(out);
	r->err = slurp(err);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	json_decref(r->a.body);
}

static void every_kind_goes_to_its_place(void **state)
{
	struct run r;

	(void)state;
	run(&r, &usage, "-f", "--text", "a b", "--small", "-5", "--big", "9223372036854775807", "--ms", "90s",
	    "--whole", "2m", "--secs", "2.5", "--field", "7", "--payload", "{\"x\": [1]}", "--upper", "ABC", "-n",
	    "inner", "--on", "word", NULL);
	assert_int(r.rc, OPTIONS_GO_ON);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	assert_int(r.a.flag, 1);
	assert_string_equal(r.a.text, "a b");
	assert_int(r.a.small, -5);
	assert_int(r.a.big, INT64_MAX);
	assert_int(r.a.ms, 90000);
	assert_int(r.a.whole, 120);
	assert_true(r.a.secs == 2.5);
	assert_int(JINT(r.a.body, "n"), 7);
	assert_int(JINT(r.a.body, "payload.x.0"), 1);
	assert_string_equal(r.a.upper, "ABC");
	assert_string_equal(r.a.inner.name, "inner");
	assert_int(r.a.inner.on, 1);
	/* The word after the options, where getopt_long leaves it. */
	assert_int(optind, 23);
	run_free(&r);
}

static void defaults_and_not_given(void **state)
{
	struct run r;

	(void)state;
	run(&r, &usage, NULL);
	assert_int(r.rc, OPTIONS_GO_ON);
	assert_int(r.a.small, 3);
	assert_int(r.a.ms, 300000);
	assert_null(r.a.text);
	assert_int(r.a.flag, 0);
	assert_int(json_object_size(r.a.body), 0);
	run_free(&r);
	/* A value given replaces the default; the last given wins. */
	run(&r, &usage, "--small", "1", "--small=2", NULL);
	assert_int(r.rc, OPTIONS_GO_ON);
	assert_int(r.a.small, 2);
	run_free(&r);
}

static void help_is_the_table(void **state)
{
	struct run r;

	(void)state;
	run(&r, &usage, "--ms", "5s", "--help", "--bogus", NULL);
	assert_int(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, "usage: ebb test [OPTIONS] [WORD]\n"
				   "       ebb test --text T\n"
				   "Tests the parser.\n"
				   "  -f, --flag            a flag\n"
				   "  --text T              some text,\n"
				   "                        over two lines\n"
				   "  --small N             an int (default 3)\n"
				   "  --big N               an int64_t\n"
				   "  --ms D                a duration (default 5m)\n"
				   "  --whole DURATION      whole seconds\n"
				   "  --secs S              seconds\n"
				   "  --field N             into the body\n"
				   "  --payload JSON        any JSON, into the body\n"
				   "  --upper WORD          capitals\n"
				   "  --a-rather-long-option-name\n"
				   "                        its help on the next line\n"
				   "  -n, --name NAME       a name from a group\n"
				   "  --on                  a flag from a group\n"
				   "  -h, --help            print this help\n"
				   "A note after the options.\n");
	run_free(&r);
	run(&r, &usage, "-h", NULL);
	assert_int(r.rc, 0);
	assert_contains(r.out, "usage: ebb test");
	run_free(&r);
}

/* Each mistake: status 2, nothing on stdout, its line and the hint. */
static void usage_errors_name_the_flag(void **state)
{
	static const char *const cases[][3] = {
		{"--small", "6", "--small: expected an integer from -5 to 5, got '6'"},
		{"--big", "-1", "--big: expected an integer from 0 to 9223372036854775807, got '-1'"},
		{"--ms", "soon", "--ms: expected a duration such as 30s or 5m, got 'soon'"},
		{"--whole", "1500ms", "--whole: '1500ms' is not a whole number of seconds"},
		{"--whole", "2h", "--whole: expected from 1s to 1h, got '2h'"},
		{"--whole", "later", "--whole: expected a duration like 30, 90s, 10m or 2h, got 'later'"},
		{"--secs", "0", "--secs: expected seconds from 0.001 to 1e10, got '0'"},
		{"--secs", "inf", "--secs: expected seconds from 0.001 to 1e10, got 'inf'"},
		{"--payload", "{", "--payload: not JSON: "},
		{"--upper", "abc", "--upper: expected capitals, got 'abc'"},
		{"--bogus", NULL, "unknown option '--bogus'"},
		{"-x", NULL, "unknown option '-x'"},
		{"--s", "1", "ambiguous option '--s': --small, --secs?"},
		{"--flag=1", NULL, "option '--flag' takes no value"},
		{"--text", NULL, "option '--text' needs a value"},
		{"one", "two", "unexpected argument 'two'"},
	};
	struct run r;

	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		run(&r, &usage, cases[k][0], cases[k][1], NULL);
		assert_int(r.rc, 2);
		assert_string_equal(r.out, "");
		assert_contains(r.err, harness_fmt("ebb test: %s", cases[k][2]));
		assert_contains(r.err, "\nsee 'ebb test --help'\n");
		assert_int(lines(r.err), 2);
		run_free(&r);
	}
}

/* An unknown long option names the nearest one when it is close: a
 * letter missing, one too many, two swapped; nothing when none is. */
static void unknown_options_are_guessed(void **state)
{
	static const char *const cases[][2] = {
		{"--flga", "unknown option '--flga'; did you mean '--flag'?"},
		{"--paylod={}", "unknown option '--paylod={}'; did you mean '--payload'?"},
		{"--smalll", "unknown option '--smalll'; did you mean '--small'?"},
		{"--hlep", "unknown option '--hlep'; did you mean '--help'?"},
		{"--on-it", "unknown option '--on-it'"},
		{"--bogus", "unknown option '--bogus'"},
		{"--zz", "unknown option '--zz'"},
	};
	struct run r;

	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		run(&r, &usage, cases[k][0], NULL);
		assert_int(r.rc, 2);
		assert_string_equal(r.err, harness_fmt("ebb test: %s\nsee 'ebb test --help'\n", cases[k][1]));
		run_free(&r);
	}
}

static void required_and_words(void **state)
{
	static const struct option_spec need[] = {
		{"must", 0, OPTION_STRING, "X", ARG(text), "needed", .required = 1},
		{0},
	};
	static const struct usage needs = {"ebb test --must X", NULL, need};
	static const struct usage command = {"ebb test [-f] COMMAND...", NULL, options, .max_words = OPTIONS_ANY_WORDS,
					     .stop_at_word = 1};
	struct run r;

	(void)state;
	run(&r, &needs, NULL);
	assert_int(r.rc, 2);
	assert_string_equal(r.err, "ebb test: --must is required\nsee 'ebb test --help'\n");
	run_free(&r);
	run(&r, &needs, "--must", "x", "word", NULL);
	assert_int(r.rc, 2);
	assert_string_equal(r.err, "ebb test: unexpected argument 'word'\nsee 'ebb test --help'\n");
	run_free(&r);
	run(&r, &needs, "--help", NULL);
	assert_contains(r.out, "  --must X              needed (required)\n");
	run_free(&r);
	/* Options end at the first word: the command's own are its own. */
	run(&r, &command, "-f", "--", "ls", "-f", "--bogus", NULL);
	assert_int(r.rc, OPTIONS_GO_ON);
	assert_int(optind, 3);
	run_free(&r);
	run(&r, &command, "ls", "-f", NULL);
	assert_int(r.rc, OPTIONS_GO_ON);
	assert_int(optind, 1);
	assert_int(r.a.flag, 0);
	run_free(&r);
}

/* A field whose size does not fit its kind is a bug: refused at once. */
static void a_wrong_table_is_refused(void **state)
{
	static const struct option_spec wrong[] = {
		{"big", 0, OPTION_DURATION, "D", ARG(small), "an int is too small for milliseconds"},
		{0},
	};
	static const struct usage u = {"ebb test", NULL, wrong};
	struct run r;

	(void)state;
	run(&r, &u, "--help", NULL);
	assert_int(r.rc, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "ebb test: the table of options is wrong at --big\n");
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_kind_goes_to_its_place),
		cmocka_unit_test(defaults_and_not_given),
		cmocka_unit_test(help_is_the_table),
		cmocka_unit_test(usage_errors_name_the_flag),
		cmocka_unit_test(unknown_options_are_guessed),
		cmocka_unit_test(required_and_words),
		cmocka_unit_test(a_wrong_table_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
