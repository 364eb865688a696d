/* Policy specs for `ebb sim` and `ebb tune`: "NAME[:k=v,...]" (see spec.h).
 * ebb's knobs are [scaler] and [lane.NAME] keys, written SECTION.KEY; a
 * baseline's are its own, with the documented defaults of the tool it
 * stands for. */
#include "sim/spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "policy/settings.h"

/* A baseline's knob and the values it takes: a poll of 0 would poll for
 * ever at one instant, a keda target near 0 or an always-on fleet of a
 * billion would launch without end, a utilisation above 1 never occurs. */
struct knob {
	const char *name;
	enum { K_INT, K_SECONDS, K_NUMBER, K_OFFER, K_MARKET, K_PLACEMENT } type;
	size_t offset;
	double min, max; /* K_SECONDS in seconds */
};

#define P(field) offsetof(struct policy, field)
#define NEVER 1e9 /* seconds: 31 years */
static const struct knob always_on_knobs[] = {{"n", K_INT, P(n), 0, 100000}, {0}};
static const struct knob min1_knobs[] = {{"idle", K_SECONDS, P(idle_ms), 0, NEVER}, {0}};
static const struct knob util_knobs[] = {
	{"up", K_NUMBER, P(up), 0, 1}, {"down", K_NUMBER, P(down), 0, 1},
	{"window", K_SECONDS, P(window_ms), 0, NEVER}, {"poll", K_SECONDS, P(poll_ms), 1, NEVER}, {0}};
static const struct knob keda_knobs[] = {
	{"target", K_NUMBER, P(target), 1, 1e9}, {"poll", K_SECONDS, P(poll_ms), 1, NEVER},
	{"cooldown", K_SECONDS, P(cooldown_ms), 0, NEVER}, {"stabilize", K_SECONDS, P(stabilize_ms), 0, NEVER},
	{"placement", K_PLACEMENT, P(placement), 0, 0}, {0}};
static const struct knob no_knobs[] = {{0}};
static const struct knob common_knobs[] = {
	{"offer", K_OFFER, P(offer), 0, 0}, {"market", K_MARKET, P(market), 0, 0}, {0}};

struct kind {
	const char *name;
	enum policy_kind kind;
	const struct knob *knobs;
};

static const struct kind kinds[] = {
	{"ebb", POL_EBB, no_knobs},
	{"always-on", POL_ALWAYS_ON, always_on_knobs},
	{"min1", POL_MIN1, min1_knobs},
	{"util", POL_UTIL, util_knobs},
	{"keda", POL_KEDA, keda_knobs},
	{"clairvoyant", POL_CLAIRVOYANT, no_knobs},
	{"bound", POL_BOUND, no_knobs},
	{NULL, 0, NULL},
};

/* offer=NAME: its index among the replay's offers, which are the config's
 * in its order (sim_load). Only an [offer.NAME] section can be named, not
 * the default offer of a config with none. */
static int set_offer(const struct policy *p, int *at, const char *value, char *err, size_t errsize)
{
	struct offer *offers = xcalloc(p->cfg.noffers + 1, sizeof *offers);
	int k;

	k = offer_index(offers, offers_from_config(&p->cfg, offers, (int)p->cfg.noffers), value);
	free(offers);
	if (k < 0) {
		snprintf(err, errsize, "offer=%s: no [offer.%s] in the config", value, value);
		return -1;
	}
	*at = k;
	return 0;
}

