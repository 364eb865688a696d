/* See cli.h. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/mem.h"
#include "common/units.h"

#define CONN(member) OPTION_AT(struct client_args, member)

const struct option_spec cli_server_options[] = {
	{"server", 's', OPTION_STRING, "URL", CONN(server),
	 "server (default $EBB_SERVER, else http://127.0.0.1:7070);\n"
	 "URL,URL,...: serves on one database, tried in turn"},
	{"token", 0, OPTION_STRING, "TOKEN", CONN(token), "bearer token (default $EBB_TOKEN)"},
	{"cacert", 0, OPTION_STRING, "FILE", CONN(cacert),
	 "CA certificates (PEM) to trust for an https:// server\n"
	 "(default $EBB_CACERT, else the system's)"},
	{0},
};

const struct option_spec cli_client_options[] = {
	{.kind = OPTION_GROUP, .group = cli_server_options, .at = OPTION_AT(struct cli, conn)},
	{"json", 0, OPTION_FLAG, NULL, OPTION_AT(struct cli, json), "print the server's JSON reply"},
	{0},
};

int cli_parse(struct cli *cli, const struct usage *u, void *args, int argc, char **argv)
{
	int rc;

	cli->name = argv[0];
	cli->query = json_object();
	if ((rc = options_parse(u, args, argc, argv)) != OPTIONS_GO_ON)
		cli_close(cli);
	return rc;
}

int cli_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cli_usage_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	options_usage_verror(cli->name, fmt, ap);
	va_end(ap);
	return 2;
}

/* Appends "?name=value" or "&name=value", percent-encoded: 0, or -1 when
 * path is full. */
static int query_add(char *path, size_t size, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	int w = snprintf(path + n, size - n, "%c%s=", strchr(path, '?') ? '&' : '?', name);

	if (w < 0 || (size_t)w >= size - n)
		return -1;
	n += (size_t)w;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (n + 4 > size)
			return -1;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p)) {
			path[n++] = (char)*p;
		} else {
			path[n++] = '%';
			path[n++] = hex[*p >> 4];
			path[n++] = hex[*p & 15];
		}
	}
	path[n] = '\0';
	return 0;
}

/* path, then query's members: a string as it is, an integer in decimal,
 * true as 1. 0, or -1 when buf is too small. */
static int with_query(char *buf, size_t size, const char *path, json_t *query)
{
	const char *name;
	json_t *v;

	if ((size_t)snprintf(buf, size, "%s", path) >= size)
		return -1;
	json_object_foreach(query, name, v) {
		char num[32] = "1";
		if (json_is_integer(v))
			snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
		if (query_add(buf, size, name, json_is_string(v) ? json_string_value(v) : num) != 0)
			return -1;
	}
	return 0;
}

int cli_call(struct cli *cli, const char *method, const char *path, json_t *body, json_t **reply)
{
	char why[1024], url[4096];
	int status;

	*reply = NULL;
	if (with_query(url, sizeof url, path, cli->query) != 0) {
		cli_error(cli, "%s %s: the query is too long", method, path);
		return -1;
	}
	if (!cli->client.curl &&
	    client_init(&cli->client, cli->conn.server, cli->conn.token, cli->conn.cacert) != 0) {
		cli_error(cli, "%s", cli->client.err);
		return -1;
	}
	status = client_call(&cli->client, method, url, body, reply);
	if (status < 0) {
		cli_error(cli, "%s", cli->client.err);
		return -1;
	}
	if (status < 200 || status > 299) {
		client_error_text(status, *reply, why, sizeof why);
		cli_error(cli, "%s", why);
	} else if (!json_is_object(*reply)) {
		cli_error(cli, "%s %s: the server replied %d without a JSON object", method, url, status);
	} else {
		return status;
	}
	json_decref(*reply);
	*reply = NULL;
	return -1;
}

void cli_close(struct cli *cli)
{
	client_free(&cli->client);
	json_decref(cli->query);
	cli->query = NULL;
}

int cli_show(struct cli *cli, const char *method, const char *path, cli_print_fn *print, void *arg)
{
	json_t *reply;
	int rc = cli_call(cli, method, path, NULL, &reply) < 0;

	cli_close(cli);
	if (rc)
		return 1;
	if (cli->json)
		cli_print_json(reply);
	else
		rc = print(cli, reply, arg);
	json_decref(reply);
	return rc;
}

int cli_get(int argc, char **argv, const struct usage *u, const char *path, cli_print_fn *print)
{
	struct cli cli = {0};
	int rc = cli_parse(&cli, u, &cli, argc, argv);

	return rc != OPTIONS_GO_ON ? rc : cli_show(&cli, "GET", path, print, NULL);
}

/* The line of a command on an id whose reply tells no more. */
struct done_line {
	const char *format;
	int64_t id;
};

static int print_done(struct cli *cli, json_t *reply, void *arg)
{
	const struct done_line *d = arg;

	(void)cli, (void)reply;
	printf(d->format, (long long)d->id);
	return 0;
}

int cli_id_word(struct cli *cli, int argc, char **argv, const char *what, int64_t *id)
{
	if (optind == argc)
		return cli_usage_error(cli, "which %s? (give its id)", what);
	if (parse_int64(argv[optind], id) != 0 || *id <= 0)
		return cli_usage_error(cli, "'%s' is not a %s id (a positive integer)", argv[optind], what);
	return OPTIONS_GO_ON;
}

