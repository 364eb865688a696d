/* `ebb store copy --from sqlite:DIR --to postgres:URL`: a SQLite store
 * into an empty PostgreSQL database (store/copy.h); `ebb store check` is
 * cmd_store_check.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/options.h"
#include "common/config.h"
#include "common/mem.h"
#include "store/copy.h"

struct store_args {
	const char *dir; /* --from's, after "sqlite:" */
	const char *url; /* --to's, after "postgres:" */
};

/* The part of arg after the "kind:" of form ("sqlite:DIR") into at: 0,
 * or -1 with why. */
static int after(void *at, const char *arg, const char *form, char *why, size_t size)
{
	size_t n = (size_t)(strchr(form, ':') - form) + 1;

	if (strncmp(arg, form, n) != 0 || !arg[n])
		return options_why(why, size, "expected %s, got '%s'", form, arg);
	*(const char **)at = arg + n;
	return 0;
}

static int sqlite_dir(void *at, const char *arg, char *why, size_t size)
{
	return after(at, arg, "sqlite:DIR", why, size);
}

static int postgres_url(void *at, const char *arg, char *why, size_t size)
{
	return after(at, arg, "postgres:URL", why, size);
}

static const struct option_spec options[] = {
	{"from", 0, OPTION_CALL, "sqlite:DIR", OPTION_AT(struct store_args, dir),
	 "the data_dir of a SQLite store; no serve may run on it", .required = 1, .parse = sqlite_dir},
	{"to", 0, OPTION_CALL, "postgres:URL", OPTION_AT(struct store_args, url),
	 "an empty PostgreSQL database: a libpq connection string or URI;\n"
	 "the password from PGPASSWORD or ~/.pgpass. Its tables are made\n"
	 "if need be, and the copy is one transaction, committed once the\n"
	 "counts and sums of every table are the same on both sides.",
	 .required = 1, .parse = postgres_url},
	{0},
};

static const struct usage usage = {"ebb store copy --from sqlite:DIR --to postgres:URL", NULL, options,
	"`ebb store check` compares the tallies serve keeps with a count of the jobs\n"
	"(see 'ebb store check --help').",
	.max_words = 1};

int cmd_store(int argc, char **argv)
{
	struct store_args a = {0};
	struct config src, dst;
	char err[1024];
	int rc;

	if (argc > 1 && strcmp(argv[1], "check") == 0) {
		char *args[argc];
		args[0] = "store check";
		for (int i = 2; i <= argc; i++)
			args[i - 1] = argv[i];
		return cmd_store_check(argc - 1, args);
	}
	if ((rc = options_parse(&usage, &a, argc, argv)) != OPTIONS_GO_ON)
		return rc;
	if (optind == argc || strcmp(argv[optind], "copy") != 0)
		return options_usage_error(argv[0], "expected the subcommand copy or check");
	config_defaults(&src, &cmd_plugins);
	config_defaults(&dst, &cmd_plugins);
	free(src.data_dir);
	free(src.store_kind);
	free(dst.store_kind);
	src.data_dir = xstrdup(a.dir);
	src.store_kind = xstrdup("sqlite");
	dst.store_kind = xstrdup("postgres");
	rc = config_set(&dst, "postgres", "url", a.url, err, sizeof err);
	if (rc == 0)
		rc = store_copy(&src, &dst, a.url, stdout, err, sizeof err);
	if (rc != 0)
		fprintf(stderr, "ebb store copy: %s\n", err);
	config_free(&src);
	config_free(&dst);
	return rc == 0 ? 0 : 1;
}
