/* GET /metrics against a real serve: every body is checked whole by a
 * strict checker of the Prometheus text format 0.0.4 (below, with its own
 * tests on broken bodies), and the values are checked against what the
 * test did: jobs queued, delayed and leased by lane, leases and their
 * latency on the test clock, replies by status, and, with the local
 * provider and a priced offer, the instances, spend, cost and GPU hours.
 * Also: who may scrape, and the writer's escaping. */
#include <curl/curl.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "serve/metrics.h"

/* ---- the checker ---- */

/* Stricter than the format where ebb never needs its freedom: no empty
 * lines, no comment but HELP and TYPE, single spaces between tokens, no
 * empty or trailing-comma label sets, counters named *_total. */

#define MAX_FAMILIES 256
#define MAX_SERIES 4096
#define MAX_BUCKETS 64

struct pc_family {
	char name[128];
	char type[16]; /* "" until its TYPE line */
	int help, closed, samples;
};

/* One histogram series: the buckets of one label set (le aside). */
struct pc_hist {
	int family;
	char key[512];
	double le[MAX_BUCKETS], count[MAX_BUCKETS];
	int n, has_count, has_sum;
	double total;
};

struct pc {
	struct pc_family fam[MAX_FAMILIES];
	int nfam, current;
	char *series[MAX_SERIES];
	int nseries;
	struct pc_hist hist[256];
	int nhist;
	char *why;
	size_t whysize;
	int line;
};

static int pc_fail(struct pc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pc_fail(struct pc *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(c->why, c->whysize, "line %d: %s", c->line, msg);
	return -1;
}

static int name_start(int ch, int colon) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (colon && ch == ':'); }
static int name_char(int ch, int colon) { return name_start(ch, colon) || (ch >= '0' && ch <= '9'); }

/* Length of a metric name (colon 1) or label name at s; 0 if none. */
static size_t name_len(const char *s, int colon)
{
	size_t n = 0;

	if (!name_start((unsigned char)s[0], colon))
		return 0;
	while (name_char((unsigned char)s[n], colon))
		n++;
	return n;
}

/* A float as Go's parser takes it, minus the spellings ebb never writes:
 * [+-]?(D+(.D*)?|.D+)([eE][+-]?D+)?, +Inf, -Inf, NaN. */
