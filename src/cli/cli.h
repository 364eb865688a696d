/* What the client commands (submit, jobs, job, fleet, ...) share: the common
 * flags, the call to the server with its error as one line, and output for
 * people (tables, argv as a shell would read it). */
#ifndef EBB_CLI_H
#define EBB_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/client.h"

/* The common options, to put in each command's getopt_long tables. The
 * leading ':' lets cli_option word the errors ("ebb jobs: ...", not
 * getopt's "jobs: ..."). A command's own long-only options take values
 * from CLI_OPT_OWN up. */
enum { CLI_OPT_TOKEN = 0x1000, CLI_OPT_CACERT, CLI_OPT_JSON, CLI_OPT_OWN = 0x100 };
#define CLI_SHORTOPTS ":s:h"
#define CLI_LONGOPTS                                                                                   \
	{"server", required_argument, NULL, 's'}, {"token", required_argument, NULL, CLI_OPT_TOKEN},     \
	{"cacert", required_argument, NULL, CLI_OPT_CACERT}, {"json", no_argument, NULL, CLI_OPT_JSON}, \
	{"help", no_argument, NULL, 'h'}
#define CLI_USAGE_COMMON                                                                   \
	"  -s, --server URL      server (default $EBB_SERVER, else http://127.0.0.1:7070);\n"  \
	"                        URL,URL,...: serves on one database, tried in turn\n"      \
	"  --token TOKEN         bearer token (default $EBB_TOKEN)\n"                          \
	"  --cacert FILE         CA certificates (PEM) to trust for an https:// server\n"      \
	"                        (default $EBB_CACERT, else the system's)\n"                   \
	"  --json                print the server's JSON reply\n"                              \
	"  -h, --help            print this help\n"

struct cli {
	const char *name;           /* the command, for messages */
	const char *usage;          /* its --help text */
	const char *server, *token, *cacert; /* from the flags; NULL: from the environment */
	int json;
	struct client client; /* connected when client.curl is set */
};

/* Handles an option of the common set, or getopt's report of a bad one, in
 * a command's option loop. Returns CLI_NEXT to go on, else the exit code:
 * 0 after --help, 2 after a bad option. */
#define CLI_NEXT (-1)
int cli_option(struct cli *cli, int opt, char **argv);

/* "ebb NAME: reason" on stderr; returns 1, the exit code of a failed call. */
int cli_error(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same followed by the usage; returns 2, the exit code of a bad argument. */
int cli_usage_error(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A flag's integer value in [min, max]: 0, or -1 after cli_usage_error. */
int cli_int(struct cli *cli, const char *flag, const char *arg, int64_t min, int64_t max,
	    int64_t *out);
/* The arguments of a command of one id (job, cancel, drain, reclaim): the
 * common options, then the id of a `what` (job, instance). Returns
 * CLI_NEXT with *id set, else the exit code (0 after --help, 2 after a bad
 * option or argument). */
int cli_id_args(struct cli *cli, int argc, char **argv, const char *what, int64_t *id);

/* Sends a call (connecting on the first) and returns its 2xx status with
 * the reply object in *reply, or -1 after printing why it failed: the
 * server's error, or why no reply came. */
int cli_call(struct cli *cli, const char *method, const char *path, json_t *body, json_t **reply);
void cli_close(struct cli *cli);

/* Prints a reply for people: 0, or the exit code after cli_error. arg is
 * the command's own (cli_fleet_action passes the instance id). */
typedef int cli_print_fn(struct cli *cli, json_t *reply, void *arg);
/* The tail of every command that reads: sends the call without a body,
 * closes the connection, prints the reply (as JSON under --json, else with
 * print) and frees it. Returns the exit code: 1 when the call failed, else
 * print's (0 under --json). */
int cli_show(struct cli *cli, const char *method, const char *path, cli_print_fn *print, void *arg);
/* A whole `ebb ACTION ID` command on an instance: POST /v1/fleet/ID/ACTION,
 * the reply printed by print (arg: the int64_t id). Returns the exit code. */
int cli_fleet_action(int argc, char **argv, const char *action, const char *usage, cli_print_fn *print);

/* Appends "?name=value" or "&name=value", percent-encoded: 0, or -1 when
 * path is full. */
int cli_query_add(char *path, size_t size, const char *name, const char *value);

/* The member at a dotted path ("markets.spot.price"), or NULL. */
json_t *cli_jpath(json_t *v, const char *path);
/* The number there, 0 when it is missing or not a number. */
double cli_num(json_t *v, const char *path);
void cli_print_json(json_t *v);
/* "5s", "3m", "2h", "4d": the largest unit that fits, as people glance. */
void cli_span_text(double seconds, char *buf, size_t size);

/* A command's argv as a shell would read it back ("sh -c 'a b'"), cut
 * with "..." at size; control characters shown as '?'. */
void cli_argv_text(json_t *argv, char *buf, size_t size);
/* Cuts s to at most max characters (UTF-8), the last three "...". */
void cli_truncate(char *s, size_t max);

/* A table for people: a header row, then cells left to right, each
 * column as wide as its widest cell. */
struct table {
	size_t ncols, ncells, cap;
	char **cells;
	int failed; /* out of memory: print refuses */
};

void table_init(struct table *t, const char *const *headers); /* NULL-terminated */
void table_add(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

#endif
