/* See logs_follow.h. */
#include "cli/logs_follow.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/job.h"

/* How long one call waits for lines; serve's limit is 300 s. */
#define WAIT_S 30
/* Between two looks for the job's next attempt. */
#define NEXT_ATTEMPT_MS 1000

/* Prints the lines of a reply (under --json, the reply, a line each: the
 * first even without lines, so that an empty log is still a document):
 * how many. */
static size_t print_lines(struct cli *cli, json_t *reply, int first)
{
	json_t *lines = json_object_get(reply, "lines"), *l;
	size_t i;

	if (cli->json && (first || json_array_size(lines))) {
		char *text = json_dumps(reply, JSON_COMPACT);
		printf("%s\n", text ? text : "{}");
		free(text);
		lines = NULL;
	}
	json_array_foreach(lines, i, l) {
		const char *stream = json_string_value(json_object_get(l, "stream"));
		fprintf(stream && strcmp(stream, "stderr") == 0 ? stderr : stdout, "%s\n",
			json_string_value(json_object_get(l, "text")));
	}
	fflush(stdout);
	return json_array_size(json_object_get(reply, "lines"));
}

/* The job's state is final. -1 when the call failed. */
static int finished(struct cli *cli, int64_t job)
{
	char path[64];
	json_t *reply;
	int state, rc;

	snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)job);
	if (cli_call(cli, "GET", path, NULL, &reply) < 0)
		return -1;
	state = job_state_parse(json_string_value(json_object_get(reply, "state")));
	rc = state >= 0 && job_state_terminal((enum job_state)state);
	json_decref(reply);
	return rc;
}

int logs_follow(struct cli *cli, const struct logs_follow *f)
{
	int attempt = f->attempt, tail = f->tail;
	long long after = -1;

	for (int first = 1;; first = 0) {
		char path[160];
		json_t *reply;
		size_t n;
		int done, now;

		snprintf(path, sizeof path, "/v1/jobs/%lld/logs?after=%lld", (long long)f->job, after);
		if (attempt)
			snprintf(path + strlen(path), sizeof path - strlen(path), "&attempt=%d", attempt);
		if (tail)
			snprintf(path + strlen(path), sizeof path - strlen(path), "&tail=%d", tail);
		if (f->follow)
			snprintf(path + strlen(path), sizeof path - strlen(path), "&wait=%d", WAIT_S);
		if (cli_call(cli, "GET", path, NULL, &reply) < 0)
			return 1;
		n = print_lines(cli, reply, first);
		now = (int)json_integer_value(json_object_get(reply, "attempt"));
		done = json_is_true(json_object_get(reply, "done"));
		after = (long long)json_integer_value(json_object_get(reply, "next"));
		json_decref(reply);
		tail = 0;
		if (!attempt && now > 0 && f->follow)
			attempt = now; /* followed from here on, to its end */
		if (n > 0 && !(f->tail && !f->follow))
			continue; /* the next page */
		if (!f->follow || f->attempt)
			return 0;
		if (!done)
			continue;
		/* The attempt ended: the job's next, unless it has finished. */
		switch (finished(cli, f->job)) {
		case -1:
			return 1;
		case 1:
			return 0;
		}
		for (;;) {
			int latest;
			snprintf(path, sizeof path, "/v1/jobs/%lld/logs?tail=1", (long long)f->job);
			if (cli_call(cli, "GET", path, NULL, &reply) < 0)
				return 1;
			latest = (int)json_integer_value(json_object_get(reply, "attempt"));
			json_decref(reply);
			if (latest > attempt) {
				fprintf(stderr, "%s: job %lld: attempt %d\n", cli->name, (long long)f->job, latest);
				attempt = latest;
				after = -1;
				break;
			}
			switch (finished(cli, f->job)) {
			case -1:
				return 1;
			case 1:
				return 0;
			}
			poll(NULL, 0, NEXT_ATTEMPT_MS);
		}
	}
}