static int parse_float(const char *s, size_t n, double *out)
{
	char buf[64];
	size_t i = 0, digits = 0;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strcmp(buf, "+Inf") == 0 || strcmp(buf, "-Inf") == 0 || strcmp(buf, "NaN") == 0) {
		*out = buf[0] == 'N' ? NAN : buf[0] == '+' ? INFINITY : -INFINITY;
		return 0;
	}
	if (buf[i] == '+' || buf[i] == '-')
		i++;
	while (buf[i] >= '0' && buf[i] <= '9')
		i++, digits++;
	if (buf[i] == '.') {
		i++;
		while (buf[i] >= '0' && buf[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return -1;
	if (buf[i] == 'e' || buf[i] == 'E') {
		size_t exp = 0;
		i++;
		if (buf[i] == '+' || buf[i] == '-')
			i++;
		while (buf[i] >= '0' && buf[i] <= '9')
			i++, exp++;
		if (exp == 0)
			return -1;
	}
	if (i != n)
		return -1;
	*out = strtod(buf, NULL);
	return 0;
}

static int family_index(struct pc *c, const char *name, size_t n)
{
	for (int i = 0; i < c->nfam; i++) {
		if (strlen(c->fam[i].name) == n && strncmp(c->fam[i].name, name, n) == 0)
			return i;
	}
	return -1;
}

/* The checks of a histogram family, once its last line is read. */
static int check_histograms(struct pc *c, int family)
{
	for (int h = 0; h < c->nhist; h++) {
		struct pc_hist *x = &c->hist[h];
		if (x->family != family)
			continue;
		if (x->n == 0)
			return pc_fail(c, "%s{%s}: _sum or _count without buckets", c->fam[family].name, x->key);
		for (int i = 1; i < x->n; i++) {
			if (!(x->le[i] > x->le[i - 1]))
				return pc_fail(c, "%s{%s}: le=%g after le=%g: not in increasing order",
					       c->fam[family].name, x->key, x->le[i], x->le[i - 1]);
			if (x->count[i] < x->count[i - 1])
				return pc_fail(c, "%s{%s}: bucket le=%g has %g, less than %g before it: not cumulative",
					       c->fam[family].name, x->key, x->le[i], x->count[i], x->count[i - 1]);
		}
		if (!isinf(x->le[x->n - 1]))
			return pc_fail(c, "%s{%s}: no le=\"+Inf\" bucket last", c->fam[family].name, x->key);
		if (!x->has_count || !x->has_sum)
			return pc_fail(c, "%s{%s}: no _%s", c->fam[family].name, x->key, x->has_count ? "sum" : "count");
		if (x->total != x->count[x->n - 1])
			return pc_fail(c, "%s{%s}: _count %g is not the +Inf bucket %g", c->fam[family].name, x->key,
				       x->total, x->count[x->n - 1]);
	}
	return 0;
}

/* Lines of another family follow: the current one may not come back. */
static int switch_family(struct pc *c, int family)
{
	if (c->current == family)
		return 0;
	if (c->fam[family].closed)
		return pc_fail(c, "family %s appears again after other families", c->fam[family].name);
	if (c->current >= 0) {
		c->fam[c->current].closed = 1;
		if (strcmp(c->fam[c->current].type, "histogram") == 0 && check_histograms(c, c->current) != 0)
			return -1;
	}
	c->current = family;
	return 0;
}

static int comment_line(struct pc *c, const char *s, size_t len)
{
	static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped", NULL};
	int help = len > 7 && strncmp(s, "# HELP ", 7) == 0, f;
	size_t n;
	const char *p, *end = s + len;

	if (!help && !(len > 7 && strncmp(s, "# TYPE ", 7) == 0))
		return pc_fail(c, "a comment that is not # HELP or # TYPE");
	p = s + 7;
	if (!(n = name_len(p, 1)))
		return pc_fail(c, "bad metric name after %.6s", s + 2);
	if ((f = family_index(c, p, n)) < 0) {
		if (c->nfam == MAX_FAMILIES || n >= sizeof c->fam[0].name)
			return pc_fail(c, "too many families or too long a name");
		f = c->nfam++;
		memset(&c->fam[f], 0, sizeof c->fam[f]);
		memcpy(c->fam[f].name, p, n);
	}
	if (switch_family(c, f) != 0)
		return -1;
	p += n;
	if (p >= end || *p != ' ')
		return pc_fail(c, "no space after the name");
	p++;
	if (help) {
		if (c->fam[f].help)
			return pc_fail(c, "a second HELP for %s", c->fam[f].name);
		c->fam[f].help = 1;
		for (; p < end; p++) {
			if (*p == '\\' && (p + 1 == end || (p[1] != '\\' && p[1] != 'n')))
				return pc_fail(c, "HELP text: a backslash not followed by \\ or n");
			if (*p == '\\')
				p++;
		}
		return 0;
	}
	if (c->fam[f].type[0])
		return pc_fail(c, "a second TYPE for %s", c->fam[f].name);
	if (c->fam[f].samples)
		return pc_fail(c, "TYPE of %s after its samples", c->fam[f].name);
	for (int i = 0; types[i]; i++) {
		if ((size_t)(end - p) == strlen(types[i]) && strncmp(p, types[i], (size_t)(end - p)) == 0) {
			snprintf(c->fam[f].type, sizeof c->fam[f].type, "%s", types[i]);
			if (i == 0 && (n < 6 || strncmp(c->fam[f].name + n - 6, "_total", 6) != 0))
				return pc_fail(c, "counter %s does not end in _total", c->fam[f].name);
			return 0;
		}
	}
	return pc_fail(c, "TYPE %.*s: not counter, gauge, histogram, summary or untyped", (int)(end - p), p);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The series family that a sample's name belongs to, and its suffix. */
static int sample_family(struct pc *c, const char *name, size_t n, const char **suffix)
{
	static const char *const suffixes[] = {"_bucket", "_sum", "_count", NULL};
	int f = family_index(c, name, n);

	*suffix = "";
	if (f >= 0 && strcmp(c->fam[f].type, "histogram") == 0)
		return pc_fail(c, "histogram %s: a sample without _bucket, _sum or _count", c->fam[f].name) - 1;
	if (f >= 0 && c->fam[f].type[0])
		return f;
	for (int i = 0; suffixes[i]; i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && strncmp(name + n - k, suffixes[i], k) == 0 &&
		    (f = family_index(c, name, n - k)) >= 0 &&
		    (strcmp(c->fam[f].type, "histogram") == 0 || (i > 0 && strcmp(c->fam[f].type, "summary") == 0))) {
			*suffix = suffixes[i];
			return f;
		}
	}
	return -1;
}

static int sample_line(struct pc *c, const char *s, size_t len)
{
	const char *p = s, *end = s + len, *suffix, *vstart;
	char *labels[32], key[512] = "", canon[1200];
	size_t n = name_len(s, 1), off = 0;
	int nl = 0, f, le_at = -1, rc = -1;
	double v, le = 0;

	if (!n)
		return pc_fail(c, "not a metric name: %.20s", s);
	p += n;
	if (p < end && *p == '{') {
		p++;
		for (;;) {
			char lab[400];
			size_t ln = name_len(p, 0), k = 0;
			if (!ln)
				goto bad_label;
			if (ln >= 2 && p[0] == '_' && p[1] == '_') {
				rc = pc_fail(c, "label name %.*s: names starting __ are reserved", (int)ln, p);
				goto out;
			}
			if (ln + 1 >= sizeof lab || p + ln + 1 >= end || p[ln] != '=' || p[ln + 1] != '"')
				goto bad_label;
			memcpy(lab, p, ln);
			k = ln;
			lab[k++] = '=';
			p += ln + 2;
			while (p < end && *p != '"') {
				if (*p == '\\') {
					if (p + 1 == end || (p[1] != '\\' && p[1] != '"' && p[1] != 'n')) {
						rc = pc_fail(c, "label value: a backslash not followed by \\, \" or n");
						goto out;
					}
					if (k < sizeof lab - 2)
						lab[k++] = *p;
					p++;
				}
				if (k < sizeof lab - 2)
					lab[k++] = *p;
				p++;
			}
			if (p == end) {
				rc = pc_fail(c, "label value not closed by \"");
				goto out;
			}
			lab[k] = '\0';
			p++;
			if (nl == 32) {
				rc = pc_fail(c, "too many labels");
				goto out;
			}
			for (int i = 0; i < nl; i++) {
				if (strncmp(labels[i], lab, ln + 1) == 0) {
					rc = pc_fail(c, "label %.*s twice", (int)ln, lab);
					goto out;
				}
			}
			labels[nl++] = strdup(lab);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == '}') {
				p++;
				break;
			}
			goto bad_label;
		}
	}
	if (p >= end || *p != ' ')
		goto out_fail_space;
	vstart = ++p;
	while (p < end && *p != ' ')
		p++;
	if (parse_float(vstart, (size_t)(p - vstart), &v) != 0) {
		pc_fail(c, "value '%.*s' is not a float", (int)(p - vstart), vstart);
		goto out;
	}
	if (p < end) {
		const char *t = ++p;
		if (p < end && *p == '-')
			p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == t || p != end || (*t == '-' && p == t + 1)) {
			pc_fail(c, "after the value: not one space and a timestamp in ms");
			goto out;
		}
	}
	if ((f = sample_family(c, s, n, &suffix)) == -2)
		goto out;
	if (f < 0) {
		pc_fail(c, "sample %.*s: no TYPE line before it names its family", (int)n, s);
		goto out;
	}
	if (switch_family(c, f) != 0)
		goto out;
	c->fam[f].samples++;
	/* The series, labels sorted: no two samples of the same one. */
	qsort(labels, (size_t)nl, sizeof *labels, cmp_str);
	off = (size_t)snprintf(canon, sizeof canon, "%.*s", (int)n, s);
	for (int i = 0; i < nl && off < sizeof canon; i++) {
		off += (size_t)snprintf(canon + off, sizeof canon - off, "%c%s", i ? ',' : '{', labels[i]);
		if (strncmp(labels[i], "le=", 3) == 0)
			le_at = i;
	}
	for (int i = 0; i < c->nseries; i++) {
		if (strcmp(c->series[i], canon) == 0) {
			pc_fail(c, "series %s} twice", canon);
			goto out;
		}
	}
	if (c->nseries < MAX_SERIES)
		c->series[c->nseries++] = strdup(canon);
	if (strcmp(c->fam[f].type, "counter") == 0 && !(v >= 0)) {
		pc_fail(c, "counter %.*s is %g: counters are not negative or NaN", (int)n, s, v);
		goto out;
	}
	if (strcmp(c->fam[f].type, "summary") == 0 && !suffix[0]) {
		int q = 0;
		for (int i = 0; i < nl; i++)
			q |= strncmp(labels[i], "quantile=", 9) == 0;
		if (!q) {
			pc_fail(c, "summary %.*s: a sample without quantile", (int)n, s);
			goto out;
		}
	}
	if (strcmp(c->fam[f].type, "histogram") == 0) {
		struct pc_hist *h = NULL;
		size_t koff = 0;
		for (int i = 0; i < nl; i++) {
			if (i != le_at || strcmp(suffix, "_bucket") != 0)
				koff += (size_t)snprintf(key + koff, koff < sizeof key ? sizeof key - koff : 0, "%s,", labels[i]);
		}
		if (strcmp(suffix, "_bucket") == 0) {
			if (le_at < 0) {
				pc_fail(c, "%.*s without le", (int)n, s);
				goto out;
			}
			if (parse_float(labels[le_at] + 3, strlen(labels[le_at] + 3), &le) != 0 || isnan(le)) {
				pc_fail(c, "le=\"%s\" is not a float", labels[le_at] + 3);
				goto out;
			}
			if (!(v >= 0)) {
				pc_fail(c, "bucket count %g", v);
				goto out;
			}
		} else if (le_at >= 0) {
			pc_fail(c, "le on %.*s", (int)n, s);
			goto out;
		}
		for (int i = 0; i < c->nhist; i++) {
			if (c->hist[i].family == f && strcmp(c->hist[i].key, key) == 0)
				h = &c->hist[i];
		}
		if (!h) {
			if (c->nhist == 256) {
				pc_fail(c, "too many histogram series");
				goto out;
			}
			h = &c->hist[c->nhist++];
			memset(h, 0, sizeof *h);
			h->family = f;
			snprintf(h->key, sizeof h->key, "%s", key);
		}
		if (strcmp(suffix, "_bucket") == 0) {
			if (h->has_count || h->has_sum) {
				pc_fail(c, "a bucket after _sum or _count");
				goto out;
			}
			if (h->n == MAX_BUCKETS) {
				pc_fail(c, "too many buckets");
				goto out;
			}
			h->le[h->n] = le;
			h->count[h->n++] = v;
		} else if (strcmp(suffix, "_count") == 0) {
			h->has_count = 1;
			h->total = v;
		} else {
			h->has_sum = 1;
		}
	}
	rc = 0;
	goto out;
bad_label:
	rc = pc_fail(c, "bad label set: expected {name=\"value\",...}");
	goto out;
out_fail_space:
	rc = pc_fail(c, "expected one space before the value");
out:
	for (int i = 0; i < nl; i++)
		free(labels[i]);
	return rc;
}

