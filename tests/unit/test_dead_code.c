/* No dead code, kept so: scripts/check-dead.sh finds no external
 * function of src/ that no other file names (it reads the objects this
 * test was built with: EBB_BIN's folder, which make test sets). And the
 * script finds what it must: in a small tree of its own, each kind of
 * function it is to report, and none of those it is to let be. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *src(void)
{
	const char *s = getenv("EBB_SRC");

	return s && *s ? s : ".";
}

/* The script run in tree with the objects of build: its status, its
 * output in r. */
static int check_dead(struct harness_run *r, const char *tree, const char *build)
{
	char root[4200]; /* absolute: the command runs in tree */
	const char *argv[] = {"sh", "-c", "cd \"$1\" && sh \"$2/scripts/check-dead.sh\" \"$3\"", "sh", tree, root,
			      build, NULL};

	if (!realpath(src(), root))
		fail_msg("EBB_SRC %s: no such directory", src());
	return harness_exec(r, argv, NULL, NULL);
}

static void every_function_is_named(void **state)
{
	char bin[4200], *build;
	struct harness_run r;

	(void)state;
	if (!realpath(harness_ebb_bin(), bin))
		fail_msg("EBB_BIN %s: not found (make test sets it)", harness_ebb_bin());
	build = dirname(bin);
	if (check_dead(&r, src(), build) != 0)
		fail_msg("scripts/check-dead.sh (exit %d):\n%s%s", r.status, r.out, r.err);
	harness_run_free(&r);
}

static void write_in(const char *dir, const char *path, const char *text)
{
	harness_write_file(harness_fmt("%s/%s", dir, path), text);
}

/* One file's object, compiled as make would put it. */
static void compile(const char *dir, const char *name)
{
	const char *argv[] = {"cc", "-c", "-o", harness_fmt("%s/build/src/a/%s.o", dir, name),
			      harness_fmt("%s/src/a/%s.c", dir, name), NULL};
	struct harness_run r;

	if (harness_exec(&r, argv, NULL, NULL) != 0)
		fail_msg("cc %s.c (exit %d): %s", name, r.status, r.err);
	harness_run_free(&r);
}

static void finds_what_it_must(void **state)
{
	const char *dir = harness_tmpdir();
	struct harness_run r;

	(void)state;
	assert_int(system(harness_fmt("mkdir -p '%s/src/a' '%s/tests' '%s/bench' '%s/scripts' '%s/build/src/a'", dir,
				      dir, dir, dir, dir)),
		   0);
	write_in(dir, "src/a/one.c",
		 "#include \"one.h\"\n"
		 "int used(void) { return 1; }\n"
		 "int dead(void) { return 2; }\n"
		 "int mine(void) { return 3; }\n"
		 "int by_macro(void) { return 4; }\n"
		 "int in_words(void) { return 5; }\n"
		 "int allowed(void) { return 6; }\n"
		 "int by_test(void) { return 7; }\n"
		 "static int hidden(void) { return mine(); }\n"
		 "int (*const table[])(void) = {hidden, in_words};\n");
	write_in(dir, "src/a/one.h", "#define BY_MACRO() \\\n\t(by_macro() + 0)\nint dead(void); int mine(void);\n");
	write_in(dir, "src/a/two.c",
		 "/* in_words() is named here, in a comment,\n   and in_words again */ // in_words\n"
		 "const char *s = \"in_words() \\\" in_words\", c = 'i';\n"
		 "int used(void);\nint two(void) { return used(); }\n");
	write_in(dir, "tests/t.c", "int by_test(void);\nint main(void) { return by_test() + two(); }\n");
	write_in(dir, "scripts/check-dead.allow", "# a comment line\n\nallowed   # why it stays\n");
	compile(dir, "one");
	compile(dir, "two");

	assert_int(check_dead(&r, dir, "build"), 1);
	assert_contains(r.out, "src/a/one.c: dead\nsrc/a/one.c: in_words\nsrc/a/one.c: mine\n");
	/* Named elsewhere: by a call, a macro, a test; or allowed; or static. */
	assert_null(strstr(r.out, ": used\n"));
	assert_null(strstr(r.out, "by_macro"));
	assert_null(strstr(r.out, "by_test"));
	assert_null(strstr(r.out, ": allowed"));
	assert_null(strstr(r.out, "hidden"));
	assert_null(strstr(r.out, ": two"));
	harness_run_free(&r);

	/* Once they are gone, it passes. */
	write_in(dir, "src/a/one.c",
		 "int used(void) { return 1; }\nint by_macro(void) { return 4; }\nint allowed(void) { return 6; }\n"
		 "int by_test(void) { return 7; }\n");
	compile(dir, "one");
	assert_int(check_dead(&r, dir, "build"), 0);
	harness_run_free(&r);

	/* A file not built is no pass. */
	write_in(dir, "src/a/three.c", "int three(void) { return 3; }\n");
	assert_int(check_dead(&r, dir, "build"), 2);
	assert_contains(r.err, "build/src/a/three.o is missing");
	harness_run_free(&r);
}

static void shellcheck_is_clean(void **state)
{
	const char *argv[] = {"sh", "-c", "cd \"$1\" && shellcheck scripts/check-dead.sh", "sh", src(), NULL};
	struct harness_run r;

	(void)state;
	if (harness_exec(&r, argv, NULL, NULL) != 0)
		fail_msg("shellcheck (exit %d):\n%s%s", r.status, r.out, r.err);
	harness_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_function_is_named),
		cmocka_unit_test(finds_what_it_must),
		cmocka_unit_test(shellcheck_is_clean),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