int cli_by_id(int argc, char **argv, const struct cli_by_id *c)
{
	struct cli cli = {0};
	struct done_line done;
	char path[128];
	int64_t id;
	int rc = cli_parse(&cli, &c->usage, &cli, argc, argv);

	if (rc != OPTIONS_GO_ON)
		return rc;
	if ((rc = cli_id_word(&cli, argc, argv, c->what, &id)) != OPTIONS_GO_ON) {
		cli_close(&cli);
		return rc;
	}
	/* The format is the command's own, from its table. */
	snprintf(path, sizeof path, c->path, (long long)id);
	if (c->print)
		return cli_show(&cli, c->method, path, c->print, &id);
	done = (struct done_line){c->done, id};
	return cli_show(&cli, c->method, path, print_done, &done);
}

json_t *cli_jpath(json_t *v, const char *path)
{
	char key[64];

	while (v && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		v = json_object_get(v, key);
		path += n + (path[n] == '.');
	}
	return v;
}

double cli_num(json_t *v, const char *path) { return json_number_value(cli_jpath(v, path)); }

const char *cli_state_text(const char *state) { return strcmp(state, "leased") == 0 ? "running" : state; }

void cli_span_text(double seconds, char *buf, size_t size)
{
	long long s = seconds > 0 ? (long long)seconds : 0;

	if (s < 60)
		snprintf(buf, size, "%llds", s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm", s / 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh", s / 3600);
	else
		snprintf(buf, size, "%lldd", s / 86400);
}

void cli_handlers_text(json_t *handlers, char *buf, size_t size)
{
	json_t *h;
	size_t i, n = 0;

	snprintf(buf, size, "-");
	json_array_foreach(handlers, i, h) {
		char setup[16] = "";
		if (json_is_number(json_object_get(h, "setup_s"))) {
			setup[0] = ' ';
			cli_span_text(cli_num(h, "setup_s"), setup + 1, sizeof setup - 1);
		}
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s %s%s", i ? "," : "",
					      json_string_value(json_object_get(h, "type")),
					      json_string_value(json_object_get(h, "state")), setup);
	}
}

void cli_print_json(json_t *v)
{
	/* 13 digits: Unix times to the millisecond, without float noise. */
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(13));
	fputc('\n', stdout);
}

/* A UTF-8 continuation byte does not start a character. */
static int starts_char(char c) { return ((unsigned char)c & 0xC0) != 0x80; }

static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += starts_char(*s);
	return n;
}

void cli_truncate(char *s, size_t max)
{
	size_t n = 0, i;

	if (chars(s) <= max || max < 3)
		return;
	for (i = 0; s[i]; i++) {
		if (starts_char(s[i]) && n++ == max - 3)
			break;
	}
	strcpy(s + i, "...");
}

/* Bytes a shell passes through unquoted; others need '...'. */
static int plain(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!((unsigned char)*s >= 0x80 || strchr("_-./:=@%+,", *s) ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return 0;
	}
	return 1;
}

struct out {
	char *buf;
	size_t size, len;
	int full;
};

static void put(struct out *o, const char *s)
{
	for (; *s && !o->full; s++) {
		if (o->len + 1 >= o->size) {
			o->full = 1;
			break;
		}
		o->buf[o->len++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	}
	o->buf[o->len] = '\0';
}

void cli_argv_text(json_t *argv, char *buf, size_t size)
{
	struct out o = {buf, size, 0, 0};
	size_t i;
	json_t *arg;

	buf[0] = '\0';
	json_array_foreach(argv, i, arg) {
		const char *s = json_string_value(arg) ? json_string_value(arg) : "";
		if (i > 0)
			put(&o, " ");
		if (plain(s)) {
			put(&o, s);
			continue;
		}
		put(&o, "'");
		for (; *s; s++)
			put(&o, *s == '\'' ? "'\\''" : (char[]){*s, '\0'});
		put(&o, "'");
	}
	if (o.full && size > 4) {
		/* Back off to a character boundary with room for the dots. */
		size_t n = size - 4;
		while (n > 0 && !starts_char(buf[n]))
			n--;
		strcpy(buf + n, "...");
	}
}

void table_init(struct table *t, const char *const *headers)
{
	memset(t, 0, sizeof *t);
	for (; *headers; headers++) {
		table_add(t, "%s", *headers);
		t->ncols++;
	}
}

void table_rows(struct table *t, const char *const *headers, json_t *rows,
		void (*add_row)(struct table *t, json_t *row))
{
	size_t i;
	json_t *row;

	table_init(t, headers);
	json_array_foreach(rows, i, row)
		add_row(t, row);
}

void table_add(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *cell;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->ncells == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	if (n < 0) /* a format that cannot be written: an empty cell */
		n = 0;
	cell = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(cell, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->cells[t->ncells++] = cell;
}

int table_print(const struct table *t, FILE *f)
{
	size_t *width;

	if (t->ncols == 0)
		return -1;
	width = xcalloc(t->ncols, sizeof *width);
	for (size_t i = 0; i < t->ncells; i++) {
		size_t w = chars(t->cells[i]);
		if (w > width[i % t->ncols])
			width[i % t->ncols] = w;
	}
	for (size_t i = 0; i < t->ncells; i++) {
		size_t col = i % t->ncols;
		int last = col == t->ncols - 1 || i == t->ncells - 1;
		fputs(t->cells[i], f);
		if (last) {
			fputc('\n', f);
			continue;
		}
		for (size_t pad = chars(t->cells[i]); pad < width[col] + 2; pad++)
			fputc(' ', f);
	}
	free(width);
	return 0;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

int cmd_run(const struct command *c, int argc, char **argv)
{
	char name[64];

	/* Messages name the command, "ebb worker: ...", after argv[0]. */
	snprintf(name, sizeof name, "ebb %s", c->name);
	argv[0] = name;
	return c->run(argc, argv);
}
