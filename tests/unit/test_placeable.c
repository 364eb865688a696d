/* Refuse what can never run (src/policy/placeable.c): a job fits when an
 * offer or a live registered worker has its GPUs and its memory per GPU
 * together; otherwise the reason names what is missing and the offer that
 * comes closest. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "policy/placeable.h"

static struct offer offer(const char *name, int gpus, int vram_gb)
{
	struct offer o;

	memset(&o, 0, sizeof o);
	snprintf(o.name, sizeof o.name, "%s", name);
	o.gpus = gpus;
	o.vram_gb = vram_gb;
	return o;
}

static struct instance worker(enum instance_state state, int gpus, int vram_gb)
{
	struct instance i;

	memset(&i, 0, sizeof i);
	i.state = state;
	i.gpus = gpus;
	i.vram_gb = vram_gb;
	return i;
}

/* The rule: GPUs and memory per GPU, each at least what the job asks. */
static void test_the_rule(void **state)
{
	(void)state;
	assert_int(placeable_holds(1, 24, 1, 24), 1);
	assert_int(placeable_holds(8, 80, 0, 0), 1);
	assert_int(placeable_holds(1, 24, 2, 24), 0);
	assert_int(placeable_holds(4, 24, 1, 25), 0);
}

static void test_an_offer_that_holds_it(void **state)
{
	struct offer o[2] = {offer("g5", 1, 24), offer("p4", 8, 40)};
	char why[300] = "";

	(void)state;
	assert_int(placeable(o, 2, NULL, 0, 1, 24, why, sizeof why), 1);
	assert_int(placeable(o, 2, NULL, 0, 8, 40, why, sizeof why), 1);
	assert_int(placeable(o, 2, NULL, 0, 0, 0, why, sizeof why), 1);
	assert_string_equal(why, "");
}

static void test_the_reason_names_what_no_offer_has(void **state)
{
	struct offer o[3] = {offer("g4", 1, 16), offer("g5", 1, 24), offer("a4", 4, 16)};
	char why[300];

	(void)state;
	assert_int(placeable(o, 3, NULL, 0, 1, 80, why, sizeof why), 0);
	assert_string_equal(why, "no offer has 80 GB of GPU memory per GPU: the largest is g5 with 24");
	assert_int(placeable(o, 3, NULL, 0, 8, 0, why, sizeof why), 0);
	assert_string_equal(why, "no offer has 8 GPUs: the most is a4 with 4");
	/* Each alone is there, not both in one offer. */
	assert_int(placeable(o, 3, NULL, 0, 4, 24, why, sizeof why), 0);
	assert_string_equal(why, "no offer has 4 GPUs of 24 GB of GPU memory each: those with enough GPUs have "
				 "less memory, and those with enough memory fewer GPUs");
}

static void test_a_live_worker_holds_what_no_offer_does(void **state)
{
	struct offer o[1] = {offer("g5", 1, 24)};
	struct instance w[2] = {worker(INST_TERMINATED, 8, 80), worker(INST_IDLE, 2, 80)};
	char why[300];

	(void)state;
	/* The terminated one is no help. */
	assert_int(placeable(o, 1, w, 2, 8, 80, why, sizeof why), 0);
	assert_string_equal(why, "no offer has 8 GPUs: the most is g5 with 1");
	assert_int(placeable(o, 1, w, 2, 2, 80, why, sizeof why), 1);
	assert_int(placeable(NULL, 0, w, 2, 3, 0, why, sizeof why), 0);
	assert_string_equal(why, "no offer is configured, and no worker registered has 3 GPUs of 0 GB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_rule),
		cmocka_unit_test(test_an_offer_that_holds_it),
		cmocka_unit_test(test_the_reason_names_what_no_offer_has),
		cmocka_unit_test(test_a_live_worker_holds_what_no_offer_does),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
