/* The registry of the policies the simulator replays (sim_policy.h): a
 * new one is its file and its name in the two lists below (docs/SIMULATION.md,
 * "Adding a baseline"). The order is
 * `ebb sim`'s default order, and the order spec errors list them in. */
#include "sim/sim_policy.h"

extern const struct sim_policy sim_policy_ebb, sim_policy_always_on, sim_policy_min1, sim_policy_util,
	sim_policy_keda, sim_policy_clairvoyant, sim_policy_bound;

const struct sim_policy *const sim_policies[] = {
	&sim_policy_ebb,  &sim_policy_always_on,   &sim_policy_min1,  &sim_policy_util,
	&sim_policy_keda, &sim_policy_clairvoyant, &sim_policy_bound, NULL,
};
