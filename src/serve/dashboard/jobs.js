// The dashboard's jobs (dashboard.js routes to them): the list at
// #jobs?state=&lane=&team=&after= from GET /v1/jobs, a page of 50 in id
// order (keyset: "next page" passes the last id as after), and one job at
// #job/ID from GET /v1/jobs/ID with its attempts and its log, which
// follows the running attempt with GET /v1/jobs/ID/logs?wait= long polls.
// A leased job shows as "running", as in the CLI. An ebb without attempts
// or logs (an older serve) gets a plain sentence where they would be.
"use strict";

const PAGE = 50;
const LOG_WAIT_S = 20;
const LOG_TAIL = 1000; // lines shown of an attempt at first: its last ones
const LOG_KEEP = 5000; // lines kept on the page, the newest
const FINAL = ["succeeded", "failed", "dead", "cancelled"];

let follower = null; // the log being read: {key, job, pinned, abort}

function stateName(s) {
  return s === "leased" ? "running" : s;
}

function progress(j) {
  return j.items_done + "/" + j.items;
}

// How long it waited to run: started_at - created_at; while it waits,
// until now; "-" for a job that ended without running.
function waited(j) {
  if (j.started_at !== null) return span(j.started_at - j.created_at);
  if (j.state === "queued" || j.state === "delayed") return span(Date.now() / 1000 - j.created_at);
  return "-";
}

// A command as a shell would take it back: an argument quoted where it
// has more than letters, digits and -_./=:,@%+.
function commandLine(argv) {
  return argv.map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'").join(" ");
}

function when(t) {
  return t === null || t === undefined ? "-" : new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + "Z";
}

function linkCell(tr, href) {
  const td = tr.cells[0], a = document.createElement("a");
  a.href = href;
  a.textContent = td.textContent;
  td.replaceChildren(a);
  return tr;
}

// The select's choices: "any" and names, keeping current among them.
function choices(select, names, current) {
  const want = ["", ...new Set(current ? names.concat([current]) : names)];
  if ([...select.options].map((o) => o.value).join("\n") !== want.join("\n")) {
    select.replaceChildren(...want.map((n) => {
      const o = document.createElement("option");
      o.value = n;
      o.textContent = n || "any";
      return o;
    }));
  }
  select.value = current;
}

function filtersChanged() {
  const q = new URLSearchParams();
  for (const k of ["state", "lane", "team"]) if ($("f-" + k).value) q.set(k, $("f-" + k).value);
  location.hash = "#jobs" + (q.toString() ? "?" + q : "");
}

async function refreshJobs(query) {
  const want = {state: query.get("state") || "", lane: query.get("lane") || "", team: query.get("team") || ""};
  const from = query.get("after"), q = new URLSearchParams({limit: PAGE});
  if (!lastBoard) {
    const board = await api("/v1/dashboard");
    if (!board) return false;
    if (board.status === 200) lastBoard = board.body;
  }
  for (const [k, v] of Object.entries(want)) if (v) q.set(k, k === "state" && v === "running" ? "leased" : v);
  if (from) q.set("after", from);
  const reply = await api("/v1/jobs?" + q);
  if (!reply) return false;
  if (reply.status !== 200) throw failure(reply);
  const {jobs, next_after: next} = reply.body;
  $("f-state").value = want.state;
  choices($("f-lane"), lastBoard ? lastBoard.queue.lanes.map((l) => l.name) : [], want.lane);
  choices($("f-team"), lastBoard ? lastBoard.teams.map((t) => t.name) : [], want.team);
  fill($("jobs").tBodies[0], jobs.map((j) => linkCell(
    row([j.id, stateName(j.state), j.lane, j.team, progress(j), usd(j.cost_usd), waited(j)],
        {job: j.id, state: stateName(j.state)}), "#job/" + j.id)));
  $("jobs-none").hidden = jobs.length > 0;
  const page = (after) => {
    const p = new URLSearchParams(query);
    if (after === null) p.delete("after");
    else p.set("after", after);
    return "#jobs" + (p.toString() ? "?" + p : "");
  };
  $("jobs-next").href = page(next);
  $("jobs-next").hidden = next === null;
  $("jobs-first").href = page(null);
  $("jobs-first").hidden = !from;
  set("status", jobs.length + (next === null ? "" : "+") + " jobs");
  showView("jobs-view");
  return true;
}

function fields(j) {
  const f = [
    ["state", stateName(j.state) + (j.held ? " (held: " + j.held + ")" : "")],
    ["type", j.type], ["lane", j.lane], ["priority", j.priority], ["team", j.team],
    ["command", j.command ? commandLine(j.command) : "-"],
  ];
  if (j.payload !== undefined) f.push(["payload", JSON.stringify(j.payload)]);
  f.push(["progress", progress(j)], ["gpus", j.gpus], ["min VRAM", j.min_vram_gb + " GB"]);
  if (typeof j.attempts === "number") f.push(["attempts", j.attempts + " of " + j.max_attempts]);
  else f.push(["max attempts", j.max_attempts]);
  f.push(["interruptions", j.interruptions], ["created", when(j.created_at)], ["started", when(j.started_at)],
         ["finished", when(j.finished_at)], ["wait", waited(j)]);
  if (j.lease) {
    f.push(["worker", j.lease.worker], ["instance", j.lease.instance === null ? "-" : j.lease.instance],
           ["lease expires", when(j.lease.expires_at)]);
  }
  f.push(["checkpoint", j.checkpoint || "-"], ["cost", usd(j.cost_usd)], ["cost per item", usd(j.cost_per_item_usd)]);
  if (j.error) f.push(["error", j.error]);
  if (j.result !== undefined) f.push(["result", JSON.stringify(j.result)]);
  return f;
}

