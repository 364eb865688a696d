/* GPUs shared by small services, the worker's part (docs/SCALING.md,
 * "GPUs shared by small services"): a job of a type serve's register
 * reply names in gpu_shares takes that part of one GPU, beside the other
 * shared jobs on it up to shares adding to 1 and, where the type says its
 * vram_gb and the worker its --vram-gb, memory adding to at most the
 * GPU's. Each runs in a runner told that GPU alone. Time-slicing: the
 * GPU's driver shares it; nothing keeps one job from another's memory. */
#include <string.h>

#include "common/log.h"
#include "worker/worker_internal.h"

/* Two shares that add to 1 in floating point (1/3 three times) fit. */
#define SLACK 1e-9

void share_read(struct worker *w, json_t *reply)
{
	json_t *shares = json_object_get(reply, "gpu_shares");

	json_decref(w->gpu_shares);
	w->gpu_shares = json_is_object(shares) ? json_incref(shares) : NULL;
}

double share_of(const struct worker *w, json_t *job, int64_t *vram_gb)
{
	json_t *t = json_object_get(w->gpu_shares, json_string_value(json_object_get(job, "type")));
	double s = json_number_value(json_object_get(t, "gpu_share"));

	if (vram_gb)
		*vram_gb = json_integer_value(json_object_get(t, "vram_gb"));
	return s > 0 && s < 1 ? s : 1;
}

/* The share and memory a GPU has left, shared or free: held by what
 * runs there and by the handlers that wait there, which keep their
 * memory on it. */
static double room(const struct worker *w, int g) { return w->gpu_job[g] == 0 ? 1 : 1 - w->gpu_shared[g]; }

static int64_t vram_left(const struct worker *w, int g) { return w->o->vram_gb - w->gpu_vram[g]; }

static int fits(const struct worker *w, int g, double share, int64_t vram_gb)
{
	return (w->gpu_job[g] == 0 || w->gpu_job[g] == GPU_SHARED) && share <= room(w, g) + SLACK &&
	       (w->o->vram_gb <= 0 || vram_gb <= vram_left(w, g));
}

int share_fit(const struct worker *w, double share, int64_t vram_gb)
{
	/* A GPU already shared first: whole ones stay free for whole jobs. */
	for (int g = 0; g < w->ngpus; g++)
		if (w->gpu_job[g] == GPU_SHARED && fits(w, g, share, vram_gb))
			return g;
	for (int g = 0; g < w->ngpus; g++)
		if (fits(w, g, share, vram_gb))
			return g;
	return -1;
}

int share_place(struct worker *w, double share, int64_t vram_gb)
{
	int g, best = share_fit(w, share, vram_gb);

	/* Leased where none fits (another serve's lease raced ours): the
	 * least used shared GPU, if any is shared. */
	for (g = 0; g < w->ngpus && best < 0; g++)
		if (w->gpu_job[g] == GPU_SHARED)
			best = g;
	for (; g < w->ngpus; g++)
		if (w->gpu_job[g] == GPU_SHARED && w->gpu_shared[g] < w->gpu_shared[best])
			best = g;
	if (best < 0)
		return -1;
	w->gpu_job[best] = GPU_SHARED;
	w->gpu_shared[best] += share;
	w->gpu_vram[best] += vram_gb;
	return best;
}

void share_release(struct worker *w, int g, double share, int64_t vram_gb)
{
	w->gpu_shared[g] -= share;
	w->gpu_vram[g] -= vram_gb;
	if (w->gpu_shared[g] < SLACK) { /* its last shared job ended: whole again */
		w->gpu_job[g] = 0;
		w->gpu_shared[g] = 0;
		w->gpu_vram[g] = 0;
	}
}

/* What the lease offers of a shared GPU: the share and memory that no
 * running job holds (a waiting handler's are stopped for a job that
 * needs them). */
static double offered(const struct worker *w, int g, int64_t *vram_left_gb)
{
	double idle = 0;
	int64_t idle_vram = 0;

	runners_idle_on(w, g, &idle, &idle_vram);
	*vram_left_gb = vram_left(w, g) + idle_vram;
	return room(w, g) + idle;
}

int share_only_waiting(const struct worker *w, int g)
{
	int64_t vram;

	return w->gpu_job[g] == GPU_SHARED && offered(w, g, &vram) > 1 - SLACK;
}

/* The shared GPU partly taken by running jobs with the most share left
 * (one that only waiting handlers hold is offered whole), or -1. */
static int roomiest(const struct worker *w, double *free_share, int64_t *vram_left_gb)
{
	int best = -1;

	for (int g = 0; g < w->ngpus; g++) {
		int64_t vram;
		double r = w->gpu_job[g] == GPU_SHARED ? offered(w, g, &vram) : 0;
		if (r > SLACK && r < 1 - SLACK && (best < 0 || r > *free_share)) {
			best = g;
			*free_share = r;
			*vram_left_gb = vram;
		}
	}
	return best;
}

int share_room(const struct worker *w)
{
	double r;
	int64_t vram;

	return roomiest(w, &r, &vram) >= 0;
}

void share_offer(const struct worker *w, json_t *body)
{
	double r;
	int64_t vram;

	if (roomiest(w, &r, &vram) < 0)
		return;
	json_object_set_new(body, "share_free", json_real(r));
	if (w->o->vram_gb > 0)
		json_object_set_new(body, "share_vram_gb", json_integer(vram > 0 ? vram : 0));
}