/* 0 if body is a valid exposition; else -1 and the first fault in why. */
static int promcheck(const char *body, char *why, size_t whysize)
{
	struct pc *c = calloc(1, sizeof *c);
	const char *s = body;
	int rc = 0;

	c->why = why;
	c->whysize = whysize;
	c->current = -1;
	why[0] = '\0';
	if (!*body) {
		snprintf(why, whysize, "empty body");
		rc = -1;
	}
	while (rc == 0 && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		c->line++;
		if (!nl)
			rc = pc_fail(c, "the last line does not end with a newline");
		else if (len == 0)
			rc = pc_fail(c, "an empty line");
		else if (memchr(s, '\r', len) || memchr(s, '\t', len))
			rc = pc_fail(c, "a carriage return or tab");
		else if (s[len - 1] == ' ')
			rc = pc_fail(c, "a trailing space");
		else if (s[0] == '#')
			rc = comment_line(c, s, len);
		else
			rc = sample_line(c, s, len);
		s += len + (nl != NULL);
	}
	if (rc == 0 && c->current >= 0 && strcmp(c->fam[c->current].type, "histogram") == 0)
		rc = check_histograms(c, c->current);
	for (int i = 0; i < c->nseries; i++)
		free(c->series[i]);
	free(c);
	return rc;
}

