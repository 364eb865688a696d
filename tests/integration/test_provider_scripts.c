/* Contract tests of the programs in providers/ (aws-ec2, gcp, runpod,
 * kubernetes): each runs against stand-ins for its cloud's CLI
 * (tests/providers/bin/: aws, gcloud, kubectl, curl), put first on PATH,
 * which record every call and answer with the shapes and error messages
 * of the provider's published documentation. They check a program against
 * the exec contract (docs/PROVIDERS.md) and the documented interface of
 * its cloud, not against a cloud: what a real call does is not tested
 * here.
 *
 * Every test runs once per program, from the table below; one more runs
 * shellcheck on the programs and the stand-ins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The worker token of every launch: no recorded argument may hold it. */
#define TOKEN "tok-4f2a9c-secret"
/* [provider] worker_cacert's text, as the message carries it, and as JSON
 * writes it. */
#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBfTCCASOgAwIBAgIUTEST\n-----END CERTIFICATE-----\n"
#define CA_PEM_JSON "-----BEGIN CERTIFICATE-----\\nMIIBfTCCASOgAwIBAgIUTEST\\n-----END CERTIFICATE-----\\n"

struct program {
	const char *name;        /* providers/NAME */
	const char *machine;     /* offer.machine of its launches */
	const char *settings[5]; /* its environment, NULL-terminated */
	const char *required;    /* the setting launch names when it is missing */
	const char *payload;     /* what its stand-in keeps of a launch (STANDIN_DIR/payload) */
	/* In the recorded calls of a launch: always, on demand only, spot only. */
	const char *launch[8], *ondemand[3], *spot[4];
	const char *payload_has[6]; /* what the launch sends holds these */
	const char *cacert_has[3];  /* and these, when the message has a CA */
	const char *ref;            /* the stand-in's name for what it launched */
	const char *no_capacity[7]; /* scenarios of no capacity: exit 75 */
	const char *error;          /* a scenario of another error */
	const char *error_line;     /* the last line of standard error then */
	const char *by_ref[3];      /* in the calls of a terminate with a ref */
	const char *by_tag[3];      /* in the calls of one without */
	const char *gone;           /* the scenario of an instance already gone */
	const char *list_call;      /* in the call of list */
	const char *listed;         /* list's instances for the stand-in's answer */
};

static const struct program aws = {
	.name = "aws-ec2",
	.machine = "g5.xlarge",
	.settings = {"EBB_AWS_CONFIG=/nonexistent", "EBB_AWS_AMI=ami-0abcdef1234567890", "EBB_AWS_REGION=us-east-1"},
	.required = "EBB_AWS_AMI",
	.payload = "user-data",
	.launch = {"aws ec2 run-instances --region us-east-1 ", "--image-id ami-0abcdef1234567890",
		   "--instance-type g5.xlarge", "--instance-initiated-shutdown-behavior terminate",
		   "ResourceType=instance,Tags=[{Key=ebb:tag,Value=ebb},{Key=ebb:instance,Value=17},{Key=Name,Value=ebb-ebb-17}]",
		   "--user-data file://"},
	.spot = {"--instance-market-options MarketType=spot,SpotOptions={SpotInstanceType=one-time,"
		 "InstanceInterruptionBehavior=terminate}"},
	.payload_has = {"umask 077", "EBB_TOKEN=\"" TOKEN "\"", "--notice-url aws\"",
			"systemctl start --no-block ebb-worker.service", "cat >/etc/ebb/worker.env"},
	.cacert_has = {"cat >/etc/ebb/ca.pem <<'EBB_CA_PEM'\n" CA_PEM "EBB_CA_PEM\n", "EBB_CACERT=\"/etc/ebb/ca.pem\""},
	.ref = "i-0123456789abcdef0",
	.no_capacity = {"InsufficientInstanceCapacity", "InsufficientCapacity", "SpotMaxPriceTooLow",
			"MaxSpotInstanceCountExceeded", "Unsupported", "VcpuLimitExceeded"},
	.error = "UnauthorizedOperation",
	.error_line = "An error occurred (UnauthorizedOperation) when calling the RunInstances operation: You are "
		      "not authorized to perform this operation.",
	.by_ref = {"aws ec2 terminate-instances --region us-east-1 --instance-ids i-0123456789abcdef0"},
	.by_tag = {"aws ec2 describe-instances --region us-east-1 --filters Name=tag:ebb:tag,Values=ebb "
		   "Name=tag:ebb:instance,Values=17",
		   "aws ec2 terminate-instances --region us-east-1 --instance-ids i-0aaaaaaaaaaaaaaa1 "},
	.gone = "InvalidInstanceID.NotFound",
	.list_call = "aws ec2 describe-instances --region us-east-1 --filters Name=tag:ebb:tag,Values=ebb ",
	.listed = "[{\"ref\": \"i-0aaaaaaaaaaaaaaa1\", \"instance\": 17, \"state\": \"running\"},"
		  " {\"ref\": \"i-0aaaaaaaaaaaaaaa2\", \"instance\": 9, \"state\": \"pending\"},"
		  " {\"ref\": \"i-0aaaaaaaaaaaaaaa3\", \"instance\": 5, \"state\": \"terminating\"},"
		  " {\"ref\": \"i-0aaaaaaaaaaaaaaa4\", \"instance\": 4, \"state\": \"stopped\"},"
		  " {\"ref\": \"i-0aaaaaaaaaaaaaaa6\", \"instance\": null, \"state\": \"running\"}]",
};

