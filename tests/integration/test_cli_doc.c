/* docs/CLI.md says what the binary says: `ebb help` and each command's
 * --help appear in it word for word (scripts/cli-doc.sh writes it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	harness_run_free(&help);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_help_is_in_the_page),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
