/* docs/CLI.md says what the binary says: `ebb help` and each command's
 * --help appear in it word for word (scripts/cli-doc.sh writes it), and
 * its examples ("$ ebb ...", then what it prints) print what they show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>

#include "harness.h"

static void every_help_is_in_the_page(void **state)
{
	const char *src = getenv("EBB_SRC");
	struct harness_run help, r;
	char *page, *line, *save = NULL;
	int commands = 0;

	(void)state;
	page = harness_read_file(harness_fmt("%s/docs/CLI.md", src ? src : "."), NULL);
	if (!page)
		fail_msg("docs/CLI.md not found (EBB_SRC is the source tree; make test sets it)");
	harness_ebb(&help, NULL, "help", NULL);
	assert_int(help.status, 0);
	if (!strstr(page, help.out))
		fail_msg("docs/CLI.md lacks `ebb help` as it is now; run scripts/cli-doc.sh");
	for (line = strtok_r(help.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[32];
		/* The command lines of the list: two spaces, then the name. */
		if (strncmp(line, "  ", 2) != 0 || sscanf(line + 2, "%31[a-z]", name) != 1 ||
		    !strcmp(name, "help") || !strcmp(name, "version"))
			continue;
		harness_ebb(&r, NULL, name, "--help", NULL);
		assert_int(r.status, 0);
		if (!strstr(page, harness_fmt("## ebb %s\n\n```\n%s```\n", name, r.out)))
			fail_msg("docs/CLI.md lacks `ebb %s --help` as it is now; run scripts/cli-doc.sh", name);
		harness_run_free(&r);
		commands++;
	}
	assert_true(commands >= 15);
	harness_ebb(&r, NULL, "store", "check", "--help", NULL);
	assert_int(r.status, 0);
	if (!strstr(page, harness_fmt("## ebb store check\n\n```\n%s```\n", r.out)))
		fail_msg("docs/CLI.md lacks `ebb store check --help` as it is now; run scripts/cli-doc.sh");
	harness_run_free(&r);
	harness_run_free(&help);
	free(page);
}

/* Runs one example, a block of "$ " lines each followed by what it
 * prints (stdout and stderr as a terminal shows them), in a directory of
 * its own with ebb on the PATH. */
static void run_example(const char *block, size_t len)
{
	char script[4096] = "exec 2>&1\n", want[4096] = "", bin[4096];
	const char *path = getenv("PATH");
	struct harness_run r;

	for (const char *line = block; line < block + len;) {
		size_t n = strcspn(line, "\n");
		if (strncmp(line, "$ ", 2) == 0)
			snprintf(script + strlen(script), sizeof script - strlen(script), "%.*s\n", (int)n - 2, line + 2);
		else
			snprintf(want + strlen(want), sizeof want - strlen(want), "%.*s\n", (int)n, line);
		line += n + 1;
	}
	snprintf(bin, sizeof bin, "%s", harness_ebb_bin());
	harness_exec(&r, (const char *const[]){"sh", "-c", script, NULL}, NULL,
		     (const char *const[]){harness_fmt("PATH=%s:%s", dirname(bin), path ? path : "/usr/bin:/bin"), NULL});
	if (strcmp(r.out, want) != 0)
		fail_msg("docs/CLI.md's example\n%s\nprints\n%s", script, r.out);
	harness_run_free(&r);
}

static void examples_print_what_they_show(void **state)
{
	const char *src = getenv("EBB_SRC");
	char *page = harness_read_file(harness_fmt("%s/docs/CLI.md", src ? src : "."), NULL);
	int examples = 0;

	(void)state;
	assert_non_null(page);
	for (char *fence = strstr(page, "```\n"); fence; fence = strstr(fence, "```\n")) {
		char *body = fence + 4, *end = strstr(body, "```\n");
		if (!end)
			break;
		if (strncmp(body, "$ ebb ", 6) == 0 || strncmp(body, "$ printf ", 9) == 0) {
			run_example(body, (size_t)(end - body));
			examples++;
		}
		fence = end + 4;
	}
	assert_true(examples >= 1);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_help_is_in_the_page),
		cmocka_unit_test(examples_print_what_they_show),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