static int set_knob(struct policy *p, const struct knob *k, const char *value, char *err, size_t errsize)
{
	char *at = (char *)p + k->offset, *end;
	double v = strtod(value, &end);

	switch (k->type) {
	case K_OFFER:
		return set_offer(p, (int *)at, value, err, errsize);
	case K_MARKET:
		if (market_parse(value) < 0) {
			snprintf(err, errsize, "market=%s: expected spot or on-demand", value);
			return -1;
		}
		*(enum market *)at = (enum market)market_parse(value);
		return 0;
	case K_PLACEMENT:
		if (strcmp(value, "offer") != 0 && strcmp(value, "cheapest") != 0) {
			snprintf(err, errsize, "placement=%s: expected offer (the offer= and market= given) or cheapest"
				 " (Karpenter's choice among every offer)", value);
			return -1;
		}
		*(enum placement *)at = strcmp(value, "cheapest") == 0 ? PLACE_CHEAPEST : PLACE_OFFER;
		return 0;
	default:
		break;
	}
	if (end == value || *end || !(v >= k->min && v <= k->max) || (k->type == K_INT && v != floor(v))) {
		snprintf(err, errsize, "%s=%s: expected %s from %g to %g", k->name, value,
			 k->type == K_SECONDS ? "seconds (a number)" : k->type == K_INT ? "a whole number" : "a number",
			 k->min, k->max);
		return -1;
	}
	if (k->type == K_INT)
		*(int64_t *)at = (int64_t)v;
	else if (k->type == K_SECONDS)
		*(int64_t *)at = (int64_t)(v * 1000);
	else
		*(double *)at = v;
	return 0;
}

/* SECTION.KEY=VALUE on ebb's config; KEY_s=N is read as the duration KEY
 * in seconds, so `lane.standard.wait_target_s=60` works. */
static int set_config(struct policy *p, const char *key, const char *value, char *err, size_t errsize)
{
	const char *dot = strrchr(key, '.');
	char section[200], name[200], seconds[64];
	size_t n;

	/* Copies: the key as given stays whole, to tell a knob given twice. */
	if (!dot || (size_t)(dot - key) >= sizeof section || strlen(dot + 1) >= sizeof name) {
		snprintf(err, errsize, "ebb:%s: expected SECTION.KEY=VALUE, such as scaler.idle_timeout=auto", key);
		return -1;
	}
	snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
	snprintf(name, sizeof name, "%s", dot + 1);
	/* The replay reads [scaler] and the lanes' wait targets; the offers
	 * and lanes are the --offers file's, for every policy alike, and the
	 * other sections mean nothing to it: an override would do nothing. */
	if (strcmp(section, "scaler") != 0 &&
	    !(strncmp(section, "lane.", 5) == 0 && config_lane_rank(&p->cfg, section + 5) >= 0)) {
		snprintf(err, errsize, "ebb:%s: only [scaler] and [lane.NAME] keys can be set here, NAME one of %s"
			 " (offers and lanes come from the --offers file)", key, p->cfg.lanes);
		return -1;
	}
	if (config_set(&p->cfg, section, name, value, err, errsize) == 0)
		return 0;
	n = strlen(name);
	if (n > 2 && strcmp(name + n - 2, "_s") == 0) {
		name[n - 2] = '\0';
		snprintf(seconds, sizeof seconds, "%ss", value);
		return config_set(&p->cfg, section, name, seconds, err, errsize);
	}
	return -1;
}

/* What each knob's range cannot say: util scales down below `down` and up
 * above `up`, which with down >= up would flap. And the baseline's offer
 * must be sold on its market, or it would run for free: with no market
 * given, an offer sold only on spot is taken on spot. */
static int check_baseline(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
			  size_t errsize)
{
	if (p->kind == POL_UTIL && !(p->down < p->up)) {
		snprintf(err, errsize, "policy %s: down=%g: expected below up=%g", spec, p->down, p->up);
		return -1;
	}
	if (policy_any_offer(p)) {
		if (!market_given && !offer_given)
			return 0;
		if (p->kind == POL_KEDA)
			snprintf(err, errsize, "policy %s: placement=cheapest chooses the offer and market of each"
				 " replica: offer= and market= go with placement=offer", spec);
		else
			snprintf(err, errsize, "policy %s: the clairvoyant chooses the offer and market of each job",
				 spec);
		return -1;
	}
	if (p->kind != POL_BOUND && (size_t)p->offer < p->cfg.noffers) {
		const struct offer_conf *o = &p->cfg.offers[p->offer];
		if ((p->market == MARKET_SPOT ? o->price_spot : o->price_ondemand) >= 0)
			return 0;
		if (!market_given && o->price_spot >= 0) {
			p->market = MARKET_SPOT;
			return 0;
		}
		snprintf(err, errsize, "policy %s: offer %s is not sold %s", spec, o->name,
			 p->market == MARKET_SPOT ? "on spot" : "on demand");
		return -1;
	}
	return 0;
}

