/* serve's certificate generations (see tls.h). */
#include "serve/tls.h"

#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/textfile.h"

#define MAX_CHAIN 16          /* certificates in tls_cert: serve's and its intermediates */
#define MAX_PEM (1 << 20)     /* far above any real chain or key */

/* One read of the two files. */
struct tls_gen {
	gnutls_pcert_st chain[MAX_CHAIN];
	unsigned nchain;
	gnutls_privkey_t key;
	int conns;              /* open connections that started while it was the newest */
	struct tls_gen *newer;  /* NULL for the newest */
	char describe[512];
};

struct tls {
	char *cert_path, *key_path;
	struct tls_gen *oldest, *newest;
};

/* GnuTLS's callback takes no argument of ours: the one TLS state of the
 * process, set by tls_open. */
static struct tls *active;

static void gen_free(struct tls_gen *g)
{
	for (unsigned i = 0; i < g->nchain; i++)
		gnutls_pcert_deinit(&g->chain[i]);
	if (g->key)
		gnutls_privkey_deinit(g->key);
	free(g);
}

/* subject="..." serial=HEX expires=DATE, of the chain's first certificate. */
static void describe(struct tls_gen *g)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t dn = {0};
	unsigned char serial[64];
	char hex[2 * sizeof serial + 1] = "", when[32] = "?", subject[400];
	size_t n = sizeof serial;
	time_t expires;
	struct tm tm;

	if (gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, &g->chain[0].cert, GNUTLS_X509_FMT_DER) == 0) {
		gnutls_x509_crt_get_dn3(crt, &dn, 0);
		if (gnutls_x509_crt_get_serial(crt, serial, &n) == 0) {
			/* As openssl prints it: without the zero byte DER puts
			 * before a serial whose first bit is set. */
			size_t skip = n > 1 && serial[0] == 0;
			for (size_t i = skip; i < n; i++)
				snprintf(hex + 2 * (i - skip), 3, "%02x", serial[i]);
		}
		expires = gnutls_x509_crt_get_expiration_time(crt);
		if (expires != (time_t)-1 && gmtime_r(&expires, &tm))
			strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	snprintf(g->describe, sizeof g->describe, "subject=%s serial=%s expires=%s",
		 log_quote(subject, sizeof subject, dn.data ? (const char *)dn.data : "?"), hex, when);
	gnutls_free(dn.data);
	gnutls_x509_crt_deinit(crt);
}

/* The public key as DER, to compare (free data with gnutls_free). */
static int pubkey_der(gnutls_pubkey_t pub, gnutls_datum_t *out)
{
	return gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, out);
}

/* Does the key belong to the chain's first certificate? 0, or a GnuTLS error. */
static int key_matches(struct tls_gen *g)
{
	gnutls_pubkey_t pub;
	gnutls_datum_t a = {0}, b = {0};
	int rc;

	if ((rc = gnutls_pubkey_init(&pub)) < 0)
		return rc;
	if ((rc = gnutls_pubkey_import_privkey(pub, g->key, 0, 0)) == 0 && (rc = pubkey_der(pub, &a)) == 0 &&
	    (rc = pubkey_der(g->chain[0].pubkey, &b)) == 0)
		rc = a.size == b.size && memcmp(a.data, b.data, a.size) == 0 ? 0 : GNUTLS_E_CERTIFICATE_KEY_MISMATCH;
	gnutls_free(a.data);
	gnutls_free(b.data);
	gnutls_pubkey_deinit(pub);
	return rc;
}

/* Reads the certificate chain and the key: a new generation, or NULL
 * with "tls_cert FILE: reason" in err. */
static struct tls_gen *gen_read(const char *cert_path, const char *key_path, char *err, size_t errsize)
{
	struct tls_gen *g = mem_calloc(1, sizeof *g);
	char why[300];
	gnutls_datum_t pem = {0};
	size_t len = 0;
	int rc;