/* ---- scraping ---- */

/* GET /metrics with token (NULL: the server's; "": none). */
static int get_metrics(struct harness_server *s, const char *token, char **body, char *ctype, size_t ctsize)
{
	return harness_get_text(s, token, "/metrics", body, ctype, ctsize);
}

/* Prometheus' own linter, `promtool check metrics` (Debian's prometheus
 * package; scripts/deps.sh installs it): the names, units and help texts
 * Prometheus expects, which the checker above does not judge. */
static void promtool_check(const char *body)
{
	const char *path = harness_fmt("%s/scrape.txt", harness_tmpdir());
	char out[4096] = "";
	size_t n;
	FILE *p;
	int status;

	harness_write_file(path, body);
	if (!(p = popen(harness_fmt("promtool check metrics < '%s' 2>&1", path), "r")))
		fail_msg("cannot run promtool");
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	status = pclose(p);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		fail_msg("promtool not found: install Debian's prometheus package (scripts/deps.sh)");
	if (status != 0) {
		print_error("%s", body);
		fail_msg("promtool check metrics refuses the scrape (status %d):\n%s", status, out);
	}
}

/* A scrape that must succeed and pass the checker and promtool: the body
 * (free it). */
static char *scrape(struct harness_server *s)
{
	char ctype[200], why[600], *body = NULL;
	int st = get_metrics(s, NULL, &body, ctype, sizeof ctype);

	if (st != 200) {
		harness_server_dump_log(s);
		fail_msg("GET /metrics: status %d: %s", st, body);
	}
	assert_string_equal(ctype, PROM_CONTENT_TYPE);
	if (promcheck(body, why, sizeof why) != 0) {
		print_error("%s", body);
		fail_msg("GET /metrics: the body is not valid: %s", why);
	}
	promtool_check(body);
	return body;
}

/* The value of one series, written as ebb writes it (labels in its
 * order): name{a="x",b="y"}. 1 if found. */
static int value_of(const char *body, const char *series, double *v)
{
	size_t n = strlen(series);

	for (const char *s = body; *s; s = strchr(s, '\n') + 1) {
		if (strncmp(s, series, n) == 0 && s[n] == ' ') {
			*v = strtod(s + n + 1, NULL);
			return 1;
		}
		if (!strchr(s, '\n'))
			break;
	}
	return 0;
}

#define METRIC(body, series) metric((body), (series), __FILE__, __LINE__)
static double metric(const char *body, const char *series, const char *file, int line)
{
	double v;

	if (!value_of(body, series, &v)) {
		print_error("%s", body);
		fail_msg("%s:%d: no sample %s in the scrape", file, line, series);
	}
	return v;
}

