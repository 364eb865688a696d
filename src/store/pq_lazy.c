/* See pq_lazy.h. */
#include <stdio.h>

#include "common/lazy_lib.h"
#include "store/pq_lazy.h"

static struct pq_lib lib;
static int loaded, ready;
static char why[256];

#define SYM(field) {"PQ" #field, offsetof(struct pq_lib, field)}
static const struct lazy_sym syms[] = {
	SYM(connectdb), SYM(connectdbParams), SYM(finish), SYM(reset), SYM(status),
	SYM(db), SYM(host), SYM(errorMessage), SYM(setNoticeProcessor), SYM(exec),
	SYM(execParams), SYM(prepare), SYM(execPrepared), SYM(resultStatus), SYM(resultErrorField),
	SYM(cmdStatus), SYM(cmdTuples), SYM(ntuples), SYM(nfields), SYM(fname),
	SYM(getvalue), SYM(getlength), SYM(getisnull), SYM(clear), SYM(enterPipelineMode),
	SYM(exitPipelineMode), SYM(pipelineSync), SYM(sendQueryParams), SYM(sendQueryPrepared), SYM(getResult),
	SYM(flush), SYM(socket), SYM(consumeInput), SYM(isBusy), SYM(notifies), SYM(freemem),
};

const struct pq_lib *pq_lib(void) { return &lib; }

int pq_lib_ready(char *err, size_t errsize)
{
	if (!loaded) {
		loaded = 1;
		ready = lazy_lib_load("libpq.so.5", &lib, syms, sizeof syms / sizeof syms[0], why, sizeof why) == 0;
	}
	if (!ready)
		snprintf(err, errsize, "postgres: %s", why);
	return ready ? 0 : -1;
}