	if (!g) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	if (!(pem.data = (unsigned char *)textfile_read(cert_path, MAX_PEM, &len, why, sizeof why))) {
		snprintf(err, errsize, "tls_cert %s: %s", cert_path, why);
		goto fail;
	}
	pem.size = (unsigned)len;
	g->nchain = MAX_CHAIN;
	rc = gnutls_pcert_list_import_x509_raw(g->chain, &g->nchain, &pem, GNUTLS_X509_FMT_PEM, 0);
	free(pem.data);
	if (rc < 0) {
		g->nchain = 0;
		snprintf(err, errsize, "tls_cert %s: %s", cert_path, gnutls_strerror(rc));
		goto fail;
	}
	if (!(pem.data = (unsigned char *)textfile_read(key_path, MAX_PEM, &len, why, sizeof why))) {
		snprintf(err, errsize, "tls_key %s: %s", key_path, why);
		goto fail;
	}
	pem.size = (unsigned)len;
	if ((rc = gnutls_privkey_init(&g->key)) == 0)
		rc = gnutls_privkey_import_x509_raw(g->key, &pem, GNUTLS_X509_FMT_PEM, NULL, 0);
	/* GnuTLS's reasons for these two would not say what is wrong. */
	if (rc < 0 && !strstr((char *)pem.data, "PRIVATE KEY-----"))
		snprintf(err, errsize, "tls_key %s: no PEM private key in it", key_path);
	else if (rc < 0 && strstr((char *)pem.data, "ENCRYPTED"))
		snprintf(err, errsize, "tls_key %s: the key is encrypted; serve needs it unencrypted (%s)",
			 key_path, gnutls_strerror(rc));
	else if (rc < 0)
		snprintf(err, errsize, "tls_key %s: %s", key_path, gnutls_strerror(rc));
	/* The key's bytes go before the memory is given back. */
	memset(pem.data, 0, len);
	free(pem.data);
	if (rc < 0)
		goto fail;
	if ((rc = key_matches(g)) != 0) {
		snprintf(err, errsize, "tls_key %s: not the key of tls_cert %s: %s", key_path, cert_path,
			 gnutls_strerror(rc));
		goto fail;
	}
	describe(g);
	return g;
fail:
	gen_free(g);
	return NULL;
}

/* A handshake takes the newest generation, which may be newer than the
 * one its connection started under, but never older. So generation N
 * can still be in use while a connection that started under N or an
 * older one is open: the private key is used again in a later round trip
 * of a TLS 1.2 handshake (an RSA key exchange), and GnuTLS keeps pointers
 * to the certificate for the life of the session. Generations are
 * therefore freed oldest first, each once it is not the newest and no
 * connection that started under it is left. */
static void collect(struct tls *t)
{
	while (t->oldest != t->newest && t->oldest->conns == 0) {
		struct tls_gen *g = t->oldest;
		t->oldest = g->newer;
		gen_free(g);
	}
}

struct tls *tls_open(const char *cert_path, const char *key_path, char *err, size_t errsize)
{
	struct tls *t = mem_calloc(1, sizeof *t);

	if (!t || !(t->cert_path = mem_strdup(cert_path)) || !(t->key_path = mem_strdup(key_path))) {
		snprintf(err, errsize, "out of memory");
		tls_free(t);
		return NULL;
	}
	if (!(t->oldest = t->newest = gen_read(t->cert_path, t->key_path, err, errsize))) {
		tls_free(t);
		return NULL;
	}
	active = t;
	return t;
}

int tls_check(const char *cert_path, const char *key_path, char *err, size_t errsize)
{
	struct tls_gen *g = gen_read(cert_path, key_path, err, errsize);

	if (!g)
		return -1;
	gen_free(g);
	return 0;
}

int tls_reload(struct tls *t, char *err, size_t errsize)
{
	struct tls_gen *g = gen_read(t->cert_path, t->key_path, err, errsize);

	if (!g)
		return -1;
	t->newest->newer = g;
	t->newest = g;
	collect(t);
	return 0;
}

void tls_free(struct tls *t)
{
	if (!t)
		return;
	while (t->oldest) {
		struct tls_gen *g = t->oldest;
		t->oldest = g->newer;
		gen_free(g);
	}
	if (active == t)
		active = NULL;
	free(t->cert_path);
	free(t->key_path);
	free(t);
}

const char *tls_describe(const struct tls *t) { return t->newest->describe; }

struct tls_gen *tls_hold(struct tls *t)
{
	t->newest->conns++;
	return t->newest;
}

void tls_release(struct tls *t, struct tls_gen *g)
{
	g->conns--;
	collect(t);
}

int tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
		 const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		 unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
	(void)session;
	(void)req_ca_dn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	if (!active)
		return -1;
	*pcert = active->newest->chain;
	*pcert_length = active->newest->nchain;
	*pkey = active->newest->key;
	return 0;
}
