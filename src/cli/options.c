/* See options.h. */
#include "cli/options.h"

#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <string.h>

#include "common/suggest.h"
#include "common/units.h"

/* More than any command has; a larger table is refused at its first run
 * (the tests run every command's --help). */
#define OPTIONS_MAX 48
/* Where the help texts start: room for "  -s, --server URL" and two
 * spaces. A longer option has its help on the next line, as git's. */
#define HELP_COLUMN 24
/* getopt_long's value for the option of index i; a short option returns
 * its letter, below these. */
#define LONG_VAL(i) (0x100 + (i))

/* A command's table flattened (its groups in place) for getopt_long. */
struct parser {
	const char *cmd;
	int n;
	const struct option_spec *spec[OPTIONS_MAX];
	char *at[OPTIONS_MAX]; /* the value's place in the command's struct */
	int seen[OPTIONS_MAX];
	struct option longopts[OPTIONS_MAX + 2]; /* and --help, and the end */
	char shortopts[2 * OPTIONS_MAX + 4];
};

int options_usage_verror(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nsee '%s --help'\n", cmd);
	return 2;
}

int options_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	options_usage_verror(cmd, fmt, ap);
	va_end(ap);
	return 2;
}

int options_why(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* Whether the place fits the kind. A table that is wrong is a bug: the
 * command refuses to run at all, rather than write past a field. */
static int fits(const struct option_spec *o)
{
	size_t size = o->at.size;

	if (o->field)
		return size == sizeof(json_t *) && (o->kind == OPTION_FLAG || o->kind == OPTION_STRING ||
						    o->kind == OPTION_INT || o->kind == OPTION_WHOLE_SECONDS ||
						    o->kind == OPTION_JSON);
	switch (o->kind) {
	case OPTION_FLAG:
		return size == sizeof(int);
	case OPTION_STRING:
		return size == sizeof(const char *);
	case OPTION_INT:
		return size == sizeof(int) || size == sizeof(int64_t);
	case OPTION_DURATION:
	case OPTION_WHOLE_SECONDS:
		return size == sizeof(int64_t);
	case OPTION_SECONDS:
		return size == sizeof(double);
	case OPTION_CALL:
		return o->parse != NULL;
	default:
		return 0;
	}
}

static int add(struct parser *p, const struct option_spec *table, char *base)
{
	for (const struct option_spec *o = table; o->kind != OPTION_END; o++) {
		if (o->kind == OPTION_GROUP) {
			if (add(p, o->group, base + o->at.offset) != 0)
				return -1;
			continue;
		}
		if (p->n == OPTIONS_MAX || !o->name || !fits(o)) {
			fprintf(stderr, "%s: the table of options is wrong at --%s\n", p->cmd, o->name ? o->name : "?");
			return -1;
		}
		p->spec[p->n] = o;
		p->at[p->n] = base + o->at.offset;
		p->longopts[p->n] = (struct option){o->name, o->kind == OPTION_FLAG ? no_argument : required_argument,
						    NULL, LONG_VAL(p->n)};
		if (o->short_name) {
			size_t len = strlen(p->shortopts);
			p->shortopts[len] = o->short_name;
			p->shortopts[len + 1] = o->kind == OPTION_FLAG ? '\0' : ':';
		}
		p->n++;
	}
	return 0;
}

/* Whole seconds, the API's unit: rounding "1500ms" quietly would run a job
 * at a time nobody asked for. */
static int whole_seconds(const struct option_spec *o, const char *arg, int64_t *out, char *why, size_t size)
{
	char lo[32], hi[32];
	int64_t ms;

	if (parse_int64(arg, out) != 0) {
		if (parse_duration_ms(arg, &ms) != 0)
			return options_why(why, size, "expected a duration like 30, 90s, 10m or 2h, got '%s'", arg);
		if (ms % 1000 != 0)
			return options_why(why, size, "'%s' is not a whole number of seconds", arg);
		*out = ms / 1000;
	}
	if (*out < o->min || *out > o->max) {
		format_duration(lo, sizeof lo, o->min * 1000);
		format_duration(hi, sizeof hi, o->max * 1000);
		return options_why(why, size, "expected from %s to %s, got '%s'", lo, hi, arg);
	}
	return 0;
}

/* "0.001", "1e10": a bound as people write it (not %g's "1e+10"). */
static void number_text(char *buf, size_t size, double x)
{
	char *e;

	snprintf(buf, size, "%g", x);
	if ((e = strstr(buf, "e+")))
		memmove(e + 1, e + 2, strlen(e + 2) + 1);
}

static int seconds(const struct option_spec *o, const char *arg, double *out, char *why, size_t size)
{
	char lo[32], hi[32];

	if (parse_double(arg, out) == 0 && *out >= o->fmin && *out <= o->fmax)
		return 0;
	number_text(lo, sizeof lo, o->fmin);
	number_text(hi, sizeof hi, o->fmax);
	return options_why(why, size, "expected seconds from %s to %s, got '%s'", lo, hi, arg);
}

/* An integer into its place: the JSON object's field, an int or an int64_t. */
static void put_int(const struct option_spec *o, char *at, int64_t n)
{
	if (o->field)
		json_object_set_new(*(json_t **)at, o->field, json_integer(n));
	else if (o->at.size == sizeof(int))
		*(int *)at = (int)n;
	else
		*(int64_t *)at = n;
}

/* Puts arg at the option's place: 0, or -1 with what was expected in why. */
static int set(const struct option_spec *o, char *at, const char *arg, char *why, size_t size)
{
	json_error_t je;
	json_t *v;
	int64_t n;

	switch (o->kind) {
	case OPTION_FLAG:
		if (o->field)
			json_object_set_new(*(json_t **)at, o->field, json_true());
		else
			*(int *)at = 1;
		return 0;
	case OPTION_STRING:
		if (!o->field) {
			*(const char **)at = arg;
			return 0;
		}
		if (!(v = json_string(arg)))
			return options_why(why, size, "not valid UTF-8");
		json_object_set_new(*(json_t **)at, o->field, v);
		return 0;
	case OPTION_INT:
		if (parse_int64(arg, &n) != 0 || n < o->min || n > o->max)
			return options_why(why, size, "expected an integer from %lld to %lld, got '%s'", (long long)o->min,
				    (long long)o->max, arg);
		put_int(o, at, n);
		return 0;
	case OPTION_DURATION:
		if (parse_duration_ms(arg, &n) != 0)
			return options_why(why, size, "expected a duration such as 30s or 5m, got '%s'", arg);
		put_int(o, at, n);
		return 0;
	case OPTION_WHOLE_SECONDS:
		if (whole_seconds(o, arg, &n, why, size) != 0)
			return -1;
		put_int(o, at, n);
		return 0;
	case OPTION_SECONDS:
		return seconds(o, arg, (double *)at, why, size);
	case OPTION_JSON:
		if (!(v = json_loads(arg, JSON_DECODE_ANY, &je)))
			return options_why(why, size, "not JSON: %s at column %d", je.text, je.column);
		json_object_set_new(*(json_t **)at, o->field, v);
		return 0;
	case OPTION_CALL:
		return o->parse(at, arg, why, size);
	default: /* fits() let none other through */
		return options_why(why, size, "no such kind of option");
	}
}

/* "unknown option '--prioirty'; did you mean '--priority'?": the nearest
 * of the command's long options (--help too), when one is close. */
static int unknown_option(const struct parser *p, const char *word, size_t len)
{
	struct suggest near;

	suggest_init(&near, word + 2, len);
	for (const struct option *o = p->longopts; o->name; o++)
		suggest_consider(&near, o->name);
	if (near.best)
		return options_usage_error(p->cmd, "unknown option '%s'; did you mean '--%s'?", word, near.best);
	return options_usage_error(p->cmd, "unknown option '%s'", word);
}

/* getopt_long's '?': an unknown short option, or a word of "--" that names
 * no option, names several (the start of each), or gives a flag a value. */
static int bad_option(const struct parser *p, const char *word)
{
	size_t len = strcspn(word + 2, "="), n = 0;
	char names[256] = "";
	int matches = 0;

	if (optopt > 0 && optopt < LONG_VAL(0))
		return options_usage_error(p->cmd, "unknown option '-%c'", optopt);
	for (const struct option *o = p->longopts; o->name; o++) {
		if (strncmp(o->name, word + 2, len) != 0)
			continue;
		if (strlen(o->name) == len)
			return options_usage_error(p->cmd, "option '--%s' takes no value", o->name);
		if (n < sizeof names)
			n += (size_t)snprintf(names + n, sizeof names - n, "%s--%s", matches++ ? ", " : "", o->name);
	}
	if (matches > 1)
		return options_usage_error(p->cmd, "ambiguous option '%.*s': %s?", (int)len + 2, word, names);
	return unknown_option(p, word, len);
}

static int short_index(const struct parser *p, int c)
{
	for (int i = 0; i < p->n; i++) {
		if (p->spec[i]->short_name == c)
			return i;
	}
	return -1;
}

static void options_help(const struct usage *u, FILE *out);

int options_parse(const struct usage *u, void *args, int argc, char **argv)
{
	struct parser p = {.cmd = argv[0]};
	char why[512];
	int c, i;

	/* '+': stop at the first word; ':': a missing value is told apart. */
	strcpy(p.shortopts, u->stop_at_word ? "+:h" : ":h");
	if (add(&p, u->options, args) != 0)
		return 2;
	p.longopts[p.n] = (struct option){"help", no_argument, NULL, 'h'};
	for (i = 0; i < p.n; i++) {
		if (p.spec[i]->def && set(p.spec[i], p.at[i], p.spec[i]->def, why, sizeof why) != 0)
			return options_usage_error(p.cmd, "--%s: its default: %s", p.spec[i]->name, why);
	}
	opterr = 0; /* the errors are worded here, naming the command */
	optind = 0; /* a scan from the start, however many came before (glibc's and musl's reset) */
	while ((c = getopt_long(argc, argv, p.shortopts, p.longopts, NULL)) != -1) {
		if (c == 'h') {
			options_help(u, stdout);
			return 0;
		}
		if (c == ':')
			return options_usage_error(p.cmd, "option '%s' needs a value", argv[optind - 1]);
		if (c == '?')
			return bad_option(&p, argv[optind - 1]);
		i = c >= LONG_VAL(0) ? c - LONG_VAL(0) : short_index(&p, c);
		if (set(p.spec[i], p.at[i], optarg, why, sizeof why) != 0)
			return options_usage_error(p.cmd, "--%s: %s", p.spec[i]->name, why);
		p.seen[i] = 1;
	}
	for (i = 0; i < p.n; i++) {
		if (p.spec[i]->required && !p.seen[i])
			return options_usage_error(p.cmd, "--%s is required", p.spec[i]->name);
	}
	if (argc - optind > u->max_words)
		return options_usage_error(p.cmd, "unexpected argument '%s'", argv[optind + u->max_words]);
	return OPTIONS_GO_ON;
}

/* Text of several lines, each after the first indented by indent. */
static void put_lines(FILE *out, const char *text, int indent)
{
	for (; *text; text++) {
		fputc(*text, out);
		if (*text == '\n')
			fprintf(out, "%*s", indent, "");
	}
}

static void help_option(FILE *out, const struct option_spec *o)
{
	char dash[8] = "";
	int n;

	if (o->short_name)
		snprintf(dash, sizeof dash, "-%c, ", o->short_name);
	n = fprintf(out, "  %s--%s%s%s", dash, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	if (n + 2 > HELP_COLUMN) {
		fputc('\n', out);
		n = 0;
	}
	fprintf(out, "%*s", HELP_COLUMN - n, "");
	put_lines(out, o->help, HELP_COLUMN);
	if (o->def)
		fprintf(out, " (default %s)", o->def);
	fputs(o->required ? " (required)\n" : "\n", out);
}

static void help_table(FILE *out, const struct option_spec *table)
{
	for (const struct option_spec *o = table; o->kind != OPTION_END; o++) {
		if (o->kind == OPTION_GROUP)
			help_table(out, o->group);
		else
			help_option(out, o);
	}
}

/* The help: "usage: " and the forms, the about, each option with its help
 * in a column, the notes. */
static void options_help(const struct usage *u, FILE *out)
{
	static const struct option_spec help = {"help", 'h', OPTION_FLAG, NULL, {0, 0}, "print this help"};

	fputs("usage: ", out);
	put_lines(out, u->forms, (int)strlen("usage: "));
	fputc('\n', out);
	if (u->about)
		fprintf(out, "%s\n", u->about);
	help_table(out, u->options);
	help_option(out, &help);
	if (u->notes)
		fprintf(out, "%s\n", u->notes);
}
