// ebb's dashboard: the overview (GET /v1/dashboard) at #, the jobs at
// #jobs and one job at #job/ID (jobs.js), each read again every few
// seconds. Read-only; no library; nothing but text goes into the page
// (textContent), so no figure or name from the store can become markup.
// The token is typed once and kept in this browser's localStorage.
"use strict";

const REFRESH_MS = 5000;
const TOKEN_KEY = "ebb-token";
const $ = (id) => document.getElementById(id);

let timer = null;
let lastBoard = null; // the last GET /v1/dashboard: its lanes and teams fill the jobs' filters

function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

function usd(v) {
  if (v === null || v === undefined) return "-";
  if (v !== 0 && Math.abs(v) < 0.01) return "$" + v.toPrecision(3);
  return "$" + v.toFixed(2);
}

// "45 s", "5 m", "12 m 30 s", "1 h 5 m", "3 d 4 h": the two largest units.
function span(s) {
  const units = [[86400, "d"], [3600, "h"], [60, "m"], [1, "s"]];
  s = Math.max(0, Math.floor(s));
  for (let k = 0; k < units.length; k++) {
    const [size, name] = units[k];
    if (s < size && size > 1) continue;
    const whole = Math.floor(s / size) + " " + name, rest = k < 3 ? Math.floor((s % size) / units[k + 1][0]) : 0;
    return rest ? whole + " " + rest + " " + units[k + 1][1] : whole;
  }
}

// An instance's resident handlers: "embed ready (3.1 s)", "embed starting".
function handlers(list) {
  return list.map((h) => h.type + " " + h.state +
    (h.setup_s === null ? "" : " (" + (h.setup_s < 60 ? h.setup_s.toFixed(1) + " s" : span(h.setup_s)) + ")")).join(", ");
}

function clock(t) {
  return new Date(t * 1000).toISOString().slice(11, 19) + "Z";
}

function set(id, text) {
  $(id).textContent = text;
}

// A row of cells; data names the row for whoever reads the page.
function row(cells, data) {
  const tr = document.createElement("tr");
  for (const [k, v] of Object.entries(data || {})) tr.dataset[k] = v;
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    tr.appendChild(td);
  }
  return tr;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function item(text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  return li;
}

function showCards(d) {
  set("spend-now", usd(d.fleet.spend_per_hour) + "/h");
  set("cpi-today", usd(d.money.today.cost_per_item));
  set("cpi-month", usd(d.money.month.cost_per_item));
  set("cost-today", usd(d.money.today.cost_usd));
  set("spot-share", d.fleet.spot_share === null ? "-" : Math.round(d.fleet.spot_share * 100) + "%");
  set("idle-gpu-hours", d.money.today.idle_gpu_hours.toFixed(2));
  set("alerts-count", String(d.alerts.length));
  $("alerts-count").parentElement.classList.toggle("bad", d.alerts.length > 0);
}

function showLists(d) {
  const alerts = d.alerts.map((a) => item(a.name + ": " + a.summary, a.labels.severity));
  fill($("alerts"), alerts.length ? alerts : [item("none firing", "quiet")]);
  const decisions = d.decisions.map((x) => item(clock(x.at) + "  " + x.reason));
  fill($("decisions"), decisions.length ? decisions : [item("none yet", "quiet")]);
}

function showTables(d) {
  fill($("lanes").tBodies[0], d.queue.lanes.map((l) =>
    row([l.name, l.queued, l.delayed, l.leased, l.queued ? span(l.oldest_wait_s) : "-", span(l.wait_target_s)],
        {lane: l.name})));
  fill($("fleet").tBodies[0], d.fleet.offers.map((o) =>
    row([o.offer, o.market, o.requested, o.booting, o.idle, o.busy, o.draining], {offer: o.offer, market: o.market})));
  fill($("instances").tBodies[0], d.fleet.instances.map((i) =>
    row([i.id, i.offer, i.market, i.state, i.job === null ? "-" : i.job, handlers(i.handlers)], {instance: i.id})));
  set("fleet-sum", d.fleet.live + " live: " + d.fleet.busy + " busy, " + d.fleet.idle + " idle");
  $("teams-section").hidden = d.teams.length === 0;
  fill($("teams").tBodies[0], d.teams.map((t) =>
    row([t.name, t.queued, t.leased, usd(t.today.cost_usd), usd(t.month.cost_usd), usd(t.month.cost_per_item),
         t.quota ? t.quota.used_gpus + " of " + t.quota.quota_gpus : "-",
         t.quota && t.quota.monthly_budget_usd !== null
           ? usd(t.quota.month_spend_usd) + " of " + usd(t.quota.monthly_budget_usd) : "-"],
        {team: t.name})));
}

