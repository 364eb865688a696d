/* The lines a job writes on the worker's control fd (worker/control.h):
 * "progress N" and "checkpoint TOKEN N", each line as the worker cuts
 * them from what it reads. A line is refused, or read into a count that
 * serve's API takes (0 to 2^63-1) and, for a checkpoint, a token that
 * can travel to serve as a JSON string. */
#include "common/job.h"
#include "worker/control.h"

#include <jansson.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct control_line c;
		json_t *body;
		if (control_parse(line, &c) != 0)
			continue;
		FUZZ_ASSERT(c.items >= 0);
		FUZZ_ASSERT((c.kind == CONTROL_CHECKPOINT) == (c.token != NULL));
		if (c.kind != CONTROL_CHECKPOINT)
			continue;
		body = json_pack("{s:s, s:I}", "checkpoint", c.token, "items_done", (json_int_t)c.items);
		FUZZ_ASSERT(body && strlen(c.token) <= JOB_CHECKPOINT_MAX);
		json_decref(body);
	}
	free(text);
	return 0;
}
