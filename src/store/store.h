/* The store interface: every engine is a table of these functions.
 *
 * Calls return 0 on success, STORE_NOT_FOUND where a row may be missing,
 * and -1 on an engine error, with the reason in store->errmsg. Writes are
 * made inside a batch (begin .. commit) that the server commits before it
 * sends any reply of the batch; a request's own writes sit in a savepoint
 * inside it so that a failed request leaves no trace. A store is used by
 * one thread (serve has only one): it takes no locks of its own. */
#ifndef EBB_STORE_H
#define EBB_STORE_H

#include <stdint.h>

#include "common/instance.h"
#include "common/job.h"

#define STORE_NOT_FOUND 1

struct store;

/* What a worker offers when it asks for a lease. */
struct lease_offer {
	int gpus;
	int vram_gb;
	json_t *labels; /* array of strings, or NULL */
	/* Types at their max_running: skipped. */
	const char *const *full_types;
	int nfull_types;
};

struct job_filter {
	int state; /* -1: any */
	const char *lane, *team, *type;
	int64_t after_id; /* ids greater than this, ascending */
	int limit;
};

/* One row of job counts: the store keeps them per state, lane, type, team. */
struct job_count {
	enum job_state state;
	const char *lane, *type, *team;
	int64_t n;
};

/* Queued work of one requirement class, lane and type. */
struct demand_row {
	int gpus, min_vram_gb;
	const char *lane, *type;
	int64_t jobs;
	int64_t items;
	int64_t jobs_without_est;
	int64_t est_s; /* summed over the jobs that have one */
	int64_t oldest_ms;
};

/* One submitted job, for the arrival rate. */
struct arrival_row {
	int gpus, min_vram_gb;
	const char *lane, *type;
	int64_t est_s; /* 0: none given */
	int64_t created_ms;
};

struct decision {
	int64_t id;
	int64_t at_ms;
	const char *kind; /* launch, drain, terminate */
	const char *offer;
	int count;
	int64_t instance;
	const char *reason;
};

/* A stretch of one instance's life: boot, idle, a job's run, or the
 * billing remainder (time billed past its termination). */
struct segment {
	int64_t instance;
	char kind[8]; /* boot, idle, job, billing */
	int64_t job;
	int64_t start_ms, end_ms;
	double cost;
};

/* What ebb has observed of one offer on one market; added up in the store. */
struct offer_stat {
	const char *offer;
	enum market market;
	int64_t runs;          /* finished job runs */
	double speed_sum;      /* per run with an est_s: est_s / run time */
	int64_t speed_n;
	int64_t items, run_ms; /* items done and run time of those runs */
	int64_t boots, boot_ms; /* launch to registration */
	int64_t alive_ms;      /* instance time, for the reclaim rate */
	int64_t reclaims;
	int64_t launches, launch_failures;
	int64_t last_failure_ms, last_launch_ms;
};

/* One row of the ledger for reports: a segment with what it belongs to. */
struct ledger_row {
	const struct segment *seg;
	const char *offer;
	enum market market;
	int gpus;
	const char *team, *type; /* of the job; NULL for boot, idle, billing */
	int64_t items_done, items_lost; /* of the job, when the segment ended it */
	int reclaimed;         /* the instance ended by a reclaim */
};

typedef int (*job_cb)(void *arg, const struct job *job);
typedef int (*demand_cb)(void *arg, const struct demand_row *row);
typedef int (*arrival_cb)(void *arg, const struct arrival_row *row);
typedef int (*instance_cb)(void *arg, const struct instance *inst);
typedef int (*decision_cb)(void *arg, const struct decision *d);
/* One finished job: its type and run time, newest first. */
typedef int (*duration_cb)(void *arg, const char *type, int64_t run_ms);
typedef int (*time_cb)(void *arg, int64_t ms);
typedef int (*offer_stat_cb)(void *arg, const struct offer_stat *stat);
typedef int (*ledger_cb)(void *arg, const struct ledger_row *row);
typedef int (*count_cb)(void *arg, const struct job_count *count);

