/* The contract between the store's front end (store.c) and its engines,
 * in the way git's refs/refs-internal.h stands behind refs.c. Only the
 * front end and the engines include this file; everyone else calls the
 * functions of store.h.
 *
 * What an engine must guarantee:
 *
 * - Transactions. begin .. commit is one batch; commit returns 0 only once
 *   the batch is durable (on disk, fsynced), and -1 when it is not, after
 *   which the front end calls rollback. One batch is open at a time. Inside
 *   a batch, savepoint .. release / rollback_savepoint brackets one
 *   request; savepoints do not nest. rollback_savepoint undoes exactly the
 *   writes since the savepoint and ends it. Every write happens inside a
 *   batch; reads may happen inside or outside one and see the batch's own
 *   writes.
 *
 * - Writers. SQLite assumes that one process writes (serve holds a lock
 *   on its data directory): the front end keeps the job counts in memory,
 *   exact, which such an engine may read (st->counts: the queued classes
 *   of a lease), and a job read cannot change before the same batch
 *   writes it back.
 *   An engine shared by several processes at once (st->shared) must lock
 *   inside a batch every job and instance it reads by id until the batch
 *   ends (SELECT ... FOR UPDATE), pass over the ready and due jobs another
 *   batch holds (SKIP LOCKED), so that no job is ever leased twice at
 *   once, and keep the jobs' tallies in rows of its own that each batch
 *   changes with the jobs (tallies_add), which the front end reads again
 *   (job_count_rows) every COUNTS_FRESH_MS.
 *
 * - Synchronous calls. Every call returns when its work is done, and serve
 *   waits for it on its only thread: an engine answers from a local file
 *   or a nearby server, in milliseconds.
 *
 * - Identity and order. Job and instance ids are assigned by the engine,
 *   positive and increasing; a job's lease token is the caller's (the
 *   queue increments it). job_next_ready orders queued jobs by lane rank,
 *   then priority (higher first), then seq, then id, and gives the first
 *   the offer fits, reading no more than the window and the heads of the
 *   classes that fit (LEASE_WINDOW below). Times are
 *   milliseconds given by the caller: an engine never reads a clock.
 *
 * - Errors. 0 on success; STORE_NOT_FOUND where store.h allows it; -1
 *   with the reason written into st->errmsg ("ENGINE: what failed: why"),
 *   and st->full set when it failed for want of space on disk (a client
 *   is told to retry later, not that the request was wrong). An engine
 *   that loses its batch to an error (SQLite rolls back on a full disk)
 *   refuses a savepoint in it, so that no request's writes commit on
 *   their own, and a rollback of it succeeds.
 *   An update of a job or an instance that is not there is an error: the
 *   front end would count a change that was not made.
 *
 * Every engine passes the store contract suite (tests/unit/test_store_jobs.c
 * and test_store_fleet.c), chosen by EBB_TEST_STORE=NAME. To add one: a
 * file in store/ defining a `const struct store_engine`, and its entry in
 * store.c's registry. */
#ifndef EBB_STORE_ENGINE_H
#define EBB_STORE_ENGINE_H

#include "store/counts.h"
#include "store/store.h"

struct store {
	const struct store_engine *engine;
	void *db; /* the engine's own state */
	struct counts *counts;
	uint64_t changes;
	uint64_t errors;    /* calls that failed */
	int full;           /* one of this batch's calls failed for want of space */
	int contended;      /* this request's call failed for another writer's batch */
	char lasterr[512];  /* the reason of the last of them */
	char errmsg[512];
	/* Other processes write the same store at once (the engine sets it
	 * at open): the counts are read again from the engine before a
	 * batch once they are COUNTS_FRESH_MS old. */
	int shared;
	int64_t counts_read_ms, counts_all_read_ms;
};

/* An open segment as an engine finds it, with the id it keeps it by. */
struct segment_found {
	int64_t id;
	struct segment seg;
};

