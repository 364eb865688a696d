/* Policy specs for `ebb sim` and `ebb tune` (sim/spec.c): "NAME[:k=v,...]",
 * on the default config. A spec is refused with a reason, or gives a
 * policy whose knobs (sim_policy.h) are within their documented ranges. */
#include "cli/cmd.h"
#include "sim/sim_policy.h"
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
		FUZZ_ASSERT(p->kind && (p->params != NULL) == (p->kind->params_size > 0));
		for (const struct knob *k = p->kind->knobs; k && k->name; k++) {
			const char *at = (const char *)p->params + k->offset;
			if (k->type == K_INT)
				FUZZ_ASSERT(*(const int64_t *)at >= k->min && *(const int64_t *)at <= k->max);
			else if (k->type == K_SECONDS)
				FUZZ_ASSERT(*(const int64_t *)at >= k->min * 1000 && *(const int64_t *)at <= k->max * 1000);
			else if (k->type == K_NUMBER)
				FUZZ_ASSERT(isfinite(*(const double *)at) && *(const double *)at >= k->min &&
					    *(const double *)at <= k->max);
		}
		policy_free(p);
	}
	free(p);
	free(spec);
	return 0;
}
