/* See lazy_lib.h. A library, once loaded, stays loaded: its handle is
 * process-wide by nature (dlopen) and its tables are too. */
#include <dlfcn.h>
#include <stdio.h>

#include "common/lazy_lib.h"

int lazy_lib_load(const char *soname, void *table, const struct lazy_sym *syms, size_t n, char *why,
		  size_t whysize)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(why, whysize, "cannot load %s: %s", soname, dlerror());
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(why, whysize, "%s lacks %s, which ebb needs", soname, syms[i].name);
			return -1;
		}
		/* POSIX: a function pointer may be stored through a void *. */
		*(void **)((char *)table + syms[i].offset) = f;
	}
	return 0;
}