/* A lease offer's filters as the SQL engines' next-ready query takes
 * them: the types at their limit (a JSON array), the labels asked (one),
 * each team's room in GPUs (an object); NULL for none. Made by the front
 * end (offer_filters_make), freed with offer_filters_free. */
struct offer_filters {
	char *full_types, *labels, *rooms;
};
void offer_filters_make(const struct lease_offer *o, struct offer_filters *f);
void offer_filters_free(struct offer_filters *f);

/* How a lease finds its job among many it cannot take (docs/ARCHITECTURE.md,
 * "How a lease finds its job"): it reads the first LEASE_WINDOW ready jobs
 * in lease order, and when none of them fits, the head of each queued
 * class the offer fits (a seek each), and takes the first of those heads. */
#define LEASE_WINDOW 32
/* Whether the offer fits the jobs of a queued class (a tally's key): their
 * GPUs, VRAM, type and team; labels are each job's, read with the job. */
int offer_fits_class(const struct lease_offer *o, const struct job_count *c);
/* The queued classes in st's counts that the offer fits, a JSON array of
 * objects of a tally's keys (lane, type, team, gpus, min_vram_gb,
 * priority), for a query that seeks each one's head; NULL when out of
 * memory (said in st). */
char *offer_classes_json(struct store *st, const struct lease_offer *o);
/* Whether a comes before b in the lease order. */
int job_leases_before(const struct job *a, const struct job *b);

struct store_engine {
	/* Its name ([store] kind) and, if it has keys of its own, its
	 * section. First: the registry lists these. */
	struct conf_plugin conf;
	/* Opens (creating and migrating as needed) the store for cfg: sets
	 * st->db. -1 with the reason in st->errmsg. */
	int (*open)(struct store *st, const struct config *cfg);
	void (*close)(struct store *st);

	int (*begin)(struct store *st);
	int (*commit)(struct store *st);
	int (*rollback)(struct store *st);
	int (*savepoint)(struct store *st);
	int (*release)(struct store *st);
	int (*rollback_savepoint)(struct store *st);

	/* The jobs' tallies (counts.h), as the engine keeps them: the front
	 * end's start from these. An engine that keeps none counts the jobs
	 * (and the oldest submission of each key). */
	int (*job_count_rows)(struct store *st, count_cb cb, void *arg);
	/* The oldest submission among the queued jobs of a class: 0, or
	 * STORE_NOT_FOUND when there are none. An index seek. */
	int (*queued_oldest)(struct store *st, const struct job_count *key, int64_t *ms);
	int (*job_insert)(struct store *st, struct job *job);
	int (*job_update)(struct store *st, const struct job *job);
	int (*job_get)(struct store *st, int64_t id, struct job *out);
	int (*job_get_by_key)(struct store *st, const char *team, const char *key, struct job *out);
	int (*job_next_ready)(struct store *st, const struct lease_offer *offer, struct job *out);
	int (*job_list)(struct store *st, const struct job_filter *filter, job_cb cb, void *arg);
	int (*job_due)(struct store *st, int64_t now_ms, int64_t *ids, int max, int *n);
	int (*job_leased_on)(struct store *st, int64_t instance, struct job_on *out, int max, int *n);
	int (*next_deadline)(struct store *st, int64_t *out_ms);
	int (*recent_submits)(struct store *st, int limit, time_cb cb, void *arg);
	int (*recent_durations)(struct store *st, int limit, duration_cb cb, void *arg);
	/* The newest `limit` jobs, newest first (the front end stops at the
	 * window's start). */
	int (*arrivals)(struct store *st, int limit, arrival_cb cb, void *arg);
	/* Instance time billed of all time. */
	int (*usage)(struct store *st, int64_t now_ms, int64_t *instance_ms);
	int (*dead_letters)(struct store *st, int64_t since_ms, dead_letters_cb cb, void *arg);

