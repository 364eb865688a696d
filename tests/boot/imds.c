/* A stand-in for the clouds' metadata services at 169.254.169.254, for
 * the boot test (tests/boot/run.sh): each machine's reclaim notice, as
 * EC2's (IMDSv2) and Compute Engine's documentation give them, and
 * nothing else.
 *
 *   imds ADDR PORT DIR
 *
 * Listens on ADDR:PORT (169.254.169.254:80 on the host, which each booted
 * machine reaches through its own network namespace). A session token
 * comes from PUT /latest/api/token with the header
 * X-aws-ec2-metadata-token-ttl-seconds (1 to 21600); GET
 * /latest/meta-data/spot/instance-action needs one (the instances are
 * launched with HttpTokens=required: 401 without) and answers 404 until a
 * reclaim is scheduled for the asking machine, then 200 with the notice.
 * GET /computeMetadata/v1/instance/preempted needs the header
 * Metadata-Flavor: Google (403 without) and answers FALSE, then TRUE.
 * The test schedules a notice by writing DIR/notice-IP, IP being the
 * machine's address, and withdraws it by removing the file once the
 * machine is gone.
 * Each request is logged to DIR/requests: "IP METHOD PATH STATUS". */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKENS 256
#define NOTICE_MAX 4096

static const char *dir;
static char tokens[MAX_TOKENS][65];
static int ntokens;
static volatile sig_atomic_t stop;

static void on_stop(int sig) { (void)sig; stop = 1; }

static int answer(struct MHD_Connection *c, unsigned status, const char *body, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	int rc;

	MHD_add_response_header(r, "Content-Type", type);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static void log_request(const char *ip, const char *method, const char *url, unsigned status)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/requests", dir);
	if ((f = fopen(path, "a"))) {
		fprintf(f, "%s %s %s %u\n", ip, method, url, status);
		fclose(f);
	}
}

static const char *new_token(void)
{
	static const char hex[] = "0123456789abcdef";
	char *t = tokens[ntokens % MAX_TOKENS];

	for (int k = 0; k < 64; k++)
		t[k] = hex[(unsigned)rand() % 16];
	t[64] = '\0';
	ntokens++;
	return t;
}

static int known_token(const char *t)
{
	for (int k = 0; t && k < (ntokens < MAX_TOKENS ? ntokens : MAX_TOKENS); k++) {
		if (strcmp(t, tokens[k]) == 0)
			return 1;
	}
	return 0;
}

/* The notice scheduled for the machine at ip, or NULL. */
static char *notice_of(const char *ip, char *buf, size_t size)
{
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "%s/notice-%s", dir, ip);
	if (!(f = fopen(path, "r")))
		return NULL;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *peer = (const void *)info->client_addr;
	char ip[INET_ADDRSTRLEN] = "?", notice[NOTICE_MAX];
	unsigned status;
	int rc;

	(void)cls;
	(void)version;
	(void)upload;
	if (!*state) { /* the headers: answer once the (empty) body is read */
		*state = (void *)1;
		return MHD_YES;
	}
	*upload_size = 0;
	if (peer->sin_family == AF_INET)
		inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof ip);
	if (strcmp(method, "PUT") == 0 && strcmp(url, "/latest/api/token") == 0) {
		const char *ttl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-aws-ec2-metadata-token-ttl-seconds");
		int s = ttl ? atoi(ttl) : 0;

		status = s >= 1 && s <= 21600 ? 200 : 400;
		rc = answer(c, status, status == 200 ? new_token() : "", "text/plain");
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/latest/meta-data/spot/instance-action") == 0) {
		if (!known_token(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-aws-ec2-metadata-token")))
			status = 401;
		else
			status = notice_of(ip, notice, sizeof notice) ? 200 : 404;
		rc = answer(c, status, status == 200 ? notice : "", status == 200 ? "application/json" : "text/html");
	} else if (strcmp(method, "GET") == 0 && strcmp(url, "/computeMetadata/v1/instance/preempted") == 0) {
		const char *flavor = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Metadata-Flavor");

		status = flavor && strcmp(flavor, "Google") == 0 ? 200 : 403;
		rc = answer(c, status, status != 200 ? "" : notice_of(ip, notice, sizeof notice) ? "TRUE" : "FALSE",
			    "application/text");
	} else {
		status = 404;
		rc = answer(c, status, "", "text/html");
	}
	log_request(ip, method, url, status);
	return rc == MHD_YES ? MHD_YES : MHD_NO;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct MHD_Daemon *d;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: imds ADDR PORT DIR\n");
		return 2;
	}
	addr.sin_port = htons((unsigned short)atoi(argv[2]));
	dir = argv[3];
	srand((unsigned)getpid());
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
			     &addr, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "imds: cannot listen on %s:%s\n", argv[1], argv[2]);
		return 1;
	}
	while (!stop)
		pause();
	MHD_stop_daemon(d);
	return 0;
}