// What `ebb tune --history --publish` last sent: the recommendation
// beside the running settings over the same jobs (docs/SIMULATION.md).
function showTuning(t) {
  $("tuning-section").hidden = t === null;
  if (t === null) return;
  const c = t.comparison, line = (name, x, key) =>
    row([name, usd(x.cost_usd), span(x.wait_p95_s)], {settings: key});
  const rows = [];
  if (c.recommended) rows.push(line("recommended: " + c.recommended.policy + ", replayed", c.recommended, "recommended"));
  rows.push(line("running, replayed", c.running_replayed, "running-replayed"));
  rows.push(line("running, in fact", c.running_actual, "running-actual"));
  fill($("tuning").tBodies[0], rows);
  set("tuning-sum", c.jobs + " jobs finished since " + new Date(c.since * 1000).toISOString().slice(0, 10) +
      (c.team ? " (team " + c.team + ")" : "") + ", published " + clock(t.published_at));
}

// Queued, running and instances over the samples of the last hours and
// now, as step lines scaled to the largest value.
function showChart(h, now) {
  const svg = $("chart"), ns = "http://www.w3.org/2000/svg", W = 600, H = 200, pad = 4;
  const s = h.samples.concat([now]);
  svg.replaceChildren();
  const t1 = now[0], t0 = Math.min(s[0][0], t1 - h.step_s);
  const top = Math.max(1, ...s.map((x) => Math.max(x[1], x[2], x[3])));
  const x = (t) => pad + ((t - t0) / (t1 - t0)) * (W - 2 * pad);
  const y = (v) => H - pad - (v / top) * (H - 2 * pad);
  [[1, "queued"], [2, "running"], [3, "instances"]].forEach(([k, cls]) => {
    let pts = "";
    s.forEach((p, i) => {
      if (i > 0) pts += x(p[0]) + "," + y(s[i - 1][k]) + " ";
      pts += x(p[0]) + "," + y(p[k]) + " ";
    });
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.trim());
    line.setAttribute("class", cls);
    svg.appendChild(line);
  });
  set("chart-span", "(" + span(t1 - t0) + ", up to " + top + ")");
}

function show(d) {
  lastBoard = d;
  showCards(d);
  showLists(d);
  showTables(d);
  showChart(d.history, [d.at, d.queue.queued, d.queue.leased, d.fleet.live]);
  showTuning(d.tuning);
  set("updated", "updated " + clock(d.at));
  set("status", "instances: " + d.fleet.live + ", queued: " + d.queue.queued);
  showView("board");
}

const VIEWS = ["board", "jobs-view", "job-view"];

// Shows the view of that id, and the header's link to it as the current one.
function showView(id) {
  for (const v of VIEWS) $(v).hidden = v !== id;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("here", a.dataset.view === id.replace("-view", ""));
  $("login").hidden = true;
  $("forget").hidden = !token();
}

function ask(why) {
  set("login-why", why);
  $("login").hidden = false;
  for (const v of VIEWS) $(v).hidden = true;
  set("status", "token needed");
  $("token").focus();
}

// A call to the API with the token: {status, body}, or null after a
// refusal of the token (the page then asks for one). Throws when ebb
// cannot be reached or its reply is not JSON.
async function api(path, signal) {
  const headers = token() ? {Authorization: "Bearer " + token()} : {};
  const r = await fetch(path, {headers, cache: "no-store", signal});
  const body = await r.json();
  if (r.status === 401 || r.status === 403) {
    ask(body.error ? body.error.message : "This ebb asks for a token.");
    return null;
  }
  return {status: r.status, body};
}

function failure(reply) {
  return new Error(reply.body.error ? reply.body.error.message : "HTTP " + reply.status);
}

async function refreshBoard() {
  const reply = await api("/v1/dashboard");
  if (!reply) return false;
  if (reply.status !== 200) throw failure(reply);
  show(reply.body);
  return true;
}

// The view the address asks for: "#jobs?state=running", "#job/12?attempt=2", or the overview.
function route() {
  const m = /^#(jobs|job\/(\d+))(?:\?(.*))?$/.exec(location.hash);
  if (!m) return {view: "board"};
  const query = new URLSearchParams(m[3] || "");
  return m[2] ? {view: "job", id: m[2], query} : {view: "jobs", query};
}

// Whether this ebb wants a token: asked of /healthz, which anyone may
// call, so that the first look is not a refused call.
async function tokenRequired() {
  const r = await fetch("/healthz", {cache: "no-store"});
  return (await r.json()).token_required;
}

async function refresh() {
  clearTimeout(timer);
  try {
    if (!token() && await tokenRequired()) {
      ask("This ebb asks for a token.");
      return;
    }
    const r = route();
    if (r.view !== "job") stopFollowing();
    const shown = r.view === "jobs" ? await refreshJobs(r.query)
                : r.view === "job" ? await refreshJob(r.id, r.query) : await refreshBoard();
    if (!shown) return;
  } catch (e) {
    set("status", "cannot reach ebb: " + e.message);
  }
  timer = setTimeout(refresh, REFRESH_MS);
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem(TOKEN_KEY, $("token").value.trim());
  $("token").value = "";
  refresh();
});
$("forget").addEventListener("click", () => {
  localStorage.removeItem(TOKEN_KEY);
  refresh();
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});
window.addEventListener("hashchange", refresh);
refresh();