/* The sum of every sample of the family name (exactly that name). */
static double family_sum(const char *body, const char *name, int *count)
{
	size_t n = strlen(name);
	double sum = 0;

	*count = 0;
	for (const char *s = body; *s;) {
		const char *nl = strchr(s, '\n');
		if (strncmp(s, name, n) == 0 && (s[n] == '{' || s[n] == ' ')) {
			const char *sp = strchr(s, ' ');
			if (s[n] == '{')
				sp = strstr(s, "} ") + 1;
			sum += strtod(sp + 1, NULL);
			(*count)++;
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	return sum;
}

#define assert_near(got, want, tol)                                                                \
	do {                                                                                       \
		double g_ = (got), w_ = (want);                                                    \
		if (!(fabs(g_ - w_) <= (tol)))                                                     \
			fail_msg("%s:%d: %s is %.9g, expected %.9g (within %g)", __FILE__, __LINE__, \
				 #got, g_, w_, (double)(tol));                                     \
	} while (0)

/* Leases at once as worker w1: the job's id and token. */
static int64_t lease(struct harness_server *s, int64_t *token)
{
	json_t *r = harness_call_ok(s, "POST", "/v1/lease", "{\"worker\": \"w1\", \"wait_s\": 0}", 200);
	int64_t id = JINT(r, "job.id");

	*token = JINT(r, "job.lease.token");
	json_decref(r);
	return id;
}

/* ---- the checker's own tests ---- */

static void checker_accepts_and_rejects(void **state)
{
	static const char *const good[] = {
		"# HELP a_total Help with \\\\ and \\n escapes.\n# TYPE a_total counter\na_total 1\n",
		"# TYPE g gauge\ng{x=\"a\\\\b\\\"c\\nd\",y=\"\"} -1.5e-3\ng{x=\"2\"} +Inf\ng{x=\"3\"} NaN\ng{x=\"4\"} 7 1700000000000\n",
		"# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 3\nh_sum 4.5\nh_count 3\n",
		"# TYPE h histogram\nh_bucket{k=\"a\",le=\"1\"} 1\nh_bucket{k=\"a\",le=\"+Inf\"} 1\nh_sum{k=\"a\"} 1\nh_count{k=\"a\"} 1\n"
		"h_bucket{k=\"b\",le=\"+Inf\"} 0\nh_sum{k=\"b\"} 0\nh_count{k=\"b\"} 0\n",
		"# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 2\n",
		"# TYPE empty gauge\n# HELP empty Declared, no samples.\n# TYPE u untyped\nu 0\n",
	};
	static const struct {
		const char *body, *why;
	} bad[] = {
		{"", "empty body"},
		{"# TYPE g gauge\ng 1", "does not end with a newline"},
		{"# TYPE g gauge\n\ng 1\n", "an empty line"},
		{"# TYPE g gauge\ng 1 \n", "trailing space"},
		{"# TYPE g gauge\ng  1\n", "is not a float"},
		{"# just a comment\n", "not # HELP or # TYPE"},
		{"g 1\n", "no TYPE line"},
		{"# TYPE 1g gauge\n", "bad metric name"},
		{"# TYPE g-h gauge\n", "no space after the name"},
		{"# TYPE g gauge\ng-h 1\n", "expected one space"},
		{"# TYPE g countr\n", "not counter, gauge"},
		{"# TYPE g gauge\n# TYPE g gauge\n", "a second TYPE"},
		{"# HELP g a\n# HELP g b\n", "a second HELP"},
		{"# HELP g a \\t b\n", "HELP text: a backslash"},
		{"# TYPE c counter\nc 1\n", "does not end in _total"},
		{"# TYPE c_total counter\nc_total -1\n", "counters are not negative"},
		{"# TYPE g gauge\ng 1.2.3\n", "is not a float"},
		{"# TYPE g gauge\ng inf\n", "is not a float"},
		{"# TYPE g gauge\ng 0x10\n", "is not a float"},
		{"# TYPE g gauge\ng 1e\n", "is not a float"},
		{"# TYPE g gauge\ng{x=\"a\\tb\"} 1\n", "label value: a backslash"},
		{"# TYPE g gauge\ng{x=\"a\"b\"} 1\n", "bad label set"},
		{"# TYPE g gauge\ng{x=\"a} 1\n", "not closed"},
		{"# TYPE g gauge\ng{x=\"a\",} 1\n", "bad label set"},
		{"# TYPE g gauge\ng{} 1\n", "bad label set"},
		{"# TYPE g gauge\ng{1x=\"a\"} 1\n", "bad label set"},
		{"# TYPE g gauge\ng{__x=\"a\"} 1\n", "reserved"},
		{"# TYPE g gauge\ng{x=\"a\",x=\"b\"} 1\n", "twice"},
		{"# TYPE g gauge\ng{x=\"a\",y=\"b\"} 1\ng{y=\"b\",x=\"a\"} 2\n", "twice"},
		{"# TYPE g gauge\ng 1\n# TYPE f gauge\nf 1\ng 2\n", "appears again"},
		{"# TYPE g gauge\ng 1\n# TYPE f gauge\n# HELP g late\n", "appears again"},
		{"# TYPE g gauge\ng 1 12x\n", "timestamp"},
		{"# TYPE h histogram\nh 1\n", "without _bucket, _sum or _count"},
		{"# TYPE s summary\ns 1\n", "without quantile"},
		{"# TYPE g gauge\ng_count 1\n", "no TYPE line"},
		{"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", "not cumulative"},
		{"# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		 "not in increasing order"},
		{"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", "no le=\"+Inf\""},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", "is not the +Inf bucket"},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\n", "no _count"},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n", "no _sum"},
		{"# TYPE h histogram\nh_bucket 1\n", "without le"},
		{"# TYPE h histogram\nh_bucket{le=\"x\"} 1\n", "is not a float"},
		{"# TYPE h histogram\nh_sum 1\nh_count 0\n", "without buckets"},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\nh_bucket{le=\"2\"} 1\n", "after _sum"},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n# TYPE g gauge\ng 1\n"
		 "h_count 1\n", "appears again"},
		{"# TYPE g gauge\ng 1\r\n", "carriage return"},
	};
	char why[600];

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		if (promcheck(good[i], why, sizeof why) != 0)
			fail_msg("good body %zu refused: %s\n%s", i, why, good[i]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		if (promcheck(bad[i].body, why, sizeof why) == 0)
			fail_msg("bad body %zu accepted:\n%s", i, bad[i].body);
		if (!strstr(why, bad[i].why))
			fail_msg("bad body %zu refused for '%s', expected '%s':\n%s", i, why, bad[i].why, bad[i].body);
	}
}

/* The writer escapes what it must, and its histogram passes the checker. */
static void writer_escapes_and_histogram(void **state)
{
	static const double bounds[] = {0.1, 1, 10};
	struct prom p = {0};
	struct histogram h;
	char why[600], *text;
	double v;

	(void)state;
	histogram_init(&h, bounds, 3);
	histogram_observe(&h, 0.1); /* le is inclusive */
	histogram_observe(&h, 5);
	histogram_observe(&h, 50);
	prom_family(&p, "t_total", "counter", "A \\ and a\nnewline.");
	prom_sample(&p, "", 3, "v", "back\\slash \"quoted\"\nnext", "w", "", NULL);
	prom_sample(&p, "", 0.1, "v", "plain", NULL);
	prom_family(&p, "t_seconds", "histogram", "Times.");
	prom_histogram(&p, &h);
	prom_family(&p, "t_gauge", "gauge", "Odd values.");
	prom_sample(&p, "", INFINITY, "k", "inf", NULL);
	prom_sample(&p, "", NAN, "k", "nan", NULL);
	prom_sample(&p, "", 1e300, "k", "big", NULL);
	text = prom_finish(&p);
	assert_non_null(text);
	if (promcheck(text, why, sizeof why) != 0)
		fail_msg("%s\n%s", why, text);
	assert_contains(text, "# HELP t_total A \\\\ and a\\nnewline.\n");
	assert_contains(text, "t_total{v=\"back\\\\slash \\\"quoted\\\"\\nnext\",w=\"\"} 3\n");
	assert_contains(text, "t_total{v=\"plain\"} 0.1\n");
	assert_contains(text, "t_seconds_bucket{le=\"0.1\"} 1\nt_seconds_bucket{le=\"1\"} 1\n"
			      "t_seconds_bucket{le=\"10\"} 2\nt_seconds_bucket{le=\"+Inf\"} 3\n"
			      "t_seconds_sum 55.1\nt_seconds_count 3\n");
	assert_contains(text, "t_gauge{k=\"inf\"} +Inf\nt_gauge{k=\"nan\"} NaN\nt_gauge{k=\"big\"} 1e+300\n");
	assert_true(value_of(text, "t_seconds_count", &v) && v == 3);
	free(text);
}

/* ---- against serve ---- */

/* Queue gauges by lane, job counts, lease latency on the test clock,
 * replies by status; and the histogram starts again with serve. */
static void queue_and_leases(void **state)
{
	struct harness_server *s = harness_serve(NULL, HARNESS_TEST_CLOCK);
	struct harness_async a;
	json_t *r = NULL;
	int64_t t0 = harness_now_ms(), tok[4], id[4], elapsed_ms;
	char *m;
	int n;

	(void)state;
	/* A parked worker gets a job the moment it is submitted. */
	harness_async_start(&a, s, "POST", "/v1/lease", "{\"worker\": \"w0\", \"wait_s\": 10}");
	harness_wait_waiting(s, 1);
	harness_submit(s, "{\"command\": [\"true\"], \"lane\": \"express\"}");
	assert_int(harness_async_join(&a, &r), 200);
	assert_string_equal(JSTR(r, "job.lane"), "express");
	json_decref(r);

	for (int k = 0; k < 5; k++)
		harness_submit(s, "{\"command\": [\"true\"], \"items\": 10}");
	harness_submit(s, "{\"command\": [\"true\"], \"lane\": \"batch\"}");
	harness_submit(s, "{\"command\": [\"true\"], \"lane\": \"batch\"}");
	harness_submit(s, "{\"command\": [\"true\"], \"delay_s\": 100}");
	harness_advance(s, 2000);
	for (int k = 0; k < 3; k++)
		id[k] = lease(s, &tok[k]);
	for (int k = 0; k < 2; k++)
		json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/jobs/%lld/complete", (long long)id[k]),
				 harness_fmt("{\"lease_token\": %lld, \"items_done\": 10}", (long long)tok[k]), 200));
	harness_advance(s, 500);
	id[3] = lease(s, &tok[3]);
	elapsed_ms = harness_now_ms() - t0;
	json_decref(harness_call_ok(s, "GET", "/v1/jobs/999999", NULL, 404));

	m = scrape(s);
	assert_int(METRIC(m, "ebb_queue_depth{lane=\"express\"}"), 0);
	assert_int(METRIC(m, "ebb_queue_depth{lane=\"standard\"}"), 1);
	assert_int(METRIC(m, "ebb_queue_depth{lane=\"batch\"}"), 2);
	assert_int(METRIC(m, "ebb_queue_delayed{lane=\"standard\"}"), 1);
	assert_int(METRIC(m, "ebb_queue_delayed{lane=\"batch\"}"), 0);
	assert_int(METRIC(m, "ebb_jobs_leased{lane=\"express\"}"), 1);
	assert_int(METRIC(m, "ebb_jobs_leased{lane=\"standard\"}"), 2);
	assert_int(METRIC(m, "ebb_jobs_leased{lane=\"batch\"}"), 0);
	/* Queued since their submit, 2.5 s ago on the test clock. */
	assert_int(METRIC(m, "ebb_queue_oldest_age_seconds{lane=\"express\"}"), 0);
	assert_between(METRIC(m, "ebb_queue_oldest_age_seconds{lane=\"standard\"}") * 1000, 2500, 2500 + elapsed_ms + 1000);
	assert_between(METRIC(m, "ebb_queue_oldest_age_seconds{lane=\"batch\"}") * 1000, 2500, 2500 + elapsed_ms + 1000);
	assert_int(METRIC(m, "ebb_jobs{state=\"queued\"}"), 3);
	assert_int(METRIC(m, "ebb_jobs{state=\"delayed\"}"), 1);
	assert_int(METRIC(m, "ebb_jobs{state=\"leased\"}"), 3);
	assert_int(METRIC(m, "ebb_jobs{state=\"succeeded\"}"), 2);
	assert_int(METRIC(m, "ebb_jobs{state=\"failed\"}"), 0);
	assert_int(METRIC(m, "ebb_jobs{state=\"dead\"}"), 0);
	assert_int(METRIC(m, "ebb_jobs{state=\"cancelled\"}"), 0);
	assert_int(METRIC(m, "ebb_lane_wait_target_seconds{lane=\"standard\"}"), 300);
	assert_int(METRIC(m, "ebb_jobs_dead_lettered_total{lane=\"standard\"}"), 0);
	assert_int(METRIC(m, "ebb_team_jobs{team=\"default\",state=\"queued\"}"), 3);
	assert_int(METRIC(m, "ebb_team_jobs{team=\"default\",state=\"succeeded\"}"), 2);
	assert_int(METRIC(m, "ebb_store_errors_total"), 0);

	/* Five leases: one at once (a parked worker), three after 2 s, one
	 * after 2.5 s, plus the real time the test took. */
	assert_int(METRIC(m, "ebb_lease_latency_seconds_count"), 5);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_bucket{le=\"+Inf\"}"), 5);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_bucket{le=\"1\"}"), 1);
	/* The last one waited 2.5 s and some real milliseconds: over 2.5. */
	if (elapsed_ms < 400)
		assert_int(METRIC(m, "ebb_lease_latency_seconds_bucket{le=\"2.5\"}"), 4);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_bucket{le=\"600\"}"), 5);
	assert_between(METRIC(m, "ebb_lease_latency_seconds_sum") * 1000, 3 * 2000 + 2500,
		       3 * 2000 + 2500 + 5 * elapsed_ms);

	assert_int(METRIC(m, "ebb_http_requests_total{code=\"201\"}"), 9);
	assert_int(METRIC(m, "ebb_http_requests_total{code=\"404\"}"), 1);
	/* No provider: no fleet, no cost. */
	assert_int(family_sum(m, "ebb_instances", &n), 0);
	assert_int(n, 0);
	assert_int(METRIC(m, "ebb_spend_dollars_per_second"), 0);
	assert_int(METRIC(m, "ebb_cost_dollars_total"), 0);
	assert_int(METRIC(m, "ebb_items_done_total"), 0);
	assert_null(strstr(m, "ebb_cost_per_item_dollars"));
	free(m);

	/* The first scrape is a 200 in the second. */
	m = scrape(s);
	assert_true(METRIC(m, "ebb_http_requests_total{code=\"200\"}") >= 1);
	free(m);

	/* The store keeps the jobs; the histogram is serve's memory. */
	assert_int(harness_server_stop(s), 0);
	harness_server_start(s);
	m = scrape(s);
	assert_int(METRIC(m, "ebb_jobs{state=\"succeeded\"}"), 2);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_count"), 0);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_sum"), 0);
	free(m);
}

