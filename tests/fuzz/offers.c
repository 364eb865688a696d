/* Offer files: the ebb config that `ebb sim --offers FILE` reads for its
 * [offer.*] sections (sim_load, with a small trace of its own). A file is
 * refused with a reason, or gives offers whose prices, speeds and
 * billing a replay can count with: an instance's bill is finite, not
 * negative, and covers its lifetime. */
#include "cli/cmd.h"
#include "sim/sim.h"

#include <math.h>

#include "fuzz.h"

static char trace_path[64];

static void unlink_trace(void) { unlink(trace_path); }

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char trace[] = "submit_time_s,duration_s,gpus\n0,60,1\n30,600,1\n";
	FILE *f;

	(void)argc;
	(void)argv;
	fuzz_tmp_path(trace_path, sizeof trace_path, "trace");
	if (!(f = fopen(trace_path, "w")) || fputs(trace, f) < 0 || fclose(f) != 0)
		abort();
	atexit(unlink_trace);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sim_options o = {.plugins = &cmd_plugins};
	struct trace t;
	char err[600];

	err[0] = '\0';
	if (sim_load(trace_path, fuzz_file(data, size), NULL, 0, 0, &t, &o, err, sizeof err) != 0) {
		FUZZ_ASSERT(err[0]);
		return 0;
	}
	FUZZ_ASSERT(o.noffers >= 1 && o.noffers <= SIM_MAX_OFFERS && t.n == 2);
	for (int k = 0; k < o.noffers; k++) {
		const struct offer *of = &o.offers[k];
		int64_t lives[] = {0, 1, of->boot_ms, of->boot_ms + 3600000, of->billing_minimum_ms};
		FUZZ_ASSERT(of->name[0] && of->gpus >= 1 && of->speed > 0 && isfinite(of->speed));
		FUZZ_ASSERT(offer_index(o.offers, o.noffers, of->name) == k);
		for (size_t i = 0; i < sizeof lives / sizeof lives[0]; i++) {
			int64_t billed = offer_billed_ms(of, lives[i]);
			FUZZ_ASSERT(billed >= lives[i]);
			for (int m = 0; m < MARKET_COUNT; m++) {
				double cost = offer_cost(of, (enum market)m, billed);
				FUZZ_ASSERT(isfinite(cost) && cost >= 0);
			}
		}
	}
	trace_free(&t);
	return 0;
}
