/* What the exec provider reads in its programs' replies (docs/PROVIDERS.md,
 * contract version 1): standard output as a JSON object of this version,
 * a launch's "ref" and "data", a list's instances. Apart from exec.c,
 * which runs the programs, so that a reply is read the same way whether
 * a program wrote it or a test (tests/fuzz/exec_reply.c) did. */
#ifndef EBB_EXEC_REPLY_H
#define EBB_EXEC_REPLY_H

#include <jansson.h>
#include <stddef.h>

#include "provider/exec_run.h"
#include "provider/provider.h"

#define EXEC_CONTRACT_VERSION 1

/* The run's standard output as a message of this contract: the object
 * (the caller's to free), or NULL with why. program and call name the
 * run in why. */
json_t *exec_reply(const char *program, const char *call, const struct exec_result *r, char *why, size_t size);
/* A launch's reply into res: ok with ref and data, or error. */
void exec_launch_reply(const char *program, json_t *reply, struct launch_result *res);
/* One of the "instances" of a list's reply into *out, its ref within
 * item, offer "": 0, or -1 with why. */
int exec_list_item(const char *program, json_t *item, struct provider_item *out, char *why, size_t size);

#endif