	int (*instance_insert)(struct store *st, struct instance *inst);
	int (*instance_update)(struct store *st, const struct instance *inst);
	int (*instance_get)(struct store *st, int64_t id, struct instance *out);
	int (*instance_by_token)(struct store *st, const char *token, struct instance *out);
	int (*instance_data_set)(struct store *st, int64_t id, const char *data);
	int (*instance_data)(struct store *st, int64_t id, char *buf, size_t size);
	int (*instance_list)(struct store *st, instance_cb cb, void *arg);
	int (*instance_page)(struct store *st, int64_t after_id, int limit, instance_cb cb, void *arg);
	int (*decision_insert)(struct store *st, const struct decision *d);
	int (*decision_list)(struct store *st, int64_t before_id, int limit, decision_cb cb, void *arg);

	int (*segment_open)(struct store *st, const struct segment *seg);
	/* One of the instance's open segments (its kind, job, start and
	 * GPUs), STORE_NOT_FOUND if none; and the end of one, by its id. */
	int (*segment_find)(struct store *st, int64_t instance, struct segment_found *out);
	int (*segment_end)(struct store *st, int64_t id, int64_t end_ms, double cost);
	int (*job_add_cost)(struct store *st, int64_t job, double usd);
	int (*offer_stat_add)(struct store *st, const struct offer_stat *delta);
	int (*offer_stats)(struct store *st, offer_stat_cb cb, void *arg);
	int (*ledger)(struct store *st, int64_t since_ms, int64_t after_id, int64_t upto_id, ledger_cb cb, void *arg);
	int (*segment_last_id)(struct store *st, int64_t *id);
	int (*ledger_open)(struct store *st, ledger_cb cb, void *arg);
	/* Adds delta to the row of (day, offer, market, kind, team), made if
	 * new; day is any integer the front end names (it keeps the sums of
	 * all time under one of its own). */
	int (*ledger_add)(struct store *st, int64_t day, const struct ledger_sum *delta);
	/* The rows of the days first_day to last_day, added up per (offer,
	 * market, kind, team). */
	int (*ledger_sums)(struct store *st, int64_t first_day, int64_t last_day, ledger_sum_cb cb, void *arg);

	int (*alert_put)(struct store *st, const struct alert_row *a);
	int (*alert_delete)(struct store *st, const char *key);
	int (*alerts)(struct store *st, alert_cb cb, void *arg);

	int (*team_budget_set)(struct store *st, const struct team_budget *b);
	int (*team_budgets)(struct store *st, team_budget_cb cb, void *arg);

	/* The jobs' logs: as store.h's store_log_*. */
	int (*log_meta)(struct store *st, int64_t job, int attempt, struct log_meta *out);
	int (*log_meta_put)(struct store *st, const struct log_meta *m);
	int (*log_metas_oldest)(struct store *st, int64_t before_ms, int limit, log_meta_cb cb, void *arg);
	int (*log_meta_delete)(struct store *st, int64_t job, int attempt);
	int (*log_total)(struct store *st, int64_t *bytes);
	int (*log_insert)(struct store *st, const struct log_line *l);
	int (*log_lines)(struct store *st, int64_t job, int attempt, int64_t after, int limit, int last,
			 log_line_cb cb, void *arg);
	int (*log_delete)(struct store *st, int64_t job, int attempt, int64_t after, int64_t upto);
	int (*tuning_set)(struct store *st, const struct tuning_row *t);
	int (*tunings)(struct store *st, tuning_cb cb, void *arg);

	int (*attempt_put)(struct store *st, const struct attempt *a);
	int (*attempts)(struct store *st, int64_t job, attempt_cb cb, void *arg);

	/* Only for an engine that several serves share (NULL otherwise):
	 * lead takes the lock that makes one of them the leader, if it is
	 * free (1 this one leads, 0 another does); notify tells the others,
	 * once this batch has committed, that a job may have become ready; wake_fd
	 * is a descriptor that turns readable when another's word comes,
	 * woken reads it (1 a word, 0 none, -1 it broke: wake_fd makes it
	 * again); now_ms is the shared clock; leader names who leads. */
	int (*lead)(struct store *st);
	void (*notify)(struct store *st);
	int (*wake_fd)(struct store *st);
	int (*woken)(struct store *st);
	int (*now_ms)(struct store *st, int64_t *ms);
	/* The name of the leading serve (config_serve_id()). */
	int (*leader)(struct store *st, char *name, size_t size);
	/* Adds a batch's delta to the tallies' rows, before it commits. */
	int (*tallies_add)(struct store *st, const struct job_count *delta);
	/* Counts the jobs for store_check(), having stopped other writers'
	 * changes of the tallies' rows until the batch ends. */
	int (*job_recount)(struct store *st, count_cb cb, void *arg);
};

