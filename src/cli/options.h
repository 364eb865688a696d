/* A command's options, declared once in a table: each flag's name, the
 * name of its value, its help, its default, its check, and where its
 * value goes in the command's struct. One parser (on getopt_long) fills
 * the struct from argv and words every mistake as one line naming the
 * flag; one printer makes --help from the same table, which
 * scripts/cli-doc.sh copies into docs/CLI.md and scripts/man.sh into the
 * manual page. git's parse-options is the model. */
#ifndef EBB_CLI_OPTIONS_H
#define EBB_CLI_OPTIONS_H

#include <getopt.h> /* optind: where the words after the options start */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum option_kind {
	OPTION_END,           /* the end of a table: {0} */
	OPTION_FLAG,          /* no value: sets an int to 1 */
	OPTION_STRING,        /* the value as given: a const char * into argv */
	OPTION_INT,           /* an integer from min to max: an int or an int64_t */
	OPTION_DURATION,      /* "500ms", "30s", "5m" (common/units.h): milliseconds, an int64_t */
	OPTION_WHOLE_SECONDS, /* "30", "90s", "10m": whole seconds from min to max, an int64_t */
	OPTION_SECONDS,       /* "2.5": seconds from fmin to fmax, a double */
	OPTION_JSON,          /* any JSON value; with .field only */
	OPTION_CALL,          /* the command's own parse function, for what no kind says */
	OPTION_GROUP,         /* the options of another table, in this place */
};

/* Where a value goes: its offset in the struct the parser fills, and its
 * size, which the parser checks against the kind. */
struct option_at {
	size_t offset, size;
};
#define OPTION_AT(type, member) {offsetof(type, member), sizeof(((type *)0)->member)}

struct option_spec {
	const char *name; /* the long name, without "--" */
	char short_name;  /* 0: none */
	enum option_kind kind;
	const char *arg;  /* the value's name in the help ("N", "FILE"); NULL for a flag */
	struct option_at at;
	/* Lines; the first beside the option, the others under it. */
	const char *help;
	int64_t min, max;  /* OPTION_INT, OPTION_WHOLE_SECONDS */
	double fmin, fmax; /* OPTION_SECONDS */
	/* Parsed as if given before the command line, and shown as
	 * "(default DEF)" after the help; NULL: none. A value that means
	 * "not given" (NULL, -1) is the struct's own initial value instead. */
	const char *def;
	int required; /* the command cannot go on without it; "(required)" in the help */
	/* Set: the value goes into the JSON object (a json_t *) at `at` under
	 * this name, as true (a flag), a string, an integer or any JSON
	 * (OPTION_JSON): a request's body, or its query (cli.h). */
	const char *field;
	/* OPTION_CALL: puts arg at `at`: 0, or -1 with what was expected in
	 * why (the parser puts "--NAME: " before it). */
	int (*parse)(void *at, const char *arg, char *why, size_t whysize);
	/* OPTION_GROUP: its table, whose `at`s are within the struct at `at`. */
	const struct option_spec *group;
};

/* A command's usage: its forms, what it does, its options. -h and --help
 * are every command's, printed last. */
struct usage {
	const char *forms; /* "ebb jobs [--state S] ...", a line each */
	const char *about; /* what it does, lines of text; NULL: nothing */
	const struct option_spec *options;
	const char *notes; /* lines after the options; NULL: none */
	int max_words;     /* the words that are not options it takes, at most */
	int stop_at_word;  /* options end at the first word (a command's own follow) */
};

#define OPTIONS_ANY_WORDS 0x7fffffff
/* Returned by options_parse for the command to go on. */
#define OPTIONS_GO_ON (-1)

/* Parses argv (argv[0]: "ebb NAME", as main makes it) into args, the
 * command's struct: the defaults, then the options. Returns OPTIONS_GO_ON
 * with the words left in argv[optind..argc), else the exit code: 0 after
 * printing the help (-h, --help) on stdout, 2 after a usage error on
 * stderr. */
int options_parse(const struct usage *u, void *args, int argc, char **argv);

/* A usage error on stderr, "CMD: what was wrong", and a line on where to
 * look, "see 'CMD --help'". cmd is "ebb NAME". Returns 2, the exit code
 * of a usage error. */
int options_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int options_usage_verror(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* For a parse function (OPTION_CALL): what was expected, into why.
 * Returns -1. */
int options_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
