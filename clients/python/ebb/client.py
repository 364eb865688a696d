"""ebb.Client: the API of docs/API.md for a program that submits jobs
and wants what they return: submit one or many, wait for them, read
their logs, cancel and requeue them, and map payloads to results."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ._http import Http
from .errors import ApiError, JobFailed, SubmitError, WaitTimeout

Job = dict[str, Any]
"""A job as the API gives it (docs/API.md "The job object")."""

FINAL = frozenset({"succeeded", "failed", "dead", "cancelled"})
"""The states a job never leaves."""

# The longest one long-poll of a job asks serve for; with a progress
# callback, how often it hears of a running job at least.
WAIT_S = 30
PROGRESS_S = 5
# Between two looks for a job's next attempt, once one ended (as `ebb logs -f`).
NEXT_ATTEMPT_S = 1.0


@dataclass(frozen=True)
class LogLine:
    """A line a job wrote (GET /v1/jobs/ID/logs): its attempt, its number
    in the attempt, when the worker read it (Unix seconds), its stream
    ("stdout" or "stderr") and its text."""

    attempt: int
    seq: int
    at: float
    stream: str
    text: str


class Client:
    """A client of one serve. server, token and cacert default to
    EBB_SERVER (else http://127.0.0.1:7070), EBB_TOKEN and EBB_CACERT, as
    for the CLI. Every call raises ApiError for the API's errors and
    ConnectionFailed when serve cannot be reached."""

    def __init__(self, server: str | None = None, token: str | None = None, cacert: str | None = None) -> None:
        self._http = Http(server or os.environ.get("EBB_SERVER") or "http://127.0.0.1:7070",
                          token if token is not None else os.environ.get("EBB_TOKEN"),
                          cacert if cacert is not None else os.environ.get("EBB_CACERT"))

    @property
    def server(self) -> str:
        return self._http.server

    def submit(self, command: Sequence[str] | None = None, *, payload: Any = None, **fields: Any) -> Job:
        """POST /v1/jobs: a job that runs command, or hands payload to its
        worker, with the other fields of the API (type, lane, priority,
        gpus, items, idempotency_key, ...; None leaves one out). The job."""
        job: Job = self._http.call("POST", "/v1/jobs", _body(command, payload, fields))
        return job

    def submit_many(self, jobs: Iterable[dict[str, Any]], batch: int = 1000, key: str | None = None) -> list[int]:
        """Submits the jobs (each a dict of POST /v1/jobs's fields) batch
        at a time, each batch in one request and one commit. With key,
        the job at index i without an idempotency_key of its own gets
        "KEY-i": the same call again (after an error, from another
        process) queues nothing twice and returns the same ids. The ids in
        the order given; SubmitError if serve refused some (the rest are
        queued)."""
        if not 1 <= batch <= 1000:
            raise ValueError(f"batch {batch}: expected 1 to 1000 jobs a request (the API's limit)")
        bodies = []
        for i, fields in enumerate(jobs):
            body = {k: v for k, v in fields.items() if v is not None}
            if key is not None and "idempotency_key" not in body:
                body["idempotency_key"] = f"{key}-{i}"
            bodies.append(body)
        ids: list[int | None] = []
        errors: dict[int, ApiError] = {}
        for start in range(0, len(bodies), batch):
            self._submit_array(bodies[start:start + batch], start, ids, errors)
        if errors:
            raise SubmitError(ids, errors)
        return [i for i in ids if i is not None]

    def _submit_array(self, bodies: list[dict[str, Any]], start: int, ids: list[int | None],
                      errors: dict[int, ApiError]) -> None:
        try:
            reply = self._http.call("POST", "/v1/jobs", bodies)
        except ApiError as e:
            if e.status != 413 or len(bodies) == 1:
                raise
            # Past [server] max_body: nothing was queued; in halves.
            half = len(bodies) // 2
            self._submit_array(bodies[:half], start, ids, errors)
            self._submit_array(bodies[half:], start + half, ids, errors)
            return
        for i, result in enumerate(reply["jobs"]):
            if result["status"] in (200, 201):
                ids.append(result["id"])
                continue
            err = result["error"]
            errors[start + i] = ApiError(err["code"], err["message"], err.get("field"), result["status"])
            ids.append(None)

    def get(self, job: int) -> Job:
        """GET /v1/jobs/ID: the job, with its runs."""
        reply: Job = self._http.call("GET", f"/v1/jobs/{job}")
        return reply

    @overload
    def wait(self, jobs: int, timeout: float | None = None,
             progress: Callable[[Job], None] | None = None) -> Job: ...

    @overload
    def wait(self, jobs: Iterable[int], timeout: float | None = None,
             progress: Callable[[Job], None] | None = None) -> list[Job]: ...

    def wait(self, jobs: int | Iterable[int], timeout: float | None = None,
             progress: Callable[[Job], None] | None = None) -> Job | list[Job]:
        """Waits until the job, or each of the jobs, is in a final state
        (succeeded, failed, dead, cancelled), and returns it (them, in the
        order given). progress, if given, is called with a job each time
        wait sees its state or items_done change; it hears of a running
        job every few seconds. WaitTimeout after timeout seconds."""
        ids = [jobs] if isinstance(jobs, int) else list(jobs)
        deadline = None if timeout is None else time.monotonic() + timeout
        seen: dict[int, tuple[str, int]] = {}
        done: dict[int, Job] = {}
        for n, job_id in enumerate(ids):
            while job_id not in done:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise WaitTimeout([i for i in ids[n:] if i not in done], timeout or 0)
                job = self._wait_one(job_id, PROGRESS_S if progress else WAIT_S, left)
                if progress and seen.get(job_id) != (job["state"], job.get("items_done", 0)):
                    seen[job_id] = (job["state"], job.get("items_done", 0))
                    progress(job)
                if job["state"] in FINAL:
                    done[job_id] = job
        return done[ids[0]] if isinstance(jobs, int) else [done[i] for i in ids]

    def _wait_one(self, job_id: int, wait_s: int, left: float | None) -> Job:
        """One long-poll of the job (GET /v1/jobs/ID?wait=): answered at
        its final state, or after wait_s (less when left, the time left, is
        shorter; at least a second, serve's unit)."""
        if left is not None:
            wait_s = max(1, min(wait_s, math.ceil(left)))
        job: Job = self._http.call("GET", f"/v1/jobs/{job_id}", query={"wait": wait_s}, wait_s=wait_s)
        return job

    def logs(self, job: int, follow: bool = True, attempt: int | None = None) -> Iterator[LogLine]:
        """The lines job wrote, in order: of its latest attempt, or of
        attempt. Following, it waits for more as they come and goes on to
        the job's next attempts until the job has finished (as `ebb logs
        -f`); else it ends at the last line serve has now."""
        after = -1
        while True:
            reply = self._http.call("GET", f"/v1/jobs/{job}/logs",
                                    query={"after": after, "attempt": attempt, "wait": WAIT_S if follow else None},
                                    wait_s=WAIT_S if follow else 0)
            now = reply["attempt"]
            for line in reply["lines"]:
                yield LogLine(now, line["seq"], line["at"], line["stream"], line["text"])
            after = reply["next"]
            if attempt is None and now > 0 and follow:
                attempt = now  # followed from here on, to its end
            if reply["lines"]:
                continue  # the next page
            if not follow:
                return
            if not reply["done"]:
                continue
            # The attempt ended: the job's next, unless the job has finished.
            next_attempt = self._next_attempt(job, now)
            if next_attempt is None:
                return
            attempt, after = next_attempt, -1

    def _next_attempt(self, job: int, attempt: int) -> int | None:
        """The job's attempt after attempt once it starts; None once the
        job has finished."""
        while True:
            # The state first: an attempt begun before the job ended is seen.
            finished = self.get(job)["state"] in FINAL
            latest = int(self._http.call("GET", f"/v1/jobs/{job}/logs", query={"tail": 1})["attempt"])
            if latest > attempt:
                return latest
            if finished:
                return None
            time.sleep(NEXT_ATTEMPT_S)

    def cancel(self, job: int) -> Job:
        """POST /v1/jobs/ID/cancel: the job, now cancelled."""
        reply: Job = self._http.call("POST", f"/v1/jobs/{job}/cancel")
        return reply

    def requeue(self, job: int, fresh: bool = False) -> Job:
        """POST /v1/jobs/ID/requeue: a failed or dead job queued again,
        from its checkpoint unless fresh. The job, now queued."""
        reply: Job = self._http.call("POST", f"/v1/jobs/{job}/requeue", {"fresh": True} if fresh else None)
        return reply

    def map(self, payloads: Iterable[Any], type: str | None = None, *, batch: int = 1000, key: str | None = None,
            **fields: Any) -> Iterator[Any]:
        """Submits a job per payload (of type, with the other fields for
        each; key as for submit_many), then yields each job's result in the
        order of the payloads, as each is ready. A job that ends failed,
        dead or cancelled raises JobFailed; the jobs after it run on."""
        ids = self.submit_many(({"payload": p, "type": type, **fields} for p in payloads), batch=batch, key=key)
        for job_id in ids:
            job = self.wait(job_id)
            if job["state"] != "succeeded":
                raise JobFailed(job)
            yield job.get("result")


def _body(command: Sequence[str] | None, payload: Any, fields: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in fields.items() if v is not None}
    if command is not None:
        if isinstance(command, str):
            raise TypeError("command: expected a sequence of strings (argv), not one string")
        body["command"] = list(command)
    if payload is not None:
        body["payload"] = payload
    return body