/* No token needed without tokens (above); with tokens, any valid one. */
static void who_may_scrape(void **state)
{
	struct harness_server *s = harness_serve("[token.gpu]\nsecret = worker-secret-0123456789\nrole = worker\n"
						 "[token.ml]\nsecret = submit-secret-0123456789\nrole = submit\nteam = ml\n",
						 HARNESS_TOKENS);
	char ctype[200], *body;
	json_t *r = NULL;
	int st;

	(void)state;
	assert_int(get_metrics(s, "", &body, ctype, sizeof ctype), 401);
	assert_string_equal(ctype, "application/json");
	assert_contains(body, "\"unauthorized\"");
	free(body);
	assert_int(get_metrics(s, "not-a-token-at-all-000", &body, ctype, sizeof ctype), 401);
	free(body);
	free(scrape(s)); /* admin */
	assert_int(get_metrics(s, "worker-secret-0123456789", &body, ctype, sizeof ctype), 200);
	assert_string_equal(ctype, PROM_CONTENT_TYPE);
	free(body);
	assert_int(get_metrics(s, "submit-secret-0123456789", &body, ctype, sizeof ctype), 200);
	free(body);
	/* Only GET. */
	st = harness_call(s, "POST", "/metrics", NULL, &r);
	assert_error(st, r, 405, "method_not_allowed", NULL);
	json_decref(r);
}

