"""ebb.handler: a resident handler, the process a type's `handler`
command starts once and hands job after job (docs/JOBS.md). Setup (a
model loaded into the GPU) happens once; each job then costs only its
work.

The protocol: the worker writes a JSON line per job on the handler's
stdin, {"id", "attempt", "payload", "checkpoint", "items"}, and
`cancel ID` to cancel the job under way. The handler answers on
EBB_CONTROL_FD: `ready` once its setup is done, then for each job the
lines of ebb.job (progress, checkpoint, result) and `done` or `failed
REASON`. It ends at the end of its stdin, or at SIGTERM once the job
under way (if any) has ended."""

from __future__ import annotations

import io
import json
import os
import queue
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, overload

from . import job

# The longest REASON a failed line carries; the rest of the story is in
# the traceback on stderr, the job's log.
REASON_MAX = 1000


class Context:
    """The job a handler runs: its id, attempt (1 for the first run),
    items (what progress counts to), checkpoint (to resume from, None on a
    first run) and state (what setup returned)."""

    def __init__(self, id: int, attempt: int, items: int, checkpoint: str | None, state: Any) -> None:
        self.id = id
        self.attempt = attempt
        self.items = items
        self.checkpoint = checkpoint
        self.state = state
        self._cancel = threading.Event()

    @property
    def cancelled(self) -> bool:
        """The job was cancelled: stop its work and return (or raise); the
        worker restarts a handler that has not ended the job within the
        grace."""
        return self._cancel.is_set()


HandleFn = Callable[[Any, Context], Any]


class _Stopping(Exception):
    """SIGTERM while no job runs: the loop ends."""


class Handler:
    """handle(payload, ctx) made into a resident handler: run() serves the
    worker's jobs; calling it calls handle (for a test of one's own)."""

    def __init__(self, fn: HandleFn, setup: Callable[[], Any] | None) -> None:
        self._fn = fn
        self._setup = setup
        self._jobs: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._ctx: Context | None = None
        self._cancels: set[int] = set()
        self._idle = False

    def __call__(self, payload: Any, ctx: Context) -> Any:
        return self._fn(payload, ctx)

    def run(self) -> None:
        """Setup, `ready`, then the jobs of stdin one after another, until
        stdin ends or SIGTERM comes."""
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(line_buffering=True)  # lines reach the job's log as they are written
        job._install()
        job._term_last = self._on_term
        try:
            state = self._setup() if self._setup else None
            job._write("ready")
            threading.Thread(target=self._read, name="ebb-handler-stdin", daemon=True).start()
            while True:
                try:
                    self._idle = True
                    if job.terminating():
                        break
                    line = self._jobs.get()
                except _Stopping:
                    break
                finally:
                    self._idle = False
                if line is None:
                    break
                self._run(line, state)
        finally:
            job._term_last = None

    def _on_term(self) -> None:
        if self._idle:
            raise _Stopping()

    def _read(self) -> None:
        """stdin's lines: jobs into the queue, cancels to their job. Read
        with os.read, not through sys.stdin: a daemon thread blocked in
        the buffered reader holds its lock, and Python aborts when it
        exits with that lock held."""
        pending = b""
        while chunk := os.read(0, 1 << 16):
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                self._line(raw.decode("utf-8", "replace"))
        if pending:
            self._line(pending.decode("utf-8", "replace"))
        self._jobs.put(None)

    def _line(self, line: str) -> None:
        if line.startswith("cancel "):
            self._cancel(line[len("cancel "):].strip())
        elif line.strip():
            self._jobs.put(line)

    def _cancel(self, word: str) -> None:
        if not word.isdigit():
            print(f"ebb.handler: bad cancel line: cancel {word}", file=sys.stderr, flush=True)
            return
        with self._lock:
            if self._ctx is not None and self._ctx.id == int(word):
                self._ctx._cancel.set()
            else:
                self._cancels.add(int(word))  # its job line is read, not yet begun

    def _run(self, line: str, state: Any) -> None:
        try:
            spec = json.loads(line)
            if not isinstance(spec, dict):
                raise ValueError("not a JSON object")
            ctx = Context(int(spec["id"]), int(spec.get("attempt") or 1), int(spec.get("items") or 1),
                          spec.get("checkpoint") or None, state)
        except (ValueError, KeyError, TypeError) as e:
            _end(f"failed bad job line ({_one_line(str(e))}): {line[:200]}")
            return
        with self._lock:
            if ctx.id in self._cancels:
                ctx._cancel.set()
            self._cancels.clear()
            self._ctx = ctx
        job._current = job.Resume(ctx.checkpoint, ctx.items)
        failed = None
        value = None
        try:
            if not ctx.cancelled:
                value = self._fn(spec.get("payload"), ctx)
                if value is not None and not ctx.cancelled:
                    job.result(value)
        except Exception as e:
            traceback.print_exc()
            failed = f"{type(e).__name__}: {e}"
        finally:
            job._current = None
            with self._lock:
                self._ctx = None
        if ctx.cancelled:
            _end("failed cancelled")
        elif failed is not None:
            _end(f"failed {_one_line(failed)}")
        else:
            _end("done")


def _one_line(text: str) -> str:
    text = " ".join(text.split()) or "no reason given"
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def _end(line: str) -> None:
    """A job's last line, once what it printed is out: the lines before
    it are its log, those after it the next job's."""
    sys.stdout.flush()
    sys.stderr.flush()
    job._write(line)


@overload
def handler(fn: HandleFn) -> Handler: ...


@overload
def handler(*, setup: Callable[[], Any] | None = None) -> Callable[[HandleFn], Handler]: ...


def handler(fn: HandleFn | None = None, *,
            setup: Callable[[], Any] | None = None) -> Handler | Callable[[HandleFn], Handler]:
    """@ebb.handler, or @ebb.handler(setup=load): handle(payload, ctx) as a
    resident handler; setup() runs once before the first job and what it
    returns is every job's ctx.state. Start it with .run(). handle's
    return value, unless None, is the job's result; an exception fails
    the job with its type and message (the traceback goes to the job's
    log)."""
    if fn is not None:
        return Handler(fn, setup)

    def wrap(f: HandleFn) -> Handler:
        return Handler(f, setup)
    return wrap
