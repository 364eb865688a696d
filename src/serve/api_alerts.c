/* GET /v1/alerts: the alerts pending and firing, and the rules (alerts.h,
 * docs/ALERTS.md). */
#include "serve/alerts.h"
#include "serve/api_internal.h"

int api_alerts(struct api_call *c)
{
	alerts_refresh(c->api->alerts);
	request_reply(c->req, 200, alerts_json(c->api->alerts));
	return 0;
}
