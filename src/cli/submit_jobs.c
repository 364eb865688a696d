/* See submit_jobs.h. The whole file is read and checked before the first
 * call, so that a typo on line 900 does not leave 899 jobs queued and the
 * rest not. */
#include "cli/submit_jobs.h"

#include <errno.h>
#include <string.h>

/* The jobs of f, a JSON object a line (blank lines skipped), each with
 * defaults under it, and the line each came from: 0, or -1 after saying
 * which line is wrong. */
static int read_jobs(struct cli *cli, FILE *f, const char *path, json_t *defaults, json_t *jobs, json_t *lines)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int no = 0, rc = 0;

	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		json_error_t je;
		json_t *job;

		no++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		if (!(job = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je)) || !json_is_object(job)) {
			rc = cli_usage_error(cli, "%s:%d: expected a job (a JSON object) a line%s%s", path, no,
					     job ? "" : ": ", job ? "" : je.text);
			json_decref(job);
			break;
		}
		json_object_update_missing(job, defaults);
		json_array_append_new(jobs, job);
		json_array_append_new(lines, json_integer(no));
	}
	free(line);
	if (rc == 0 && ferror(f))
		rc = cli_usage_error(cli, "%s: %s", path, strerror(errno));
	return rc ? -1 : 0;
}

/* Sends jobs[from, from + n) and prints their results: the failures. */
static int send_batch(struct cli *cli, const char *path, json_t *jobs, json_t *lines, size_t from, size_t n,
		      int *failed)
{
	json_t *batch = json_array(), *reply = NULL, *result;
	size_t i;
	int status;

	for (i = from; i < from + n; i++)
		json_array_append(batch, json_array_get(jobs, i));
	status = cli_call(cli, "POST", "/v1/jobs", batch, &reply);
	json_decref(batch);
	if (status < 0)
		return -1;
	json_array_foreach(json_object_get(reply, "jobs"), i, result) {
		json_t *error = json_object_get(result, "error");
		if (cli->json) { /* JSON Lines, as the file: a script reads a job a line */
			json_dumpf(result, stdout, JSON_COMPACT | JSON_REAL_PRECISION(13));
			fputc('\n', stdout);
		} else if (!error) {
			printf("%lld\n", (long long)json_integer_value(json_object_get(result, "id")));
		}
		if (error) {
			(*failed)++;
			fprintf(stderr, "ebb submit: %s:%lld: %s\n", path,
				(long long)json_integer_value(json_array_get(lines, from + i)),
				json_string_value(json_object_get(error, "message")));
		}
	}
	json_decref(reply);
	return 0;
}

int submit_jobs(struct cli *cli, const char *path, json_t *defaults)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	json_t *jobs, *lines;
	int rc = 0, failed = 0;

	if (!f)
		return cli_usage_error(cli, "--jobs %s: %s", path, strerror(errno));
	jobs = json_array();
	lines = json_array();
	if (read_jobs(cli, f, path, defaults, jobs, lines) != 0)
		rc = 2;
	if (f != stdin)
		fclose(f);
	for (size_t i = 0; rc == 0 && i < json_array_size(jobs); i += SUBMIT_JOBS_PER_CALL) {
		size_t n = json_array_size(jobs) - i;
		if (send_batch(cli, path, jobs, lines, i, n < SUBMIT_JOBS_PER_CALL ? n : SUBMIT_JOBS_PER_CALL,
			       &failed) != 0)
			rc = 1;
	}
	json_decref(jobs);
	json_decref(lines);
	return rc ? rc : failed ? 1 : 0;
}