static const struct program gcp = {
	.name = "gcp",
	.machine = "n1-standard-8+nvidia-tesla-t4",
	.settings = {"EBB_GCP_CONFIG=/nonexistent", "EBB_GCP_ZONE=us-central1-a", "EBB_GCP_IMAGE_FAMILY=ebb-worker",
		     "EBB_GCP_PROJECT=p"},
	.required = "EBB_GCP_ZONE",
	.payload = "user-data",
	.launch = {"gcloud compute instances create ebb-ebb-17 --zone=us-central1-a --machine-type=n1-standard-8 ",
		   "--maintenance-policy=TERMINATE", "--labels=ebb-tag=ebb,ebb-instance=17",
		   "--accelerator=type=nvidia-tesla-t4,count=1", "--image-family=ebb-worker", "--project=p",
		   "--metadata-from-file=user-data=", ",startup-script="},
	.spot = {"--provisioning-model=SPOT --instance-termination-action=DELETE"},
	.payload_has = {"umask 077", "EBB_TOKEN=\"" TOKEN "\"", "--notice-url gcp\"",
			"systemctl start --no-block ebb-worker.service", "cat >/etc/ebb/worker.env"},
	.cacert_has = {"cat >/etc/ebb/ca.pem <<'EBB_CA_PEM'\n" CA_PEM "EBB_CA_PEM\n", "EBB_CACERT=\"/etc/ebb/ca.pem\""},
	.ref = "ebb-ebb-17",
	.no_capacity = {"ZONE_RESOURCE_POOL_EXHAUSTED", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", "QUOTA_EXCEEDED"},
	.error = "permission",
	.error_line = "ERROR: (gcloud.compute.instances.create) Could not fetch resource: Required "
		      "'compute.instances.create' permission for 'projects/p/zones/us-central1-a/instances/ebb-ebb-17'",
	.by_ref = {"gcloud compute instances delete ebb-ebb-17 --zone=us-central1-a --project=p --quiet"},
	.by_tag = {"gcloud compute instances list --project=p --filter=labels.ebb-tag=ebb AND labels.ebb-instance=17",
		   "gcloud compute instances delete ebb-ebb-17 --zone=us-central1-a --project=p --quiet"},
	.gone = "not-found",
	.list_call = "gcloud compute instances list --project=p --filter=labels.ebb-tag=ebb --format=json",
	.listed = "[{\"ref\": \"ebb-ebb-17\", \"instance\": 17, \"state\": \"running\"},"
		  " {\"ref\": \"ebb-ebb-9\", \"instance\": 9, \"state\": \"pending\"},"
		  " {\"ref\": \"ebb-ebb-8\", \"instance\": 8, \"state\": \"pending\"},"
		  " {\"ref\": \"ebb-ebb-5\", \"instance\": 5, \"state\": \"stopped\"},"
		  " {\"ref\": \"ebb-ebb-4\", \"instance\": 4, \"state\": \"stopped\"},"
		  " {\"ref\": \"ebb-ebb-by-hand\", \"instance\": null, \"state\": \"running\"}]",
};

static const struct program runpod = {
	.name = "runpod",
	.machine = "NVIDIA GeForce RTX 4090",
	.settings = {"EBB_RUNPOD_CONFIG=/nonexistent", "EBB_RUNPOD_API_KEY=rpa_KEY0123", "EBB_RUNPOD_IMAGE=me/ebb:1"},
	.required = "EBB_RUNPOD_IMAGE",
	.payload = "body",
	.launch = {"curl -sS -X POST -H @", " https://rest.runpod.io/v1/pods ", "--data-binary @"},
	.ondemand = {"\"interruptible\": false"},
	.spot = {"\"interruptible\": true"},
	.payload_has = {"\"gpuTypeIds\": [\n    \"NVIDIA GeForce RTX 4090\"\n  ]", "\"gpuCount\": 1",
			"\"EBB_TOKEN\": \"" TOKEN "\"", "\"name\": \"ebb-ebb-17\"", "curl -fsS -X DELETE",
			"\"EBB_WORKER_ARGS\": \"--server https://ebb.example.com:7070 --instance 17 "},
	.cacert_has = {"\"EBB_CACERT_PEM\": \"" CA_PEM_JSON "\""},
	.ref = "xedezhzb9la3ye",
	.no_capacity = {"no-instances", "no-longer-any", "no-resources"},
	.error = "balance",
	.error_line = "HTTP 500: create pod: Your account balance is too low to rent a pod. Please add funds to "
		      "your account.",
	.by_ref = {"curl -sS -X DELETE ", " https://rest.runpod.io/v1/pods/xedezhzb9la3ye"},
	.by_tag = {" https://rest.runpod.io/v1/pods?name=ebb-ebb-17", "-X DELETE ",
		   " https://rest.runpod.io/v1/pods/p17aaaaaaaaaaa"},
	.gone = "not-found",
	.list_call = "curl -sS -X GET ",
	.listed = "[{\"ref\": \"p17aaaaaaaaaaa\", \"instance\": 17, \"state\": \"running\"},"
		  " {\"ref\": \"p9aaaaaaaaaaaa\", \"instance\": 9, \"state\": \"running\"},"
		  " {\"ref\": \"p5aaaaaaaaaaaa\", \"instance\": 5, \"state\": \"stopped\"}]",
};

static const struct program kubernetes = {
	.name = "kubernetes",
	.machine = "g5.xlarge",
	.settings = {"EBB_K8S_CONFIG=/nonexistent", "EBB_K8S_IMAGE=me/ebb:1", "EBB_K8S_NAMESPACE=gpu",
		     "EBB_K8S_SPOT_SELECTOR=karpenter.sh/capacity-type=spot"},
	.required = "EBB_K8S_IMAGE",
	.payload = "stdin",
	.launch = {"kubectl --namespace=gpu create -f - -o json"},
	.spot = {"\"karpenter.sh/capacity-type\": \"spot\""},
	.payload_has = {"\"EBB_TOKEN\": \"" TOKEN "\"", "\"nvidia.com/gpu\": 1", "\"restartPolicy\": \"Never\"",
			"\"node.kubernetes.io/instance-type\": \"g5.xlarge\"", "\"terminationGracePeriodSeconds\": 90",
			"\"key\": \"nvidia.com/gpu\",\n            \"operator\": \"Exists\""},
	.cacert_has = {"\"EBB_CACERT_PEM\": \"" CA_PEM_JSON "\""},
	.ref = "ebb-ebb-17",
	.no_capacity = {"quota"},
	.error = "unauthorized",
	.error_line = "error: You must be logged in to the server (Unauthorized)",
	.by_ref = {"kubectl --namespace=gpu delete pod/ebb-ebb-17 secret/ebb-ebb-17 --ignore-not-found --wait=false"},
	.by_tag = {"kubectl --namespace=gpu delete pod,secret -l ebb.tag=ebb,ebb.instance=17 --ignore-not-found"},
	.gone = "not-found",
	.list_call = "kubectl --namespace=gpu get pods -l ebb.tag=ebb -o json",
	.listed = "[{\"ref\": \"ebb-ebb-17\", \"instance\": 17, \"state\": \"running\"},"
		  " {\"ref\": \"ebb-ebb-9\", \"instance\": 9, \"state\": \"pending\"},"
		  " {\"ref\": \"ebb-ebb-5\", \"instance\": 5, \"state\": \"terminating\"},"
		  " {\"ref\": \"ebb-ebb-4\", \"instance\": 4, \"state\": \"stopped\"},"
		  " {\"ref\": \"ebb-ebb-3\", \"instance\": 3, \"state\": \"stopped\"},"
		  " {\"ref\": \"ebb-ebb-2\", \"instance\": 2, \"state\": \"running\"},"
		  " {\"ref\": \"ebb-ebb-by-hand\", \"instance\": null, \"state\": \"running\"}]",
};

static const char *src(void)
{
	const char *s = getenv("EBB_SRC");
	return s && *s ? s : ".";
}

/* A launch message of the contract for p, on market, with the worker's
 * options last (after those serve always gives, and a config's on_exit,
 * which a program replaces) and cacert_pem when with_ca. */
static const char *launch_msg_with(const struct program *p, const char *market, const char *last, int with_ca)
{
	return harness_fmt(
		"{\"version\": 1, \"call\": \"launch\", \"tag\": \"ebb\", \"instance\": 17, \"market\": \"%s\","
		" \"offer\": {\"name\": \"o\", \"command\": \"\", \"machine\": \"%s\", \"gpu\": \"A10G\", \"gpus\": 1,"
		" \"vram_gb\": 24, \"price_ondemand\": 1.01, \"price_spot\": 0.35, \"boot_s\": 180},"
		" \"worker\": {\"argv\": [\"ebb\", \"worker\", \"--server\", \"https://ebb.example.com:7070\","
		" \"--instance\", \"17\", \"--gpus\", \"1\", \"--vram\", \"24\", \"--orphan-timeout\", \"300000ms\","
		" \"--notice-url\", \"https://ebb.example.com:7070/v1/fleet/17/notice\", \"--on-exit\", \"shutdown -h now\"%s],"
		" \"env\": {\"EBB_TOKEN\": \"" TOKEN "\", \"EBB_SERVER\": \"https://ebb.example.com:7070\"},"
		" \"server_url\": \"https://ebb.example.com:7070\", \"idle_timeout_s\": 600, \"orphan_timeout_s\": 300,"
		" \"notice_url\": \"https://ebb.example.com:7070/v1/fleet/17/notice\"%s}}",
		market, p->machine, last, with_ca ? ", \"cacert_pem\": \"" CA_PEM_JSON "\"" : "");
}

static const char *launch_msg(const struct program *p, const char *market)
{
	return launch_msg_with(p, market, "", 0);
}

static const char *terminate_msg(const char *ref)
{
	return harness_fmt("{\"version\": 1, \"call\": \"terminate\", \"tag\": \"ebb\", \"instance\": 17, \"ref\": %s,"
			   " \"data\": null, \"offer\": {\"name\": \"o\"}}",
			   ref);
}

#define LIST_MSG "{\"version\": 1, \"call\": \"list\", \"tag\": \"ebb\"}"

/* Where the stand-ins of the running test write: its own directory. */
static char standin_log[4200], standin_dir[4200];

/* Runs providers/NAME [--dry-run] CALL with msg on its standard input,
 * the stand-ins first on PATH answering scenario, and p's settings unless
 * bare. */
static int run(struct harness_run *r, const struct program *p, const char *scenario, int dry_run, const char *call,
	       const char *msg, int bare)
{
	const char *dir = harness_tmpdir(), *argv[4], *env[12];
	char path[8400], program[4200], log[4300], keep[4300], scen[200];
	int n = 0, e = 0;

	snprintf(standin_log, sizeof standin_log, "%s/calls", dir);
	snprintf(standin_dir, sizeof standin_dir, "%s", dir);
	harness_write_file(standin_log, "");
	snprintf(program, sizeof program, "%s/providers/%s", src(), p->name);
	argv[n++] = program;
	if (dry_run)
		argv[n++] = "--dry-run";
	argv[n++] = call;
	argv[n] = NULL;
	snprintf(path, sizeof path, "PATH=%s/tests/providers/bin:%s", src(), getenv("PATH"));
	snprintf(log, sizeof log, "STANDIN_LOG=%s", standin_log);
	snprintf(keep, sizeof keep, "STANDIN_DIR=%s", standin_dir);
	snprintf(scen, sizeof scen, "STANDIN_SCENARIO=%s", scenario);
	env[e++] = path;
	env[e++] = log;
	env[e++] = keep;
	env[e++] = scen;
	for (int k = 0; !bare && p->settings[k]; k++)
		env[e++] = p->settings[k];
	/* A key file in /etc/ebb would make the bare runs less bare. */
	env[e++] = "EBB_RUNPOD_API_KEY_FILE=/nonexistent";
	env[e] = NULL;
	return harness_exec(r, argv, msg, env);
}

/* The recorded calls, one a line. */
static char *calls(void)
{
	char *text = harness_read_file(standin_log, NULL);
	return text ? text : strdup("");
}

static void assert_no_call(void)
{
	char *log = calls();

	if (*log)
		fail_msg("no call was to be made, and these were:\n%s", log);
	free(log);
}

/* What the stand-ins kept as NAME. */
static char *kept(const char *name)
{
	char *text = harness_read_file(harness_fmt("%s/%s", standin_dir, name), NULL);
	if (!text)
		fail_msg("the stand-in kept no %s", name);
	return text;
}

/* The last line of text, in one of harness_fmt's buffers. */
static const char *last_line(const char *text)
{
	size_t n = strlen(text);
	const char *p;

	while (n > 0 && text[n - 1] == '\n')
		n--;
	for (p = text + n; p > text && p[-1] != '\n'; p--)
		;
	return harness_fmt("%.*s", (int)(text + n - p), p);
}

static void assert_lacks(const char *haystack, const char *needle)
{
	if (strstr(haystack, needle))
		fail_msg("'%s' should not be in:\n%s", needle, haystack);
}

static void assert_each(const char *haystack, const char *const *needles, size_t max)
{
	for (size_t k = 0; k < max && needles[k]; k++)
		assert_contains(haystack, needles[k]);
}

/* Each of needles is in the calls or in what they sent. */
static void assert_sent(const char *log, const char *payload, const char *const *needles, size_t max)
{
	for (size_t k = 0; k < max && needles[k]; k++) {
		if (!strstr(log, needles[k]) && !strstr(payload, needles[k]))
			fail_msg("'%s' is in no call:\n%s\nnor in what they sent:\n%s", needles[k], log, payload);
	}
}

/* A reply of the contract: version 1, and ref when want_ref. */
static void assert_reply(const struct harness_run *r, const char *want_ref)
{
	json_t *reply = harness_json(r->out);

	assert_int(JINT(reply, "version"), 1);
	if (want_ref)
		assert_string_equal(JSTR(reply, "ref"), want_ref);
	json_decref(reply);
}

static void launch(const struct program *p, const char *market, const char *const *market_has,
		   const char *const *market_lacks)
{
	struct harness_run r;
	char *log, *payload;

	run(&r, p, "ok", 0, "launch", launch_msg(p, market), 0);
	if (r.status != 0)
		fail_msg("%s launch: exit %d: %s", p->name, r.status, r.err);
	assert_reply(&r, p->ref);
	log = calls();
	payload = kept(p->payload);
	/* The launch shows in the calls, or in what a call sent. */
	assert_sent(log, payload, p->launch, sizeof p->launch / sizeof *p->launch);
	assert_sent(log, payload, market_has, 4);
	for (size_t k = 0; k < 4 && market_lacks[k]; k++) {
		assert_lacks(log, market_lacks[k]);
		assert_lacks(payload, market_lacks[k]);
	}
	assert_each(payload, p->payload_has, sizeof p->payload_has / sizeof *p->payload_has);
	/* The token goes where only the instance reads it: on no command
	 * line, here or there. */
	assert_lacks(log, TOKEN);
	assert_lacks(payload, "--token");
	/* The worker's end is the machine's (its unit powers it off) or the
	 * pod's: the config's on_exit is not carried, and with no CA in the
	 * message there is none on the instance. */
	assert_lacks(payload, "shutdown -h now");
	assert_lacks(payload, "EBB_CACERT");
	free(log);
	free(payload);
	harness_run_free(&r);
}

static void launch_on_demand(void **state)
{
	const struct program *p = *state;
	launch(p, "on-demand", p->ondemand, p->spot);
}

static void launch_spot(void **state)
{
	const struct program *p = *state;
	launch(p, "spot", p->spot, p->ondemand);
}

/* worker.cacert_pem reaches the worker: a file of the machine for
 * EBB_CACERT, or the container's EBB_CACERT_PEM, which its entrypoint
 * writes to one. */
static void cacert_reaches_the_worker(void **state)
{
	const struct program *p = *state;
	struct harness_run r;
	char *payload;

	run(&r, p, "ok", 0, "launch", launch_msg_with(p, "spot", "", 1), 0);
	if (r.status != 0)
		fail_msg("%s launch: exit %d: %s", p->name, r.status, r.err);
	payload = kept(p->payload);
	assert_each(payload, p->cacert_has, sizeof p->cacert_has / sizeof *p->cacert_has);
	free(payload);
	harness_run_free(&r);
}

/* EBB_WORKER_ARGS is split at spaces, with no quoting: a worker option
 * with a space cannot be carried, and the launch says so rather than
 * start a worker with other options. */
static void worker_option_with_a_space_is_an_error(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	run(&r, p, "ok", 0, "launch", launch_msg_with(p, "spot", ", \"--labels\", \"a b\"", 0), 0);
	assert_int(r.status, 1);
	assert_contains(last_line(r.err), "the worker option \"a b\" has a character that EBB_WORKER_ARGS cannot carry");
	assert_no_call();
	harness_run_free(&r);
}

/* A cluster whose spot nodes the settings do not name has no spot
 * capacity: no capacity (75), so that ebb launches on demand, and no
 * pod. */
static void kubernetes_spot_without_its_selector_is_no_capacity(void **state)
{
	struct program bare = kubernetes;
	struct harness_run r;

	(void)state;
	bare.settings[3] = NULL;
	run(&r, &bare, "ok", 0, "launch", launch_msg(&bare, "spot"), 0);
	assert_int(r.status, 75);
	assert_contains(last_line(r.err), "EBB_K8S_SPOT_SELECTOR");
	assert_no_call();
	harness_run_free(&r);
}

static void no_capacity_exits_75(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	for (size_t k = 0; k < sizeof p->no_capacity / sizeof *p->no_capacity && p->no_capacity[k]; k++) {
		run(&r, p, p->no_capacity[k], 0, "launch", launch_msg(p, "spot"), 0);
		if (r.status != 75)
			fail_msg("%s, %s: exit %d, not 75: %s", p->name, p->no_capacity[k], r.status, r.err);
		assert_true(strlen(last_line(r.err)) > 0);
		harness_run_free(&r);
	}
}

static void other_error_exits_1_with_its_message(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	run(&r, p, p->error, 0, "launch", launch_msg(p, "on-demand"), 0);
	if (r.status != 1)
		fail_msg("%s, %s: exit %d, not 1: %s", p->name, p->error, r.status, r.err);
	assert_contains(last_line(r.err), p->error_line);
	harness_run_free(&r);
}

static void missing_setting_is_named(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	run(&r, p, "ok", 0, "launch", launch_msg(p, "spot"), 1);
	assert_int(r.status, 1);
	assert_contains(last_line(r.err), p->required);
	assert_no_call();
	harness_run_free(&r);
}

/* A terminate of ref (JSON: a string, or null) on scenario: it succeeds,
 * and its calls hold want. */
static void terminate(const struct program *p, const char *scenario, const char *ref, const char *const *want)
{
	struct harness_run r;
	char *log;

	run(&r, p, scenario, 0, "terminate", terminate_msg(ref), 0);
	if (r.status != 0)
		fail_msg("%s terminate, %s: exit %d: %s", p->name, scenario, r.status, r.err);
	log = calls();
	assert_each(log, want, 3);
	free(log);
	harness_run_free(&r);
}

static void terminate_by_ref(void **state)
{
	const struct program *p = *state;
	terminate(p, "ok", harness_fmt("\"%s\"", p->ref), p->by_ref);
}

static void terminate_by_tag(void **state)
{
	const struct program *p = *state;
	terminate(p, "ok", "null", p->by_tag);
}

static void terminate_gone_succeeds(void **state)
{
	const struct program *p = *state;
	terminate(p, p->gone, harness_fmt("\"%s\"", p->ref), p->by_ref);
}

static void list_maps_states(void **state)
{
	const struct program *p = *state;
	struct harness_run r;
	json_t *reply, *want = harness_json(p->listed);
	char *log, *got;

	run(&r, p, "ok", 0, "list", LIST_MSG, 0);
	if (r.status != 0)
		fail_msg("%s list: exit %d: %s", p->name, r.status, r.err);
	reply = harness_json(r.out);
	assert_int(JINT(reply, "version"), 1);
	if (!json_equal(json_object_get(reply, "instances"), want)) {
		got = json_dumps(json_object_get(reply, "instances"), JSON_COMPACT);
		fail_msg("%s list: got %s\nwant %s", p->name, got, p->listed);
	}
	log = calls();
	assert_contains(log, p->list_call);
	free(log);
	json_decref(reply);
	json_decref(want);
	harness_run_free(&r);
}

static void other_version_exits_2(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	run(&r, p, "ok", 0, "list", "{\"version\": 2, \"call\": \"list\", \"tag\": \"ebb\"}", 0);
	assert_int(r.status, 2);
	assert_contains(last_line(r.err), "version 2");
	assert_no_call();
	harness_run_free(&r);
	run(&r, p, "ok", 0, "launch", "not json", 0);
	assert_int(r.status, 2);
	assert_contains(last_line(r.err), "not a JSON object");
	harness_run_free(&r);
}

static void dry_run_calls_nothing(void **state)
{
	const struct program *p = *state;
	const char *const cli[] = {"aws ec2", "gcloud compute", "curl -sS", "kubectl"};
	struct harness_run r;
	int shown = 0;

	run(&r, p, "ok", 1, "launch", launch_msg(p, "spot"), 0);
	if (r.status != 0)
		fail_msg("%s --dry-run launch: exit %d: %s", p->name, r.status, r.err);
	assert_reply(&r, NULL);
	for (size_t k = 0; k < sizeof cli / sizeof *cli; k++)
		shown += strstr(r.err, cli[k]) != NULL;
	assert_int(shown, 1);
	assert_lacks(r.err, TOKEN);
	harness_run_free(&r);
	run(&r, p, "ok", 1, "terminate", terminate_msg("null"), 0);
	assert_int(r.status, 0);
	harness_run_free(&r);
	run(&r, p, "ok", 1, "list", LIST_MSG, 0);
	assert_int(r.status, 0);
	assert_reply(&r, NULL);
	harness_run_free(&r);
	assert_no_call();
}

static void garbage_is_an_error(void **state)
{
	const struct program *p = *state;
	struct harness_run r;

	run(&r, p, "garbage", 0, "launch", launch_msg(p, "spot"), 0);
	assert_int(r.status, 1);
	assert_contains(last_line(r.err), "not what the API documents");
	assert_string_equal(r.out, "");
	harness_run_free(&r);
	run(&r, p, "garbage", 0, "list", LIST_MSG, 0);
	assert_int(r.status, 1);
	assert_string_equal(r.out, "");
	harness_run_free(&r);
}

/* shellcheck finds nothing in the programs, their stand-ins, those of
 * the boot test that run what they launch, the tests that boot, the
 * image builder and the container's entrypoint. */
static void shellcheck_is_clean(void **state)
{
	const char *argv[] = {"sh", "-c",
			      "cd \"$1\" && shellcheck -x providers/* tests/providers/standin.sh tests/providers/bin/*"
			      " tests/checks.sh tests/boot/*.sh tests/boot/bin/* tests/deploy/*.sh images/*.sh"
			      " packaging/worker-entrypoint",
			      "sh", src(), NULL};
	struct harness_run r;

	(void)state;
	harness_exec(&r, argv, NULL, NULL);
	if (r.status != 0)
		fail_msg("shellcheck (exit %d):\n%s%s", r.status, r.out, r.err);
	harness_run_free(&r);
}

/* The test fn once per program, named "fn(program)". */
#define ONE(fn, p) {#fn "(" #p ")", fn, NULL, NULL, (void *)&p}
#define EACH(fn) ONE(fn, aws), ONE(fn, gcp), ONE(fn, runpod), ONE(fn, kubernetes)

int main(void)
{
	const struct CMUnitTest tests[] = {
		EACH(launch_on_demand),
		EACH(launch_spot),
		EACH(cacert_reaches_the_worker),
		EACH(worker_option_with_a_space_is_an_error),
		cmocka_unit_test(kubernetes_spot_without_its_selector_is_no_capacity),
		EACH(no_capacity_exits_75),
		EACH(other_error_exits_1_with_its_message),
		EACH(missing_setting_is_named),
		EACH(terminate_by_ref),
		EACH(terminate_by_tag),
		EACH(terminate_gone_succeeds),
		EACH(list_maps_states),
		EACH(other_version_exits_2),
		EACH(dry_run_calls_nothing),
		EACH(garbage_is_an_error),
		cmocka_unit_test(shellcheck_is_clean),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
