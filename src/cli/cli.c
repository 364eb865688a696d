/* See cli.h. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

static void vreport(struct cli *cli, const char *fmt, va_list ap)
{
	fprintf(stderr, "ebb %s: ", cli->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cli, fmt, ap);
	va_end(ap);
	return 1;
}

int cli_usage_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cli, fmt, ap);
	va_end(ap);
	fputs(cli->usage, stderr);
	return 2;
}

int cli_option(struct cli *cli, int opt, char **argv)
{
	switch (opt) {
	case 's':
		cli->server = optarg;
		return CLI_NEXT;
	case CLI_OPT_TOKEN:
		cli->token = optarg;
		return CLI_NEXT;
	case CLI_OPT_CACERT:
		cli->cacert = optarg;
		return CLI_NEXT;
	case CLI_OPT_JSON:
		cli->json = 1;
		return CLI_NEXT;
	case 'h':
		fputs(cli->usage, stdout);
		return 0;
	case ':':
		return cli_usage_error(cli, "option '%s' needs a value", argv[optind - 1]);
	case '?':
		if (optopt)
			return cli_usage_error(cli, "unknown option '-%c'", optopt);
		return cli_usage_error(cli, "unknown or ambiguous option '%s'", argv[optind - 1]);
	}
	return cli_usage_error(cli, "unhandled option %d", opt);
}

int cli_int(struct cli *cli, const char *flag, const char *arg, int64_t min, int64_t max,
	    int64_t *out)
{
	if (parse_int64(arg, out) != 0 || *out < min || *out > max) {
		cli_usage_error(cli, "%s: expected an integer from %lld to %lld, got '%s'", flag,
				(long long)min, (long long)max, arg);
		return -1;
	}
	return 0;
}

int cli_id_args(struct cli *cli, int argc, char **argv, const char *what, int64_t *id)
{
	static const struct option longopts[] = {CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	int c, rc;

	while ((c = getopt_long(argc, argv, CLI_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_option(cli, c, argv)) != CLI_NEXT)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_error(cli, "which %s? (give its id)", what);
	if (optind + 1 < argc)
		return cli_usage_error(cli, "unexpected argument '%s'", argv[optind + 1]);
	if (parse_int64(argv[optind], id) != 0 || *id <= 0)
		return cli_usage_error(cli, "'%s' is not a %s id (a positive integer)", argv[optind], what);
	return CLI_NEXT;
}

int cli_call(struct cli *cli, const char *method, const char *path, json_t *body, json_t **reply)
{
	char why[1024];
	int status;

	*reply = NULL;
	if (!cli->client.curl && client_init(&cli->client, cli->server, cli->token, cli->cacert) != 0) {
		cli_error(cli, "%s", cli->client.err);
		return -1;
	}
	status = client_call(&cli->client, method, path, body, reply);
	if (status < 0) {
		cli_error(cli, "%s", cli->client.err);
		return -1;
	}
	if (status < 200 || status > 299) {
		client_error_text(status, *reply, why, sizeof why);
		cli_error(cli, "%s", why);
	} else if (!json_is_object(*reply)) {
		cli_error(cli, "%s %s: the server replied %d without a JSON object", method, path, status);
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

int cli_fleet_action(int argc, char **argv, const char *action, const char *usage, cli_print_fn *print)
{
	struct cli cli = {.name = action, .usage = usage};
	char path[64];
	int64_t id;
	int rc;

	if ((rc = cli_id_args(&cli, argc, argv, "instance", &id)) != CLI_NEXT)
		return rc;
	snprintf(path, sizeof path, "/v1/fleet/%lld/%s", (long long)id, action);
	return cli_show(&cli, "POST", path, print, &id);
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

int cli_query_add(char *path, size_t size, const char *name, const char *value)
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

void table_add(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *cell;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **cells = realloc(t->cells, cap * sizeof *cells);
		if (!cells) {
			t->failed = 1;
			return;
		}
		t->cells = cells;
		t->cap = cap;
	}
	if (n < 0 || !(cell = malloc((size_t)n + 1))) {
		t->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(cell, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->cells[t->ncells++] = cell;
}

int table_print(const struct table *t, FILE *f)
{
	size_t *width;

	if (t->failed || t->ncols == 0 || !(width = calloc(t->ncols, sizeof *width)))
		return -1;
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
