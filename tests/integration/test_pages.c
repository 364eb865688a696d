/* The lists that grow without end come by keyset pages (docs/API.md,
 * "Pages"): GET /v1/fleet?all=1 by id up, GET /v1/decisions newest
 * first; walking next_after from the first page gives every row once, in
 * order, whatever the page size, a full last page followed by an empty
 * one; the CLI says where the next page starts. The rows are written
 * through the store into serve's own database while it is stopped, as
 * many as a long-lived fleet's, on either engine (EBB_TEST_STORE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "harness.h"
#include "store/store.h"

#define NROWS 25

/* A serve with nothing that writes (no provider), whose store holds
 * NROWS instances, all terminated, and NROWS decisions, ids 1 to NROWS. */
static struct harness_server *serve_with_rows(void)
{
	struct harness_server *s = harness_serve("[provider]\nkind = none\n", 0);
	struct config cfg;
	struct store *st;

	assert_int(harness_server_stop(s), 0);
	config_defaults(&cfg, &(struct conf_plugins){store_plugins, NULL});
	st = harness_store_open(&cfg, s->data);
	assert_int(store_begin(st), 0);
	for (int k = 1; k <= NROWS; k++) {
		struct instance i = {.market = MARKET_SPOT, .state = INST_TERMINATED, .gpus = 1, .launched_ms = k,
				     .terminated_ms = k + 1, .updated_ms = k + 1};
		struct decision d = {.at_ms = k, .kind = "launch", .offer = "a100", .count = 1,
				     .reason = harness_fmt("launch %d", k)};
		snprintf(i.offer, sizeof i.offer, "a100");
		assert_int(store_instance_insert(st, &i), 0);
		assert_int(store_decision_insert(st, &d), 0);
	}
	assert_int(store_commit(st), 0);
	store_close(st);
	config_free(&cfg);
	harness_server_start(s);
	return s;
}

/* Walks path's pages of limit rows from the first, following next_after,
 * and returns the ids of the rows of list in the order they came, as
 * "1 2 3 ..."; *pages is how many pages it took. Each page but the last
 * is full, and says where the next starts: its last id. */
static const char *walk(struct harness_server *s, const char *path, const char *list, int limit, int *pages)
{
	static char ids[4096];
	int64_t after = 0;
	size_t n = 0;

	ids[0] = '\0';
	for (*pages = 1;; (*pages)++) {
		json_t *r = harness_get(s, harness_fmt("%s%slimit=%d&after=%lld", path, strchr(path, '?') ? "&" : "?",
						       limit, (long long)after));
		json_t *rows = json_object_get(r, list), *next = json_object_get(r, "next_after"), *row = NULL;
		size_t i;
		if (*pages > NROWS + 2)
			fail_msg("%s: more pages than rows: next_after never null", path);
		json_array_foreach(rows, i, row)
			n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%lld", n ? " " : "",
					      (long long)json_integer_value(json_object_get(row, "id")));
		if (json_is_null(next)) {
			assert_true(json_array_size(rows) < (size_t)limit);
			json_decref(r);
			return ids;
		}
		assert_int(json_array_size(rows), limit);
		assert_int(json_integer_value(next), JINT(json_array_get(rows, (size_t)limit - 1), "id"));
		after = json_integer_value(next);
		json_decref(r);
	}
}

static const char *ids_from(int first, int step)
{
	static char out[4096];
	size_t n = 0;

	for (int k = 0, id = first; k < NROWS; k++, id += step)
		n += (size_t)snprintf(out + n, sizeof out - n, "%s%d", k ? " " : "", id);
	return out;
}

/* Every instance once, by id, in pages of 7 (the last short) and of 5
 * (the last full, then an empty one); the live fleet alone comes whole,
 * and takes no page. */
static void fleet_all_in_pages(void **state)
{
	struct harness_server *s;
	json_t *r;
	int pages;

	(void)state;
	s = serve_with_rows();
	assert_string_equal(walk(s, "/v1/fleet?all=1", "instances", 7, &pages), ids_from(1, 1));
	assert_int(pages, 4);
	assert_string_equal(walk(s, "/v1/fleet?all=1", "instances", 5, &pages), ids_from(1, 1));
	assert_int(pages, 6);
	/* The default page: 100, all of them. */
	r = harness_get(s, "/v1/fleet?all=1");
	assert_int(json_array_size(json_object_get(r, "instances")), NROWS);
	assert_true(json_is_null(json_object_get(r, "next_after")));
	json_decref(r);
	r = harness_get(s, "/v1/fleet");
	assert_int(json_array_size(json_object_get(r, "instances")), 0);
	assert_true(json_is_null(json_object_get(r, "next_after")));
	json_decref(r);
	r = harness_call_ok(s, "GET", "/v1/fleet?limit=5", NULL, 400);
	assert_string_equal(harness_jstr(r, "error.code"), "bad_value");
	assert_string_equal(harness_jstr(r, "error.field"), "limit");
	json_decref(r);
	json_decref(harness_call_ok(s, "GET", "/v1/fleet?all=1&limit=0", NULL, 400));
}

/* Every decision once, newest first, in pages of 7 and of 5. */
static void decisions_in_pages(void **state)
{
	struct harness_server *s;
	int pages;

	(void)state;
	s = serve_with_rows();
	assert_string_equal(walk(s, "/v1/decisions", "decisions", 7, &pages), ids_from(NROWS, -1));
	assert_int(pages, 4);
	assert_string_equal(walk(s, "/v1/decisions", "decisions", 5, &pages), ids_from(NROWS, -1));
	assert_int(pages, 6);
	json_decref(harness_call_ok(s, "GET", "/v1/decisions?after=-1", NULL, 400));
}

/* The CLI pages as GET /v1/jobs's `ebb jobs` does: --limit and --after,
 * and a word on stderr where the next page starts. */
static void cli_follows_the_pages(void **state)
{
	struct harness_server *s;
	struct harness_run r;

	(void)state;
	s = serve_with_rows();
	harness_ebb(&r, s, "decisions", "--limit", "10", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "launch 25\n");
	assert_contains(r.out, "launch 16\n");
	assert_null(strstr(r.out, "launch 15\n"));
	assert_contains(r.err, "(more decisions: add --after 16)");
	harness_run_free(&r);
	harness_ebb(&r, s, "decisions", "--limit", "10", "--after", "5", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "launch 4\n");
	assert_contains(r.out, "launch 1\n");
	assert_null(strstr(r.out, "launch 5\n"));
	assert_null(strstr(r.err, "more decisions"));
	harness_run_free(&r);

	harness_ebb(&r, s, "fleet", "--all", "--limit", "10", NULL);
	assert_int(r.status, 0);
	assert_contains(r.err, "(more instances: add --after 10)");
	harness_run_free(&r);
	harness_ebb(&r, s, "fleet", "--all", "--after", "20", "--json", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "\"id\": 21");
	assert_contains(r.out, "\"id\": 25");
	assert_null(strstr(r.out, "\"id\": 20,"));
	harness_run_free(&r);
}

#define T(fn) cmocka_unit_test_teardown(fn, harness_cleanup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(fleet_all_in_pages),
		T(decisions_in_pages),
		T(cli_follows_the_pages),
	};

	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
