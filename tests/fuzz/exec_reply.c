/* The exec provider's replies (provider/exec_reply.h): a program's
 * standard output, read as a launch's reply (first byte even) or a
 * list's (odd). A reply is refused with a reason, or gives a launch
 * result with a ref and a data object within their bounds, or list items
 * with a ref and a known state. */
#include "provider/exec_reply.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct exec_result r = {0};
	char why[300];
	json_t *reply, *item;
	size_t k;

	if (size == 0)
		return 0;
	r.out = fuzz_string(data + 1, size - 1);
	r.out_len = size - 1;
	why[0] = '\0';
	reply = exec_reply("prog", data[0] & 1 ? "list" : "launch", &r, why, sizeof why);
	if (!reply) {
		FUZZ_ASSERT(why[0]);
	} else if (!(data[0] & 1)) {
		struct launch_result res = {0};
		exec_launch_reply("prog", reply, &res);
		FUZZ_ASSERT(res.ok ? res.ref[0] && !res.error[0] : res.error[0] != '\0');
		if (res.ok && res.data[0]) {
			json_t *d = json_loads(res.data, 0, NULL);
			FUZZ_ASSERT(json_is_object(d));
			json_decref(d);
		}
	} else {
		json_array_foreach(json_object_get(reply, "instances"), k, item) {
			struct provider_item it;
			why[0] = '\0';
			if (exec_list_item("prog", item, &it, why, sizeof why) != 0) {
				FUZZ_ASSERT(why[0]);
				continue;
			}
			FUZZ_ASSERT(it.ref[0] && strlen(it.ref) <= 255 && !(it.terminating && it.stopped));
		}
	}
	json_decref(reply);
	free(r.out);
	return 0;
}
