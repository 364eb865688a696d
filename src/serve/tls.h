/* serve's certificate and key for HTTPS: read from the PEM files of
 * [server] tls_cert and tls_key, and read again on demand (SIGHUP), so
 * that a renewed certificate needs no restart.
 *
 * Each read makes a generation. GnuTLS asks for the certificate in each
 * handshake (tls_retrieve, given to libmicrohttpd) and gets the newest;
 * connections already open go on with what they were given. A generation
 * is freed only once no connection can still use it (see tls.c). */
#ifndef EBB_TLS_H
#define EBB_TLS_H

#include <gnutls/abstract.h>
#include <stddef.h>

struct tls;
struct tls_gen;

/* Reads both files: the TLS state, or NULL with the reason in err, which
 * names the file and gives GnuTLS's reason. One per process: GnuTLS's
 * callback takes no argument, so tls_retrieve finds it by itself. */
struct tls *tls_open(const char *cert_path, const char *key_path, char *err, size_t errsize);
/* Reads both files as tls_open would, and keeps nothing: 0, or -1 with
 * the same reason. */
int tls_check(const char *cert_path, const char *key_path, char *err, size_t errsize);
/* Reads the files again. 0: new handshakes get the new certificate; -1
 * with the reason in err: nothing changed, the old one stays in use. */
int tls_reload(struct tls *t, char *err, size_t errsize);
/* After the HTTP server has stopped: no connection is left. */
void tls_free(struct tls *t);

/* The certificate in use, for the log: subject="..." serial=... expires=... */
const char *tls_describe(const struct tls *t);

/* What a connection holds from its start to its close: the newest
 * generation when it starts. */
struct tls_gen *tls_hold(struct tls *t);
void tls_release(struct tls *t, struct tls_gen *g);

/* GnuTLS's certificate callback (a gnutls_certificate_retrieve_function2),
 * for MHD_OPTION_HTTPS_CERT_CALLBACK. */
int tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
		 const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		 unsigned int *pcert_length, gnutls_privkey_t *pkey);

#endif