/* The ops every engine has, each an engine's function op_NAME: its
 * struct store_engine lists them as STORE_ENGINE_OPS, then those only it
 * has (lead ... job_recount), so that an op added above
 * is one each engine must define. */
#define STORE_ENGINE_OP(name) .name = op_##name
#define STORE_ENGINE_OPS                                                                                  \
	STORE_ENGINE_OP(open), STORE_ENGINE_OP(close), STORE_ENGINE_OP(begin), STORE_ENGINE_OP(commit),  \
	STORE_ENGINE_OP(rollback), STORE_ENGINE_OP(savepoint), STORE_ENGINE_OP(release),                 \
	STORE_ENGINE_OP(rollback_savepoint), STORE_ENGINE_OP(job_count_rows), STORE_ENGINE_OP(job_insert), \
	STORE_ENGINE_OP(job_update), STORE_ENGINE_OP(job_get), STORE_ENGINE_OP(job_get_by_key),           \
	STORE_ENGINE_OP(job_next_ready), STORE_ENGINE_OP(job_list), STORE_ENGINE_OP(job_due),             \
	STORE_ENGINE_OP(job_leased_on), STORE_ENGINE_OP(next_deadline), STORE_ENGINE_OP(queued_oldest),   \
	STORE_ENGINE_OP(recent_submits), STORE_ENGINE_OP(recent_durations), STORE_ENGINE_OP(arrivals),    \
	STORE_ENGINE_OP(usage), STORE_ENGINE_OP(dead_letters), STORE_ENGINE_OP(instance_insert),          \
	STORE_ENGINE_OP(instance_update), STORE_ENGINE_OP(instance_get), STORE_ENGINE_OP(instance_by_token), \
	STORE_ENGINE_OP(instance_data_set), STORE_ENGINE_OP(instance_data), STORE_ENGINE_OP(instance_list), \
	STORE_ENGINE_OP(instance_page), STORE_ENGINE_OP(decision_insert), STORE_ENGINE_OP(decision_list),   \
	STORE_ENGINE_OP(segment_open),                                                                    \
	STORE_ENGINE_OP(segment_find), STORE_ENGINE_OP(segment_end), STORE_ENGINE_OP(job_add_cost),       \
	STORE_ENGINE_OP(offer_stat_add), STORE_ENGINE_OP(offer_stats), STORE_ENGINE_OP(ledger), STORE_ENGINE_OP(segment_last_id), \
	STORE_ENGINE_OP(ledger_open), STORE_ENGINE_OP(ledger_add), STORE_ENGINE_OP(ledger_sums),          \
	STORE_ENGINE_OP(alert_put), STORE_ENGINE_OP(alert_delete), STORE_ENGINE_OP(alerts),               \
	STORE_ENGINE_OP(team_budget_set), STORE_ENGINE_OP(team_budgets), STORE_ENGINE_OP(log_meta),        \
	STORE_ENGINE_OP(log_meta_put), STORE_ENGINE_OP(log_metas_oldest), STORE_ENGINE_OP(log_meta_delete), \
	STORE_ENGINE_OP(log_total), STORE_ENGINE_OP(log_insert), STORE_ENGINE_OP(log_lines),               \
	STORE_ENGINE_OP(log_delete), STORE_ENGINE_OP(attempt_put), STORE_ENGINE_OP(attempts), STORE_ENGINE_OP(tuning_set),   \
	STORE_ENGINE_OP(tunings)

#endif
