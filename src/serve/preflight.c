/* serve's start-up checks of a configuration (see preflight.h). */
#include "serve/preflight.h"

#include <stdio.h>

#include "provider/provider.h"
#include "serve/httpd.h"
#include "serve/tls.h"

int preflight_check(const struct config *cfg, char *err, size_t errsize)
{
	int loopback = httpd_is_loopback(cfg->listen);

	if (loopback < 0) {
		snprintf(err, errsize, "listen '%s': expected host:port, a port from 0 to 65535", cfg->listen);
		return -1;
	}
	if (cfg->ntokens == 0 && !loopback) {
		snprintf(err, errsize, "no [token.*] configured: the API would be open on %s; listen on a loopback"
			 " address or configure tokens", cfg->listen);
		return -1;
	}
	/* Tokens and jobs must not cross a network in the clear, unless the
	 * configuration says that network is private. */
	if (!loopback && !cfg->tls_cert[0] && !cfg->private_network) {
		snprintf(err, errsize, "listen %s is not a loopback address and there is no TLS: set [server] tls_cert"
			 " and tls_key, or private_network = on if no one else can reach the network", cfg->listen);
		return -1;
	}
	if (cfg->tls_cert[0] && !httpd_tls_supported()) {
		snprintf(err, errsize, "tls_cert: this libmicrohttpd was built without TLS or its certificate callback");
		return -1;
	}
	if (cfg->tls_cert[0] && tls_check(cfg->tls_cert, cfg->tls_key, err, errsize) != 0)
		return -1;
	return provider_check(cfg, err, errsize);
}
