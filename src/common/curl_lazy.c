/* See curl_lazy.h. The library handle is process-wide by nature (dlopen),
 * so the table is too: loaded once, never unloaded. */
#include <dlfcn.h>
#include <stdio.h>

#include <curl/curl.h>

#include "common/curl_lazy.h"

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

const struct curl_lib *curl_lib(void)
{
	void *h;

	if (loaded)
		return &lib;
	loaded = 1;
	h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		/* POSIX: a function pointer may be stored through a void *. */
		*(void **)&lib.global_init = dlsym(h, "curl_global_init");
		*(void **)&lib.global_cleanup = dlsym(h, "curl_global_cleanup");
		*(void **)&lib.easy_init = dlsym(h, "curl_easy_init");
		*(void **)&lib.easy_cleanup = dlsym(h, "curl_easy_cleanup");
		*(void **)&lib.easy_reset = dlsym(h, "curl_easy_reset");
		*(void **)&lib.easy_setopt = dlsym(h, "curl_easy_setopt");
		*(void **)&lib.easy_perform = dlsym(h, "curl_easy_perform");
		*(void **)&lib.easy_getinfo = dlsym(h, "curl_easy_getinfo");
		*(void **)&lib.slist_append = dlsym(h, "curl_slist_append");
		*(void **)&lib.slist_free_all = dlsym(h, "curl_slist_free_all");
		*(void **)&lib.easy_strerror = dlsym(h, "curl_easy_strerror");
		*(void **)&lib.multi_init = dlsym(h, "curl_multi_init");
		*(void **)&lib.multi_cleanup = dlsym(h, "curl_multi_cleanup");
		*(void **)&lib.multi_setopt = dlsym(h, "curl_multi_setopt");
		*(void **)&lib.multi_add_handle = dlsym(h, "curl_multi_add_handle");
		*(void **)&lib.multi_remove_handle = dlsym(h, "curl_multi_remove_handle");
		*(void **)&lib.multi_socket_action = dlsym(h, "curl_multi_socket_action");
		*(void **)&lib.multi_info_read = dlsym(h, "curl_multi_info_read");
		*(void **)&lib.multi_assign = dlsym(h, "curl_multi_assign");
		if (lib.global_init && lib.global_cleanup && lib.easy_init && lib.easy_cleanup && lib.easy_reset &&
		    lib.easy_setopt && lib.easy_perform && lib.easy_getinfo && lib.slist_append && lib.slist_free_all &&
		    lib.easy_strerror && lib.multi_init && lib.multi_cleanup && lib.multi_setopt && lib.multi_add_handle &&
		    lib.multi_remove_handle && lib.multi_socket_action && lib.multi_info_read && lib.multi_assign)
			return &lib;
		snprintf(why, sizeof why, "libcurl.so.4 lacks a function ebb needs");
	} else {
		snprintf(why, sizeof why, "cannot load libcurl: %s", dlerror());
	}
	lib = (struct curl_lib){.global_init = no_init, .global_cleanup = no_cleanup, .easy_init = no_handle,
				.multi_init = no_multi};
	return &lib;
}
