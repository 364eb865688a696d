/* The automatic idle timeout: long enough to bridge most of the gaps
 * between submissions, so a burst that follows a short pause finds its
 * instances still up, and no longer. Pure, for serve and sim alike. */
#ifndef EBB_IDLE_H
#define EBB_IDLE_H

#include <stddef.h>
#include <stdint.h>

/* The q-quantile (nearest rank) of the gaps of at least min_ms, clamped to
 * [min_ms, max_ms]. Gaps shorter than min_ms are inside bursts: any
 * timeout bridges them, so they say nothing about the choice. With no gap
 * left, min_ms. gaps is reordered. why gets one line for `ebb fleet`. */
int64_t idle_timeout_auto(int64_t *gaps, size_t n, double q, int64_t min_ms, int64_t max_ms,
			  char *why, size_t why_size);

#endif
