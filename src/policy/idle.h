/* The automatic idle timeout: the hold time that costs least over the
 * gaps seen between submissions, for one offer. Pure, for serve and sim
 * alike.
 *
 * An instance that went idle at the start of a gap g and is held for T
 * costs its price for min(g, T). Released at T < g, it costs a cold start
 * when the next job comes (billed): a boot, and a resident handler's
 * setup (setup_ms, the longest of the types'; a warm handler is worth
 * holding longer when it is long). That job waits the cold start: the wait is
 * priced at the instance's rate times the share of the lane's wait target
 * it takes, at most all of it (a boot that takes a tenth of the target
 * costs a tenth of its seconds; one as long as the target or longer, all
 * of them). The price divides out, so the choice depends on the gaps, the
 * offer's boot and the wait target only. */
#ifndef EBB_IDLE_H
#define EBB_IDLE_H

#include <stddef.h>
#include <stdint.h>

/* The T in [min_ms, max_ms] with the least expected cost over the gaps of
 * at least min_ms, the shortest of equals; min_ms with no gap. Gaps
 * shorter than min_ms are inside bursts: any T bridges them at the same
 * cost, so they do not move the choice. gaps is sorted (so the same
 * gaps serve one offer after another). why gets one
 * line with the figures behind the choice, for `ebb fleet`. */
int64_t idle_timeout_auto(int64_t *gaps, size_t n, int64_t boot_ms, int64_t setup_ms, int64_t wait_target_ms,
			  int64_t min_ms, int64_t max_ms, char *why, size_t why_size);

#endif
