/* `ebb config -c FILE` makes the checks `ebb serve` makes at start
 * (serve/preflight.c): each file a real serve refuses, before it takes its
 * data directory, ebb config refuses for the same reason, and what serve
 * starts with only a warning it passes. The TLS files' checks are
 * test_tls.c's, where the certificates are made. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#define TOKEN "[token.admin]\nsecret = admin-secret-0123456789\nrole = admin\n"

/* tests/exec/provider: a program the exec provider can run. */
static const char *program(void)
{
	const char *src = getenv("EBB_SRC");
	return harness_fmt("%s/tests/exec/provider", src && *src ? src : ".");
}

static void the_listen_address(void **state)
{
	(void)state;
	/* A port past 65535 is refused, not cut to 16 bits. */
	harness_assert_refused("listen = 127.0.0.1:99999\n",
			       "listen '127.0.0.1:99999': expected host:port, a port from 0 to 65535");
	harness_assert_refused("listen = 127.0.0.1\n", "listen '127.0.0.1': expected host:port");
	/* An open API off loopback. */
	harness_assert_refused("listen = 0.0.0.0:0\n",
			       "no [token.*] configured: the API would be open on 0.0.0.0:0; listen on a loopback"
			       " address or configure tokens");
	/* Plain HTTP off loopback, on a network not said to be private. */
	harness_assert_refused("listen = 0.0.0.0:0\n" TOKEN,
			       "listen 0.0.0.0:0 is not a loopback address and there is no TLS: set [server]"
			       " tls_cert and tls_key, or private_network = on if no one else can reach the network");
}

static void the_exec_programs(void **state)
{
	char plain[4200];

	(void)state;
	snprintf(plain, sizeof plain, "%s/not-executable", harness_tmpdir());
	harness_write_file(plain, "#!/bin/sh\n");
	harness_assert_refused("[provider]\nkind = exec\n", "[exec] command: required with [provider] kind = exec");
	harness_assert_refused("[provider]\nkind = exec\n[exec]\ncommand = provider\n",
			       "[exec] command: 'provider' is not an executable file given by its absolute path");
	harness_assert_refused(harness_fmt("[provider]\nkind = exec\n[exec]\ncommand = %s\n", plain),
			       harness_fmt("[exec] command: '%s' is not an executable file given by its absolute path",
					   plain));
	harness_assert_refused(harness_fmt("[provider]\nkind = exec\n[exec]\ncommand = %s\n"
					   "[offer.a]\nprice_ondemand = 1\n[offer.b]\nprice_ondemand = 2\ncommand = %s\n",
					   program(), plain),
			       harness_fmt("[offer.b] command: '%s' is not an executable file given by its absolute path",
					   plain));
}

/* Plain HTTP off loopback on a private network: serve starts with a
 * warning, and ebb config passes the file. */
static void warnings_pass(void **state)
{
	struct harness_server *s = harness_serve("[server]\nlisten = 0.0.0.0:0\nprivate_network = on\n", HARNESS_TOKENS);
	struct harness_run r;

	(void)state;
	assert_int(harness_file_lines(s->log, "level=warn msg=\"plain HTTP off loopback"), 1);
	harness_ebb(&r, NULL, "config", "-c", s->conf, NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "private_network = on\n");
	harness_run_free(&r);
	assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
	assert_int(harness_server_stop(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(the_listen_address, harness_cleanup),
		cmocka_unit_test_teardown(the_exec_programs, harness_cleanup),
		cmocka_unit_test_teardown(warnings_pass, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