/* ---- with the local provider ---- */

#define PRICE 3.6 /* USD per hour: a tenth of a cent a second */

/* The ledger's view: one instance of a priced offer runs two jobs; the
 * instances, spend, items, cost and GPU hours agree with each other and
 * with what ran; a drained and terminated instance leaves its series at
 * 0 and its cost in the total. */
static void fleet_and_cost(void **state)
{
	struct harness_server *s = harness_serve(
		"[provider]\nkind = local\norphan_timeout = 10s\n"
		"[local]\ngpus = 0,1\n"
		"[offer.a10]\ngpus = 1\nprice_ondemand = 3.6\nbilling = per-second\nbilling_minimum = 0s\n"
		"[lane.standard]\nwait_target = 1s\n"
		"[scaler]\ninterval = 200ms\nmax_instances = 1\nidle_timeout = 60s\n",
		0);
	int64_t until, inst = 0;
	double cost, busy, idle, spend, inst_sum;
	json_t *r;
	char *m;
	int n;

	(void)state;
	harness_own_workers(s);
	m = scrape(s);
	/* Every live state of the offer, at 0, before anything launched. */
	assert_int(METRIC(m, "ebb_instances{state=\"idle\",offer=\"a10\",market=\"on-demand\"}"), 0);
	assert_int(METRIC(m, "ebb_launch_failures_total{offer=\"a10\",market=\"on-demand\"}"), 0);
	assert_int(METRIC(m, "ebb_reclaims_total{offer=\"a10\"}"), 0);
	assert_false(value_of(m, "ebb_instances{state=\"idle\",offer=\"a10\",market=\"spot\"}", &cost));
	free(m);

	harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.3\"], \"items\": 10, \"est_s\": 1}");
	harness_submit(s, "{\"command\": [\"sh\", \"-c\", \"sleep 0.3\"], \"items\": 10, \"est_s\": 1}");
	until = harness_now_ms() + 30000;
	while (harness_stat(s, "states.succeeded") < 2) {
		if (harness_now_ms() > until) {
			harness_server_dump_log(s);
			fail_msg("2 jobs not done after 30 s");
		}
		harness_sleep_ms(50);
	}
	assert_int(harness_live_instances(s, &inst), 1);

	m = scrape(s);
	inst_sum = family_sum(m, "ebb_instances", &n);
	assert_int(n, 5); /* requested .. draining, on demand: a10 sells no spot */
	assert_int(inst_sum, 1);
	spend = METRIC(m, "ebb_spend_dollars_per_second") * 3600;
	assert_near(spend, PRICE, 1e-9);
	assert_int(METRIC(m, "ebb_items_done_total"), 20);
	cost = METRIC(m, "ebb_cost_dollars_total");
	busy = METRIC(m, "ebb_busy_gpu_seconds_total");
	idle = METRIC(m, "ebb_idle_gpu_seconds_total");
	/* Two runs of 0.3 s at least; booting took some too. */
	assert_true(busy >= 0.6);
	assert_true(idle > 0);
	/* One 1-GPU offer: every GPU hour costs its price. */
	assert_near(cost, (busy + idle) * PRICE / 3600, 1e-9 + cost * 1e-6);
	assert_near(METRIC(m, "ebb_cost_per_item_dollars"), cost / 20, 1e-12 + cost * 1e-6);
	assert_int(METRIC(m, "ebb_lease_latency_seconds_count"), 2);
	assert_int(METRIC(m, "ebb_launch_failures_total{offer=\"a10\",market=\"on-demand\"}"), 0);
	assert_int(METRIC(m, "ebb_launches_total{offer=\"a10\",market=\"on-demand\"}"), 1);
	assert_int(METRIC(m, "ebb_launch_failing_seconds{offer=\"a10\",market=\"on-demand\"}"), 0);
	assert_int(METRIC(m, "ebb_workers_lost_total{offer=\"a10\",market=\"on-demand\"}"), 0);
	/* Idle since its second job ended; the team's jobs cost part of all. */
	assert_true(METRIC(m, "ebb_instance_idle_longest_seconds{offer=\"a10\",market=\"on-demand\"}") >= 0);
	assert_near(METRIC(m, "ebb_team_cost_dollars_total{team=\"default\"}"), busy * PRICE / 3600, 1e-9 + cost * 1e-6);
	assert_int(METRIC(m, "ebb_team_items_done_total{team=\"default\"}"), 20);
	free(m);

	/* Drained, it goes; its series stay, at 0, and the cost only grows. */
	json_decref(harness_call_ok(s, "POST", harness_fmt("/v1/fleet/%lld/drain", (long long)inst), NULL, 200));
	until = harness_now_ms() + 20000;
	while (harness_live_instances(s, NULL) > 0) {
		if (harness_now_ms() > until) {
			harness_server_dump_log(s);
			fail_msg("the drained instance still lives after 20 s");
		}
		harness_sleep_ms(50);
	}
	m = scrape(s);
	inst_sum = family_sum(m, "ebb_instances", &n);
	assert_int(n, 5);
	assert_int(inst_sum, 0);
	assert_int(METRIC(m, "ebb_spend_dollars_per_second"), 0);
	assert_true(METRIC(m, "ebb_cost_dollars_total") >= cost);
	assert_near(METRIC(m, "ebb_cost_dollars_total"),
		    (METRIC(m, "ebb_busy_gpu_seconds_total") + METRIC(m, "ebb_idle_gpu_seconds_total")) * PRICE / 3600,
		    1e-9 + cost * 1e-6);
	assert_int(METRIC(m, "ebb_reclaims_total{offer=\"a10\"}"), 0);
	/* Every segment is closed now: the running sums the scrape reads say
	 * what the report's walk of every segment says. */
	r = harness_get(s, "/v1/report");
	assert_near(METRIC(m, "ebb_cost_dollars_total"), json_real_value(harness_jget(r, "total.cost_usd")), 1e-12);
	assert_near(METRIC(m, "ebb_busy_gpu_seconds_total"),
		    json_real_value(harness_jget(r, "total.gpu_hours.busy")) * 3600, 1e-9);
	assert_near(METRIC(m, "ebb_idle_gpu_seconds_total"),
		    json_real_value(harness_jget(r, "total.gpu_hours.not_busy")) * 3600, 1e-9);
	assert_int(METRIC(m, "ebb_items_done_total"), JINT(r, "total.items"));
	json_decref(r);
	free(m);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(checker_accepts_and_rejects),
		T(writer_escapes_and_histogram),
		T(queue_and_leases),
		T(who_may_scrape),
		cmocka_unit_test_teardown(fleet_and_cost, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
