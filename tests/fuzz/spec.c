/* Policy specs for `ebb sim` and `ebb tune` (sim/spec.c): "NAME[:k=v,...]",
 * on the default config. A spec is refused with a reason, or gives a
 * policy whose knobs are within their documented ranges. */
#include "cli/cmd.h"
#include "sim/spec.h"

#include <math.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_string(data, size), err[600];
	struct policy *p = malloc(sizeof *p);

	FUZZ_ASSERT(p);
	err[0] = '\0';
	if (policy_parse(spec, NULL, &cmd_plugins, p, err, sizeof err) != 0) {
		FUZZ_ASSERT(err[0]);
	} else {
		FUZZ_ASSERT(p->kind >= POL_EBB && p->kind <= POL_BOUND);
		FUZZ_ASSERT(p->n >= 0 && p->idle_ms >= 0 && p->window_ms >= 0 && p->poll_ms >= 1);
		FUZZ_ASSERT(p->up >= 0 && p->up <= 1 && p->down >= 0 && p->down <= 1);
		FUZZ_ASSERT(isfinite(p->target) && p->target >= 1);
		FUZZ_ASSERT(p->cooldown_ms >= 0 && p->stabilize_ms >= 0);
		policy_free(p);
	}
	free(p);
	free(spec);
	return 0;
}