static const struct knob *find_knob(const struct knob *knobs, const char *name)
{
	for (const struct knob *k = knobs; k->name; k++) {
		if (strcmp(k->name, name) == 0)
			return k;
	}
	return NULL;
}

/* 0 when key is new among the keys given so far (and adds it); -1 when
 * given before, where the last would silently win; -2 past 64 keys. */
static int once(char **keys, int *n, char *key)
{
	for (int i = 0; i < *n; i++) {
		if (strcmp(keys[i], key) == 0)
			return -1;
	}
	if (*n == 64)
		return -2;
	keys[(*n)++] = key;
	return 0;
}

int policy_parse(const char *spec, const char *config_path, const struct conf_plugins *plugins,
		 struct policy *out, char *err, size_t errsize)
{
	char *copy = xstrdup(spec), *colon, *save = NULL, why[400], *keys[64];
	const struct kind *kind = kinds;
	int rc = 0, market_given = 0, offer_given = 0, nkeys = 0;

	memset(out, 0, sizeof *out);
	colon = strchr(copy, ':');
	snprintf(out->spec, sizeof out->spec, "%s", spec);
	if (colon)
		*colon = '\0';
	while (kind->name && strcmp(kind->name, copy) != 0)
		kind++;
	if (!kind->name) {
		snprintf(err, errsize, "policy '%s': expected ebb, always-on, min1, util, keda, clairvoyant or bound", copy);
		free(copy);
		return -1;
	}
	out->kind = kind->kind;
	/* The tools' documented defaults (shared/FACTS.md). */
	out->idle_ms = 600000;
	out->up = 0.8;
	out->down = 0.2;
	out->window_ms = 300000;
	out->poll_ms = 30000;
	out->target = 1;
	out->cooldown_ms = 300000;
	out->stabilize_ms = 300000;
	if (config_path)
		rc = config_load(&out->cfg, plugins, config_path, why, sizeof why);
	else
		config_defaults(&out->cfg, plugins);
	if (rc != 0) {
		snprintf(err, errsize, "%s", why);
		free(copy);
		return -1;
	}
	for (char *kv = colon ? strtok_r(colon + 1, ",", &save) : NULL; kv && rc == 0;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const struct knob *k;
		if (!eq) {
			snprintf(err, errsize, "policy %s: '%s': expected KEY=VALUE", spec, kv);
			rc = -1;
			break;
		}
		*eq = '\0';
		if ((rc = once(keys, &nkeys, kv)) == -1)
			snprintf(err, errsize, "policy %s: %s given twice (which one is meant?)", spec, kv);
		else if (rc != 0)
			snprintf(err, errsize, "policy %s: more than 64 knobs", spec);
		if (rc != 0)
			break;
		if (out->kind == POL_EBB) {
			if ((rc = set_config(out, kv, eq + 1, why, sizeof why)) != 0)
				snprintf(err, errsize, "policy %s: %s", spec, why);
		} else if ((k = find_knob(kind->knobs, kv)) || (k = find_knob(common_knobs, kv))) {
			market_given |= k->type == K_MARKET;
			offer_given |= k->type == K_OFFER;
			if ((rc = set_knob(out, k, eq + 1, why, sizeof why)) != 0)
				snprintf(err, errsize, "policy %s: %s", spec, why);
		} else {
			snprintf(err, errsize, "policy %s: unknown knob '%s'", spec, kv);
			rc = -1;
		}
	}
	free(copy);
	if (rc == 0 && out->kind != POL_EBB)
		rc = check_baseline(out, spec, market_given, offer_given, err, errsize);
	if (rc == 0 && out->kind == POL_EBB && (rc = config_check(&out->cfg, why, sizeof why)) != 0)
		snprintf(err, errsize, "policy %s: %s", spec, why);
	if (rc != 0) {
		policy_free(out);
		return rc;
	}
	plan_settings_from_config(&out->cfg, &out->settings);
	return 0;
}

int policy_any_offer(const struct policy *p)
{
	return p->kind == POL_EBB || p->kind == POL_CLAIRVOYANT ||
	       (p->kind == POL_KEDA && p->placement == PLACE_CHEAPEST);
}

void policy_free(struct policy *p)
{
	config_free(&p->cfg);
}
