/* The reclaim notice watch (see notice.h). */
#include "worker/notice.h"

#include "common/curl_lazy.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"

#define AWS_URL "http://169.254.169.254/latest/meta-data/spot/instance-action"
#define AWS_TOKEN_URL "http://169.254.169.254/latest/api/token"
/* By address, as Google's own client libraries ask first: the name
 * metadata.google.internal needs a resolver, which may stall the poll
 * (and the worker with it) where DNS does not answer. */
#define GCP_URL "http://169.254.169.254/computeMetadata/v1/instance/preempted"
#define BODY_MAX 4096
#define AWS_TOKEN_TTL_S 21600

enum kind { KIND_URL, KIND_AWS, KIND_GCP };

struct notice {
	enum kind kind;
	char url[1024];
	char auth[600];        /* "Authorization: Bearer ...", or "" */
	char cacert[4096];     /* the CA file to trust, or "": the system's */
	char aws_token[256];   /* IMDSv2 session token, or "" */
	int64_t aws_token_until_ms;
	CURL *curl;
	int64_t interval_ms, next_ms;
	int seen;
	int64_t terminate_ms;
	int last_status; /* of the previous poll, to log a change once */
};

struct body {
	char data[BODY_MAX + 1];
	size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t add = size * n, room = BODY_MAX - b->len;

	memcpy(b->data + b->len, ptr, add < room ? add : room);
	b->len += add < room ? add : room;
	b->data[b->len] = '\0';
	return add;
}

struct notice *notice_new(const char *spec, const char *token, const char *cacert, int64_t interval_ms,
			  char *err, size_t errsize)
{
	struct notice *n;
	const char *url = spec;
	enum kind kind = KIND_URL;

	if (strcmp(spec, "aws") == 0) {
		kind = KIND_AWS;
		url = AWS_URL;
	} else if (strcmp(spec, "gcp") == 0) {
		kind = KIND_GCP;
		url = GCP_URL;
	} else if (strncmp(spec, "http://", 7) != 0 && strncmp(spec, "https://", 8) != 0) {
		snprintf(err, errsize, "notice URL '%.200s': expected aws, gcp or an http:// or https:// URL", spec);
		return NULL;
	}
	if (strlen(url) >= sizeof n->url || (token && strlen(token) > 500) ||
	    (cacert && strlen(cacert) >= sizeof n->cacert)) {
		snprintf(err, errsize, "notice URL, token or CA file name too long");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errsize, "%s", curl_lib_error()[0] ? curl_lib_error() : "libcurl: global initialisation failed");
		return NULL;
	}
	n = xcalloc(1, sizeof *n);
	if (!(n->curl = curl_easy_init())) {
		free(n);
		curl_global_cleanup();
		snprintf(err, errsize, "libcurl: cannot create a handle");
		return NULL;
	}
	n->kind = kind;
	snprintf(n->url, sizeof n->url, "%s", url);
	if (token && token[0])
		snprintf(n->auth, sizeof n->auth, "Authorization: Bearer %s", token);
	if (cacert)
		snprintf(n->cacert, sizeof n->cacert, "%s", cacert);
	n->interval_ms = interval_ms > 100 ? interval_ms : 100;
	return n;
}

void notice_free(struct notice *n)
{
	if (!n)
		return;
	curl_easy_cleanup(n->curl);
	curl_global_cleanup();
	free(n);
}

const char *notice_url(const struct notice *n) { return n->url; }

int64_t notice_wait_ms(const struct notice *n, int64_t now_ms)
{
	return n->seen || n->next_ms <= now_ms ? 0 : n->next_ms - now_ms;
}

/* One request with short timeouts: a metadata service answers at once, and
 * the worker has a job to watch meanwhile. The status, or -1. */
static long request(struct notice *n, const char *method, const char *url, struct curl_slist *headers,
		    struct body *b)
{
	long status = 0;

