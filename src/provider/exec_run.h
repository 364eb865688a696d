/* Running a provider program from serve's loop: one process per call,
 * its message written to its standard input, its standard output and the
 * last line of its standard error collected, killed (its whole process
 * group) past a timeout, at most so many at once, the rest waiting their
 * turn in order. The exec provider's (exec.c) engine room. */
#ifndef EBB_EXEC_RUN_H
#define EBB_EXEC_RUN_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

/* How a run ended. */
struct exec_result {
	int status;         /* exit status; 128 + signal when killed */
	int timed_out;      /* killed past the timeout */
	char *out;          /* standard output, NUL-terminated (NULL: none) */
	size_t out_len;
	int out_too_long;   /* standard output went past EXEC_OUT_MAX */
	char err_line[300]; /* the last line of standard error, or why it could not start */
	int cancelled;      /* the runner is freed: the run was killed or never started */
};

#define EXEC_OUT_MAX (1 << 20)

/* done(arg, result): once, from the loop (or from exec_runner_free, with
 * result->cancelled set); the result lives until it returns. */
typedef void (*exec_done)(void *arg, const struct exec_result *r);

struct exec_runner;

struct exec_runner *exec_runner_new(struct event_base *base, int64_t timeout_ms, int concurrency);
/* Kills what runs and drops what waits, each told through its done with
 * cancelled set, so that it can free what it holds. */
void exec_runner_free(struct exec_runner *x);
/* Runs `program arg` with input on its standard input. 0, or -1 when out
 * of memory (done is not called). */
int exec_run(struct exec_runner *x, const char *program, const char *arg, const char *input, exec_done done,
	     void *done_arg);

#endif
