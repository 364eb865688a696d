/* serve's request path out of memory (docs/ARCHITECTURE.md, "Out of
 * memory"): a submit whose Nth allocation fails, for every N until one
 * that needs fewer, is answered 500 out_of_memory with nothing of it
 * stored, neither the job nor half of it (a job without its command, or
 * with its key's hash and no key, which a retry would duplicate), and
 * serve goes on. The allocation fails through the test hook of
 * common/mem.h (EBB_TEST_FAIL_ALLOC, read by serve's API), so the test
 * runs in every build, the sanitizers' included. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define BODY                                                                                                  \
	"{\"command\": [\"sh\", \"-c\", \"true\"], \"labels\": [\"gpu-a\"], \"payload\": {\"shard\": 7},"     \
	" \"idempotency_key\": \"shard-7\", \"items\": 3}"

static void submit_out_of_memory(void **state)
{
	int failed = 0, status = 0;

	(void)state;
	for (int n = 1; n < 400 && status != 201; n++) {
		struct harness_server *s;
		json_t *reply = NULL, *jobs = NULL;

		setenv("EBB_TEST_FAIL_ALLOC", harness_fmt("POST /v1/jobs %d", n), 1);
		s = harness_serve("", 0);
		unsetenv("EBB_TEST_FAIL_ALLOC");
		status = harness_call(s, "POST", "/v1/jobs", BODY, &reply);
		if (status == 201) {
			/* Fewer allocations than n: the job whole. */
			json_t *job = harness_get_job(s, JINT(reply, "id"));
			assert_string_equal(JSTR(job, "idempotency_key"), "shard-7");
			assert_non_null(json_object_get(job, "command"));
			assert_non_null(json_object_get(job, "labels"));
			json_decref(job);
		} else {
			if (status != 500 || !reply || strcmp(JSTR(reply, "error.code"), "out_of_memory") != 0)
				harness_fail_with_log(s, "allocation %d of the submit failing: %d, not 500 out_of_memory", n,
						      status);
			assert_int(harness_call(s, "GET", "/v1/jobs", NULL, &jobs), 200);
			if (json_array_size(json_object_get(jobs, "jobs")) != 0)
				harness_fail_with_log(s, "allocation %d of the submit failing: a job was stored", n);
			assert_int(harness_call(s, "GET", "/healthz", NULL, NULL), 200);
			failed++;
		}
		json_decref(reply);
		json_decref(jobs);
		assert_int(harness_server_stop(s), 0);
	}
	assert_int(status, 201);
	print_message("the submit's first %d allocations failed in turn\n", failed);
	assert_true(failed >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(submit_out_of_memory, harness_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