	b->len = 0;
	b->data[0] = '\0';
	curl_easy_reset(n->curl);
	curl_easy_setopt(n->curl, CURLOPT_URL, url);
	curl_easy_setopt(n->curl, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "PUT") == 0) {
		curl_easy_setopt(n->curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(n->curl, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(n->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(n->curl, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(n->curl, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(n->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(n->curl, CURLOPT_NOPROXY, "*"); /* metadata is never behind a proxy */
	curl_easy_setopt(n->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(n->curl, CURLOPT_WRITEDATA, b);
	if (n->cacert[0])
		curl_easy_setopt(n->curl, CURLOPT_CAINFO, n->cacert);
	if (curl_easy_perform(n->curl) != CURLE_OK)
		return -1;
	curl_easy_getinfo(n->curl, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* IMDSv2: a session token from a PUT, kept for most of its life. Without
 * one (an IMDSv1-only service) the GET goes without. */
static void aws_token(struct notice *n, int64_t now_ms)
{
	struct curl_slist *h = curl_slist_append(NULL, "X-aws-ec2-metadata-token-ttl-seconds: 21600");
	struct body b;
	size_t len;

	if (n->aws_token[0] && now_ms < n->aws_token_until_ms)
		return;
	n->aws_token[0] = '\0';
	if (request(n, "PUT", AWS_TOKEN_URL, h, &b) == 200) {
		len = strcspn(b.data, "\r\n");
		if (len > 0 && len < sizeof n->aws_token) {
			memcpy(n->aws_token, b.data, len);
			n->aws_token[len] = '\0';
			n->aws_token_until_ms = now_ms + (AWS_TOKEN_TTL_S - 600) * 1000LL;
		}
	}
	curl_slist_free_all(h);
}

int64_t notice_time(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);
	const char *s = json_string_value(json_object_get(v, "time"));
	struct tm tm = {0};
	int64_t ms = 0;
	int frac = 0, used = 0;

	if (s && sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			&tm.tm_min, &tm.tm_sec, &used) == 6) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		if (s[used] == '.') {
			const char *d = s + used + 1;
			for (int k = 0; k < 3; k++)
				frac = frac * 10 + (*d >= '0' && *d <= '9' ? *d++ - '0' : 0);
		}
		ms = (int64_t)timegm(&tm) * 1000 + frac;
	}
	json_decref(v);
	return ms > 0 ? ms : 0;
}

int notice_poll(struct notice *n, int64_t now_ms, int64_t *terminate_ms)
{
	struct curl_slist *h = NULL;
	struct body b;
	char header[400];
	long status;

	*terminate_ms = n->terminate_ms;
	if (n->seen)
		return 1;
	if (now_ms < n->next_ms)
		return 0;
	n->next_ms = now_ms + n->interval_ms;
	if (n->kind == KIND_AWS) {
		aws_token(n, now_ms);
		if (n->aws_token[0]) {
			snprintf(header, sizeof header, "X-aws-ec2-metadata-token: %s", n->aws_token);
			h = curl_slist_append(h, header);
		}
	} else if (n->kind == KIND_GCP) {
		h = curl_slist_append(h, "Metadata-Flavor: Google");
	}
	if (n->auth[0])
		h = curl_slist_append(h, n->auth);
	status = request(n, "GET", n->url, h, &b);
	curl_slist_free_all(h);
	if (status == 401 && n->kind == KIND_AWS)
		n->aws_token[0] = '\0'; /* expired early: a new one next time */
	if (status != 200 && status != 404 && status != n->last_status)
		log_warn("reclaim notice: no answer", "url=%s status=%ld", n->url, status);
	n->last_status = (int)status;
	if (status != 200)
		return 0;
	if (n->kind == KIND_GCP && strncmp(b.data + strspn(b.data, " \r\n\t"), "TRUE", 4) != 0)
		return 0;
	n->seen = 1;
	n->terminate_ms = n->kind == KIND_GCP ? 0 : notice_time(b.data);
	*terminate_ms = n->terminate_ms;
	return 1;
}