function fieldRow([name, value]) {
  const tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
  tr.dataset.field = name;
  th.textContent = name;
  td.textContent = value;
  tr.append(th, td);
  return tr;
}

// A job's attempts, every lease of it: its `runs` (its `attempts` is
// the count), served by the same ebb as this page.
function showAttempts(j, shown) {
  const list = j.runs || [];
  $("attempts").hidden = list.length === 0;
  set("attempts-note", list.length ? "" : "None yet: the job has not run.");
  fill($("attempts").tBodies[0], list.map((a) => {
    const tr = linkCell(row([a.attempt, a.worker, a.instance ?? "-", a.offer ? a.offer + " " + (a.market || "") : "-",
                             when(a.started_at), span((a.ended_at ?? Date.now() / 1000) - a.started_at), a.outcome,
                             a.exit ?? "-", a.items_done, a.checkpoint ?? "-", a.reason ?? ""],
                            {attempt: a.attempt, outcome: a.outcome}), "#job/" + j.id + "?attempt=" + a.attempt);
    tr.classList.toggle("here", a.attempt === shown);
    return tr;
  }));
}

async function refreshJob(id, query) {
  const reply = await api("/v1/jobs/" + id);
  if (!reply) return false;
  set("job-title", "Job " + id);
  $("job-missing").hidden = reply.status !== 404;
  if (reply.status === 404) {
    stopFollowing();
    set("job-missing", reply.body.error.message);
    for (const t of ["job-fields", "attempts"]) fill($(t).tBodies[0], []);
    showView("job-view");
    return true;
  }
  if (reply.status !== 200) throw failure(reply);
  const j = reply.body;
  fill($("job-fields").tBodies[0], fields(j).map(fieldRow));
  follow(j, query.get("attempt"));
  showAttempts(j, follower.attempt);
  set("status", "job " + j.id + ": " + stateName(j.state));
  showView("job-view");
  return true;
}

function stopFollowing() {
  if (follower) follower.abort.abort();
  follower = null;
}

// Reads job j's log, of the attempt pinned or else the latest, unless it
// is being read already (the job is only updated then).
function follow(j, pinned) {
  const key = j.id + "/" + (pinned || "");
  if (follower && follower.key === key) {
    follower.job = j;
    return;
  }
  stopFollowing();
  follower = {key, job: j, attempt: pinned ? Number(pinned) : null, pinned: !!pinned, abort: new AbortController()};
  $("log").replaceChildren();
  set("log-note", "reading the log");
  const f = follower;
  readLog(f).catch((e) => {
    if (e.name !== "AbortError") set("log-note", "cannot read the log: " + e.message);
  });
}

function pause(ms, signal) {
  return new Promise((done, stop) => {
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); stop(signal.reason); }, {once: true});
  });
}

function addLines(lines) {
  const box = $("log"), atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
  box.append(...lines.map((l) => {
    const div = document.createElement("div");
    div.dataset.seq = l.seq;
    div.className = l.stream;
    div.title = when(l.at);
    div.textContent = l.text;
    return div;
  }));
  while (box.childElementCount > LOG_KEEP) box.firstElementChild.remove();
  if (atEnd) box.scrollTop = box.scrollHeight;
}

// The lines of f.attempt: its last LOG_TAIL at once, then those past
// the last shown, asked again while the attempt runs (a long poll: serve
// answers when lines come or the attempt ends) or lines come (a page of
// them). Following the latest, a job not run yet is looked at again, and
// once an attempt has ended a later one is looked for until the job is
// final.
async function readLog(f) {
  let after = -1, first = true;
  for (;;) {
    const q = new URLSearchParams({after});
    q.set(first ? "tail" : "wait", first ? LOG_TAIL : LOG_WAIT_S);
    if (f.attempt) q.set("attempt", f.attempt);
    const reply = await api("/v1/jobs/" + f.job.id + "/logs?" + q, f.abort.signal);
    if (!reply || f !== follower) return;
    if (reply.status === 404) {
      set("log-note", "No log to show: " + reply.body.error.message + ".");
      if (FINAL.includes(f.job.state)) return;
      await pause(REFRESH_MS, f.abort.signal);
      continue;
    }
    if (reply.status !== 200) throw failure(reply);
    const l = reply.body;
    if (!l.attempt) {
      set("log-note", "The job has not run yet.");
      await pause(REFRESH_MS, f.abort.signal);
      continue;
    }
    if (l.attempt !== f.attempt) {
      f.attempt = l.attempt;
      $("log").replaceChildren();
      showAttempts(f.job, f.attempt);
    }
    // The last seq shown is the next `after`: whether `next` is that seq
    // or the one past it, the lines say which they are.
    const fresh = l.lines.filter((x) => x.seq > after);
    addLines(fresh);
    after = Math.max(after, ...fresh.map((x) => x.seq));
    first = false;
    const shownFrom = $("log").firstElementChild ? Number($("log").firstElementChild.dataset.seq) : 0;
    set("log-note", "Attempt " + l.attempt + (shownFrom > 0 ? ", from line " + (shownFrom + 1) : "") +
                    (l.dropped ? ", " + l.dropped + " bytes dropped" : "") + (l.done ? ": ended." : ": following."));
    if (!l.done || fresh.length) continue;
    if (f.pinned || FINAL.includes(f.job.state)) return;
    await pause(REFRESH_MS, f.abort.signal);
    const latest = await api("/v1/jobs/" + f.job.id + "/logs?tail=1", f.abort.signal);
    if (latest && latest.status === 200 && latest.body.attempt !== f.attempt) {
      f.attempt = latest.body.attempt;
      after = -1;
      first = true;
      $("log").replaceChildren();
    }
  }
}

for (const k of ["state", "lane", "team"]) $("f-" + k).addEventListener("change", filtersChanged);
