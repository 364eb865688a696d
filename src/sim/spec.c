/* Policy specs for `ebb sim` and `ebb tune`: "NAME[:k=v,...]" (see spec.h),
 * NAME one of the registry's (sim_policy.h). A policy's knobs and their
 * defaults are its own (a baseline's, those of the tool it stands for),
 * read here; ebb reads its own, overrides of its config. */
#include "sim/spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "policy/settings.h"
#include "sim/sim_policy.h"

/* offer= and market=, which every baseline takes, in struct policy. */
static const struct knob common_knobs[] = {{"offer", K_OFFER, offsetof(struct policy, offer), 0, 0},
					   {"market", K_MARKET, offsetof(struct policy, market), 0, 0},
					   {0}};

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

/* Knob k of p, at its offset in base (p or its params). */
static int set_knob(struct policy *p, void *base, const struct knob *k, const char *value, char *err,
		    size_t errsize)
{
	char *at = (char *)base + k->offset, *end;
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
	case K_CHOICE:
		for (int c = 0; k->choices[c]; c++) {
			if (strcmp(value, k->choices[c]) == 0) {
				*(int *)at = c;
				return 0;
			}
		}
		snprintf(err, errsize, "%s=%s: expected %s", k->name, value, k->expected);
		return -1;
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
	else if (k->type == K_SECONDS) /* to the nearest millisecond: 100.001 * 1000 is 100000.99... */
		*(int64_t *)at = llround(v * 1000);
	else
		*(double *)at = v;
	return 0;
}

int policy_check_offer(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		       size_t errsize)
{
	const struct offer_conf *o;

	(void)offer_given; /* an offer given or the first: the same check */
	if ((size_t)p->offer >= p->cfg.noffers)
		return 0;
	o = &p->cfg.offers[p->offer];
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

int policy_check_no_offer(const char *spec, int market_given, int offer_given, const char *why, char *err,
			  size_t errsize)
{
	if (!market_given && !offer_given)
		return 0;
	snprintf(err, errsize, "policy %s: %s", spec, why);
	return -1;
}

static const struct knob *find_knob(const struct knob *knobs, const char *name)
{
	for (const struct knob *k = knobs; k && k->name; k++) {
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

/* "expected ebb, always-on, ... or bound": the registry's names. */
static void expected_names(char *out, size_t size)
{
	out[0] = '\0';
	for (int k = 0; sim_policies[k]; k++) {
		size_t n = strlen(out);
		snprintf(out + n, size - n, "%s%s", k == 0 ? "" : sim_policies[k + 1] ? ", " : " or ",
			 sim_policies[k]->name);
	}
}

int policy_parse(const char *spec, const char *config_path, const struct conf_plugins *plugins,
		 struct policy *out, char *err, size_t errsize)
{
	char *copy = xstrdup(spec), *colon, *save = NULL, why[400], *keys[64];
	const struct sim_policy *kind = NULL;
	int rc = 0, market_given = 0, offer_given = 0, nkeys = 0;

	memset(out, 0, sizeof *out);
	colon = strchr(copy, ':');
	snprintf(out->spec, sizeof out->spec, "%s", spec);
	if (colon)
		*colon = '\0';
	for (int k = 0; sim_policies[k] && !kind; k++) {
		if (strcmp(sim_policies[k]->name, copy) == 0)
			kind = sim_policies[k];
	}
	if (!kind) {
		expected_names(why, sizeof why);
		snprintf(err, errsize, "policy '%s': expected %s", copy, why);
		free(copy);
		return -1;
	}
	out->kind = kind;
	if (kind->params_size) {
		out->params = xmalloc(kind->params_size);
		memcpy(out->params, kind->defaults, kind->params_size);
	}
	if (config_path)
		rc = config_load(&out->cfg, plugins, config_path, why, sizeof why);
	else
		config_defaults(&out->cfg, plugins);
	if (rc != 0) {
		snprintf(err, errsize, "%s", why);
		free(copy);
		policy_free(out);
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
		if (kind->set) {
			if ((rc = kind->set(out, kv, eq + 1, why, sizeof why)) != 0)
				snprintf(err, errsize, "policy %s: %s", spec, why);
		} else {
			void *base = out->params; /* its own knob, else offer= or market= */
			if (!(k = find_knob(kind->knobs, kv)) && (k = find_knob(common_knobs, kv)))
				base = out;
			if (!k) {
				snprintf(err, errsize, "policy %s: unknown knob '%s'", spec, kv);
				rc = -1;
			} else if ((rc = set_knob(out, base, k, eq + 1, why, sizeof why)) != 0) {
				snprintf(err, errsize, "policy %s: %s", spec, why);
			}
			market_given |= k && k->type == K_MARKET;
			offer_given |= k && k->type == K_OFFER;
		}
	}
	free(copy);
	if (rc == 0 && kind->check)
		rc = kind->check(out, spec, market_given, offer_given, err, errsize);
	if (rc != 0) {
		policy_free(out);
		return rc;
	}
	plan_settings_from_config(&out->cfg, &out->settings);
	return 0;
}

int policy_defaults(int several_offers, const char **out)
{
	int n = 0;

	for (int k = 0; sim_policies[k]; k++) {
		out[n++] = sim_policies[k]->name;
		if (several_offers && sim_policies[k]->several_offers_spec)
			out[n++] = sim_policies[k]->several_offers_spec;
	}
	return n;
}

int policy_every_offer(const struct policy *p)
{
	(void)p;
	return 1;
}

int policy_any_offer(const struct policy *p)
{
	return p->kind->any_offer && p->kind->any_offer(p);
}

void policy_free(struct policy *p)
{
	config_free(&p->cfg);
	free(p->params);
	p->params = NULL;
}
