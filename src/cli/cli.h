/* What the client commands (submit, jobs, job, fleet, ...) share: the common
 * options, the call to the server with its error as one line, and output
 * for people (tables, argv as a shell would read it). */
#ifndef EBB_CLI_H
#define EBB_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/options.h"
#include "common/client.h"

/* The options of the client commands. cli_server_options: -s/--server,
 * --token and --cacert, into a struct client_args (ebb worker's too);
 * cli_client_options: those and --json, into a struct cli. A command
 * includes them in its table as a group. */
extern const struct option_spec cli_server_options[];
extern const struct option_spec cli_client_options[];

struct cli {
	const char *name; /* "ebb NAME" (main's argv[0]), for messages */
	struct client_args conn;
	int json;
	/* The call's query parameters: the command's options that go there
	 * (.field) and what it adds; cli_call puts them after the path. */
	json_t *query;
	struct client client; /* connected when client.curl is set */
};

/* Where an option goes when it is a query parameter of the call (with
 * .field, its name there), in a command whose struct is a struct cli. */
#define CLI_QUERY OPTION_AT(struct cli, query)

/* Parses a client command's argv into args, the command's struct, whose
 * struct cli is cli: names it and makes its query first. Returns as
 * options_parse; cli is closed unless it returns OPTIONS_GO_ON. */
int cli_parse(struct cli *cli, const struct usage *u, void *args, int argc, char **argv);

/* "ebb NAME: reason" on stderr; returns 1, the exit code of a failed call. */
int cli_error(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A usage error (options_usage_error's lines); returns 2, its exit code. */
int cli_usage_error(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sends a call (connecting on the first), path followed by cli->query,
 * and returns its 2xx status with the reply object in *reply, or -1 after
 * printing why it failed: the server's error, or why no reply came. */
int cli_call(struct cli *cli, const char *method, const char *path, json_t *body, json_t **reply);
/* Frees the connection and the query. */
void cli_close(struct cli *cli);

/* Prints a reply for people: 0, or the exit code after cli_error. arg is
 * the command's own (cli_by_id passes the id). */
typedef int cli_print_fn(struct cli *cli, json_t *reply, void *arg);
/* The tail of every command that reads: sends the call without a body,
 * closes the connection, prints the reply (as JSON under --json, else with
 * print) and frees it. Returns the exit code: 1 when the call failed, else
 * print's (0 under --json). */
int cli_show(struct cli *cli, const char *method, const char *path, cli_print_fn *print, void *arg);

/* A whole command that reads and prints: the client options and those
 * of u (whose struct is a struct cli: each goes to the query), no word,
 * GET path. Returns the exit code. */
int cli_get(int argc, char **argv, const struct usage *u, const char *path, cli_print_fn *print);

/* A whole command on one thing by its id: `ebb job ID`, `ebb drain ID`. */
struct cli_by_id {
	struct usage usage; /* the client options, and one word: the id */
	const char *what;   /* "job", "instance", for messages */
	const char *method;
	const char *path;   /* the id in place of its %lld */
	/* The reply, for people (arg: the id, an int64_t *); NULL: the line
	 * done, its %lld the id. */
	cli_print_fn *print;
	const char *done;
};
/* Runs it; returns the exit code. */
int cli_by_id(int argc, char **argv, const struct cli_by_id *c);
/* The id word after the options (argv[optind]) of a what ("job"):
 * OPTIONS_GO_ON, or 2 after the usage error. */
int cli_id_word(struct cli *cli, int argc, char **argv, const char *what, int64_t *id);

/* The member at a dotted path ("markets.spot.price"), or NULL. */
json_t *cli_jpath(json_t *v, const char *path);
/* The number there, 0 when it is missing or not a number. */
double cli_num(json_t *v, const char *path);
void cli_print_json(json_t *v);
/* "5s", "3m", "2h", "4d": the largest unit that fits, as people glance. */
void cli_span_text(double seconds, char *buf, size_t size);
/* The resident handlers of a worker or instance (GET /v1/workers, /v1/fleet)
 * for a table: "embed ready 41s", "embed starting", comma-separated; "-"
 * for none. */
void cli_handlers_text(json_t *handlers, char *buf, size_t size);

/* A command's argv as a shell would read it back ("sh -c 'a b'"), cut
 * with "..." at size; control characters shown as '?'. */
void cli_argv_text(json_t *argv, char *buf, size_t size);
/* A job's state as people read it: a leased job is "running" (the API's
 * state stays "leased"). */
const char *cli_state_text(const char *state);
/* Cuts s to at most max characters (UTF-8), the last three "...". */
void cli_truncate(char *s, size_t max);

/* A table for people: a header row, then cells left to right, each
 * column as wide as its widest cell. */
struct table {
	size_t ncols, ncells, cap;
	char **cells;
};

void table_init(struct table *t, const char *const *headers); /* NULL-terminated */
/* table_init, then a row for each member of the array rows, by add_row. */
void table_rows(struct table *t, const char *const *headers, json_t *rows,
		void (*add_row)(struct table *t, json_t *row));
void table_add(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

#endif
