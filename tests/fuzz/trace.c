/* Job traces for `ebb sim` and `ebb tune` (sim/trace.c): CSV with a
 * header. The first byte picks skip_bad and a filter; the rest is the
 * file. A trace is refused with "FILE:LINE: ..." or loads into jobs in
 * submit order, each with its lane, type and team among the trace's own
 * (every team a name serve would take), its numbers within what the
 * loader promises. */
#include "common/config.h"
#include "common/job.h"
#include "sim/trace.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct trace_filter filters[] = {{"team", "a"}, {"lane", "batch"}};
	struct trace t;
	char err[600];
	int skip_bad, nfilters;

	if (size == 0)
		return 0;
	skip_bad = data[0] & 1;
	nfilters = (data[0] >> 1) % 3;
	err[0] = '\0';
	if (trace_load(fuzz_file(data + 1, size - 1), filters, nfilters, skip_bad, &t, err, sizeof err) != 0) {
		FUZZ_ASSERT(err[0]);
		return 0;
	}
	for (size_t k = 0; k < t.n; k++) {
		const struct trace_job *j = &t.jobs[k];
		FUZZ_ASSERT(k == 0 || t.jobs[k - 1].submit_ms <= j->submit_ms);
		FUZZ_ASSERT(j->submit_ms >= 0 && j->duration_ms >= 0 && j->gpus >= 0 && j->gpus <= 64);
		FUZZ_ASSERT(j->est_ms >= 0 && j->est_ms <= JOB_EST_MAX_S * 1000LL);
		FUZZ_ASSERT(j->lane >= 0 && j->lane < t.nlanes && j->type >= 0 && j->type < t.ntypes);
		FUZZ_ASSERT(j->team >= 0 && j->team < t.nteams);
	}
	FUZZ_ASSERT(t.nlanes <= CONF_MAX_LANES);
	for (int k = 0; k < t.nteams; k++)
		FUZZ_ASSERT(config_name_ok(t.teams[k]));
	if (t.n)
		trace_window(&t, t.jobs[t.n / 2].submit_ms, t.jobs[t.n - 1].submit_ms + 1);
	trace_free(&t);
	return 0;
}
