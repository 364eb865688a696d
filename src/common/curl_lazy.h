/* libcurl, loaded the first time a client needs it. `ebb serve` makes an
 * HTTP call only to post an alert to a webhook (serve/webhook.c), and not
 * mapping libcurl with its thirty-odd dependencies (TLS, Kerberos, LDAP,
 * ...) until then keeps the idle control plane under its memory goal
 * (docs/BENCHMARKS.md). Include this instead of <curl/curl.h>: the curl_*
 * calls below then go through the loaded table, and the call sites read as
 * plain libcurl. */
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
	/* The multi interface, driven by an event loop (serve's webhooks). */
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_cleanup)(CURLM *m);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption option, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_socket_action)(CURLM *m, curl_socket_t s, int ev_bitmask, int *running);
	CURLMsg *(*multi_info_read)(CURLM *m, int *msgs_in_queue);
	CURLMcode (*multi_assign)(CURLM *m, curl_socket_t s, void *data);
	/* A call another thread may cut short (client_interrupt). */
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra, unsigned n, int timeout_ms, int *ret);
	CURLMcode (*multi_wakeup)(CURLM *m);
};

/* The table; when libcurl cannot be loaded, one whose global_init fails
 * and whose easy_init and multi_init give NULL, with the reason in
 * curl_lib_error(). */
const struct curl_lib *curl_lib(void);
const char *curl_lib_error(void);

#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
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
#define curl_multi_init (curl_lib()->multi_init)
#define curl_multi_cleanup (curl_lib()->multi_cleanup)
#define curl_multi_setopt (curl_lib()->multi_setopt)
#define curl_multi_add_handle (curl_lib()->multi_add_handle)
#define curl_multi_remove_handle (curl_lib()->multi_remove_handle)
#define curl_multi_socket_action (curl_lib()->multi_socket_action)
#define curl_multi_info_read (curl_lib()->multi_info_read)
#define curl_multi_assign (curl_lib()->multi_assign)
#define curl_multi_perform (curl_lib()->multi_perform)
#define curl_multi_poll (curl_lib()->multi_poll)
#define curl_multi_wakeup (curl_lib()->multi_wakeup)

#endif
