/* libcurl, loaded the first time a client needs it. `ebb serve` never
 * makes an HTTP call, and not mapping libcurl with its thirty-odd
 * dependencies (TLS, Kerberos, LDAP, ...) keeps the idle control plane
 * under its memory goal (docs/BENCHMARKS.md). Include this instead of
 * <curl/curl.h>: the curl_* calls below then go through the loaded table,
 * and the call sites read as plain libcurl. */
#ifndef EBB_CURL_LAZY_H
#define EBB_CURL_LAZY_H

#include <curl/curl.h>

struct curl_lib {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	const char *(*easy_strerror)(CURLcode code);
};

/* The table; when libcurl cannot be loaded, one whose global_init fails
 * and whose easy_init gives NULL, with the reason in curl_lib_error(). */
const struct curl_lib *curl_lib(void);
const char *curl_lib_error(void);

#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (curl_lib()->global_init)
#define curl_global_cleanup (curl_lib()->global_cleanup)
#define curl_easy_init (curl_lib()->easy_init)
#define curl_easy_cleanup (curl_lib()->easy_cleanup)
#define curl_easy_reset (curl_lib()->easy_reset)
#define curl_easy_setopt (curl_lib()->easy_setopt)
#define curl_easy_perform (curl_lib()->easy_perform)
#define curl_easy_getinfo (curl_lib()->easy_getinfo)
#define curl_slist_append (curl_lib()->slist_append)
#define curl_slist_free_all (curl_lib()->slist_free_all)
#define curl_easy_strerror (curl_lib()->easy_strerror)

#endif