struct store_ops {
	const char *name;
	int (*begin)(struct store *);
	int (*commit)(struct store *);
	int (*rollback)(struct store *);
	int (*savepoint)(struct store *);
	int (*release)(struct store *);
	int (*rollback_savepoint)(struct store *);

	/* Assigns job->id. */
	int (*job_insert)(struct store *, struct job *job);
	/* Writes every mutable field of the job with this id. */
	int (*job_update)(struct store *, struct job *job);
	int (*job_get)(struct store *, int64_t id, struct job *out);
	int (*job_get_by_key)(struct store *, const char *team, const char *key, struct job *out);
	/* The first queued job the offer fits, in lane, priority, seq order. */
	int (*job_next_ready)(struct store *, const struct lease_offer *offer, struct job *out);
	int (*job_list)(struct store *, const struct job_filter *filter, job_cb cb, void *arg);
	/* Ids of delayed jobs due and leases expired at now_ms, up to max. */
	int (*job_due)(struct store *, int64_t now_ms, int64_t *ids, int max, int *n);
	/* The earliest run_at of a delayed job or expiry of a lease; 0 if none. */
	int (*next_deadline)(struct store *, int64_t *out_ms);
	int (*job_counts)(struct store *, count_cb cb, void *arg);
	/* Jobs in one state, all lanes, types and teams. */
	int (*count_in_state)(struct store *, enum job_state state, int64_t *n);
	int (*demand)(struct store *, demand_cb cb, void *arg);
	/* Submit times of the newest `limit` jobs, newest first. */
	int (*recent_submits)(struct store *, int limit, time_cb cb, void *arg);
	int (*recent_durations)(struct store *, int limit, duration_cb cb, void *arg);
	/* The newest `limit` jobs submitted since since_ms, newest first. */
	int (*arrivals)(struct store *, int64_t since_ms, int limit, arrival_cb cb, void *arg);

	/* Instance time billed (launch to termination, or now) and job run
	 * time of finished jobs, both since since_ms. */
	int (*usage)(struct store *, int64_t since_ms, int64_t now_ms, int64_t *instance_ms,
		     int64_t *job_ms);

	int (*instance_insert)(struct store *, struct instance *inst); /* sets id */
	int (*instance_update)(struct store *, const struct instance *inst);
	int (*instance_get)(struct store *, int64_t id, struct instance *out);
	/* All instances but the terminated ones, or all of them. */
	int (*instance_list)(struct store *, int with_terminated, instance_cb cb, void *arg);
	int (*decision_insert)(struct store *, const struct decision *d);
	/* The newest `limit` decisions, newest first. */
	int (*decision_list)(struct store *, int limit, decision_cb cb, void *arg);

	int (*segment_open)(struct store *, const struct segment *seg);
	/* Ends the instance's open segment at end_ms, costed at usd_per_ms;
	 * *closed gets it. STORE_NOT_FOUND if none is open. */
	int (*segment_close)(struct store *, int64_t instance, int64_t end_ms, double usd_per_ms,
			     struct segment *closed);
	int (*job_add_cost)(struct store *, int64_t job, double usd);
	/* Adds delta's counts to the offer's; the last_* times are replaced
	 * when nonzero. */
	int (*offer_stat_add)(struct store *, const struct offer_stat *delta);
	int (*offer_stats)(struct store *, offer_stat_cb cb, void *arg);
	/* Segments that ended at or after since_ms, and the open ones. */
	int (*ledger)(struct store *, int64_t since_ms, ledger_cb cb, void *arg);

	void (*close)(struct store *);
};

struct store {
	const struct store_ops *ops;
	char errmsg[512];
};

/* Opens (creating if needed) ebb.db in dir and migrates it. NULL on error,
 * with the reason in err. */
struct store *store_sqlite_open(const char *dir, char *err, size_t errsize);

#endif
