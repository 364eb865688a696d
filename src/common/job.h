/* The job: what a client submits, what the store keeps, what a worker runs. */
#ifndef EBB_JOB_H
#define EBB_JOB_H

#include <stdint.h>

#include "common/config.h"
#include "common/jsonout.h"

enum job_state {
	JOB_QUEUED,
	JOB_DELAYED,
	JOB_LEASED,
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_DEAD,
	JOB_CANCELLED,
	JOB_NSTATES
};

#define JOB_CHECKPOINT_MAX (64 * 1024)
#define JOB_KEY_MAX 256
/* The longest estimate a submitter may give (est_s): serve's API and the
 * simulator's traces take the same. */
#define JOB_EST_MAX_S (30 * 86400LL)

struct job {
	int64_t id;
	enum job_state state;
	char type[CONF_NAME_MAX + 1];
	char lane[CONF_NAME_MAX + 1];
	char team[CONF_NAME_MAX + 1];
	int lane_rank;
	int priority;
	/* JSON texts from job_stored_json(), or NULL */
	char *command; /* an array of strings: argv */
	char *payload; /* any value */
	char *labels;  /* an array of strings the worker must offer */
	int gpus;
	int min_vram_gb;
	int64_t items;
	int64_t timeout_s;
	int64_t est_s; /* the submitter's estimate of the run time; 0: none */
	int max_attempts;
	int attempts; /* leases handed out that counted */
	int64_t run_at_ms;
	int64_t created_ms;
	int64_t updated_ms;
	int64_t finished_ms;
	int64_t started_ms; /* the current or last lease began */
	char *idem_key;
	int64_t idem_hash;
	/* The lease: a fencing token that grows with every lease of this job. */
	int64_t lease_token;
	char worker[CONF_NAME_MAX + 1];
	int64_t instance; /* the instance the lease runs on; 0: none ebb launched */
	int64_t lease_expires_ms;
	int64_t lease_ms;
	char *checkpoint;
	int64_t items_done;
	char *error;
	char *result; /* JSON text as job_stored_json() writes it, or NULL */
	double cost;         /* USD of the instance time its runs used */
	int64_t items_start; /* items_done when the current run began */
	int64_t items_lost;  /* items redone after reclaims */
	int interruptions;   /* runs ended by a reclaim, not counted as attempts */
	/* The state the store holds for this job: set when it is read or
	 * written, so an update knows what it changes. */
	enum job_state stored_state;
	int64_t stored_run_ms; /* job_run_ms() of the job as the store holds it */
	/* Order within a lane and priority, before the id: smaller first. */
	int64_t seq;
};

const char *job_state_name(enum job_state s);
int job_state_parse(const char *name); /* -1: unknown */
int job_state_terminal(enum job_state s);
/* The run time a finished job counts for (succeeded, failed or dead,
 * after a start): finished - started; 0 for any other. */
int64_t job_run_ms(const struct job *job);

void job_free(struct job *job);
/* Replaces *dst with a copy of src (NULL stays NULL). */
void job_set_str(char **dst, const char *src);

/* A submitted command, payload, labels or result as the job keeps it: the
 * text a reply carries, so that replies copy it (reals to the 13 digits of
 * JSON_REPLY_FLAGS). NULL for an absent or null value. */
char *job_stored_json(json_t *v);

/* The API's view of a job: always has "id" and "state". Written as the
 * member key of o (NULL: an element or the whole text). */
void job_write_json(struct jsonout *o, const char *key, const struct job *job);
/* The same with one more string member, held: why a queued job waits for
 * its team (serve/team_state.h); NULL for none. */
void job_write_json_held(struct jsonout *o, const char *key, const struct job *job, const char *held);
/* The job alone as a reply's text (jsonout_finish). */
char *job_json_text(const struct job *job);

#endif
