/* `ebb store copy --from sqlite:DIR --to postgres:URL`: a SQLite store
 * into an empty PostgreSQL database (store/copy.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "store/copy.h"

static const char usage[] =
	"usage: ebb store copy --from sqlite:DIR --to postgres:URL\n"
	"  --from sqlite:DIR   the data_dir of a SQLite store; no serve may run on it\n"
	"  --to postgres:URL   an empty PostgreSQL database: a libpq connection string or URI;\n"
	"                      the password from PGPASSWORD or ~/.pgpass. Its tables are made\n"
	"                      if need be, and the copy is one transaction, committed once the\n"
	"                      counts and sums of every table are the same on both sides.\n";

/* The part of arg after "kind:", or NULL. */
static const char *after(const char *arg, const char *kind)
{
	size_t n = strlen(kind);

	return arg && strncmp(arg, kind, n) == 0 && arg[n] == ':' && arg[n + 1] ? arg + n + 1 : NULL;
}

int cmd_store(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *from = NULL, *to = NULL, *dir, *url;
	struct config src, dst;
	char err[1024];
	int c, rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "copy") != 0) {
		fprintf(stderr, "ebb store: expected the subcommand copy\n%s", usage);
		return 2;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = optarg;
			break;
		case 't':
			to = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!(dir = after(from, "sqlite")) || !(url = after(to, "postgres"))) {
		fprintf(stderr, "ebb store copy: %s\n%s",
			!dir ? "--from: expected sqlite:DIR" : "--to: expected postgres:URL", usage);
		return 2;
	}
	config_defaults(&src, &cmd_plugins);
	config_defaults(&dst, &cmd_plugins);
	free(src.data_dir);
	free(src.store_kind);
	free(dst.store_kind);
	src.data_dir = strdup(dir);
	src.store_kind = strdup("sqlite");
	dst.store_kind = strdup("postgres");
	rc = config_set(&dst, "postgres", "url", url, err, sizeof err);
	if (rc == 0)
		rc = store_copy(&src, &dst, url, stdout, err, sizeof err);
	if (rc != 0)
		fprintf(stderr, "ebb store copy: %s\n", err);
	config_free(&src);
	config_free(&dst);
	return rc == 0 ? 0 : 1;
}
