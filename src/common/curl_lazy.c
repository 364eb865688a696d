/* See curl_lazy.h and lazy_lib.h. */
#include <stddef.h>

#include <curl/curl.h>

#include "common/curl_lazy.h"
#include "common/lazy_lib.h"

static struct curl_lib lib;
static int loaded;
static char why[256];

static CURLcode no_init(long flags)
{
	(void)flags;
	return CURLE_FAILED_INIT;
}

static CURL *no_handle(void) { return NULL; }
static CURLM *no_multi(void) { return NULL; }
static void no_cleanup(void) {}

const char *curl_lib_error(void) { return why; }

#define SYM(field) {"curl_" #field, offsetof(struct curl_lib, field)}
static const struct lazy_sym syms[] = {
	SYM(global_init), SYM(global_cleanup), SYM(easy_init), SYM(easy_cleanup),
	SYM(easy_reset), SYM(easy_setopt), SYM(easy_perform), SYM(easy_getinfo),
	SYM(slist_append), SYM(slist_free_all), SYM(easy_strerror), SYM(multi_init),
	SYM(multi_cleanup), SYM(multi_setopt), SYM(multi_add_handle), SYM(multi_remove_handle),
	SYM(multi_socket_action), SYM(multi_info_read), SYM(multi_assign), SYM(multi_perform),
	SYM(multi_poll), SYM(multi_wakeup),
};

const struct curl_lib *curl_lib(void)
{
	if (loaded)
		return &lib;
	loaded = 1;
	if (lazy_lib_load("libcurl.so.4", &lib, syms, sizeof syms / sizeof syms[0], why, sizeof why) == 0)
		return &lib;
	lib = (struct curl_lib){.global_init = no_init, .global_cleanup = no_cleanup, .easy_init = no_handle,
				.multi_init = no_multi};
	return &lib;
}
