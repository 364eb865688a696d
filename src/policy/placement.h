/* Which waiting worker a job goes to, for serve and the simulator alike:
 * the one on the instance launched first (a worker started by hand, with
 * no instance, before any: a machine already paid for), and among those
 * alike the one that asked first. serve offers a job to its parked lease
 * requests in this order; the simulator's dispatch walks its instances
 * with room in launch order, which is this order.
 *
 * Work so goes to the same instances again and again, and those launched
 * last stay idle long enough for their idle timeout. Offered to the
 * request that had waited longest, as serve did before, each job went to
 * the worker idle longest, which reset every instance's idle time in
 * turn: a fleet kept itself up on work that one instance could do.
 *
 * Best fit (the fewest GPUs free first) was measured and left out
 * (docs/SCALING.md, "Which worker takes a job"): not knowing when jobs
 * end, it keeps a long job's instance up as often as it lets another go. */
#ifndef EBB_POLICY_PLACEMENT_H
#define EBB_POLICY_PLACEMENT_H

#include <stdint.h>

/* Whether a job goes to the worker on instance a (0: none, started by
 * hand) before the one on instance b; neither when they are alike. */
int placement_before(int64_t a, int64_t b);

#endif
