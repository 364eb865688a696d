"""The job's side (docs/JOBS.md): what a job run by `ebb worker` tells
it on its control descriptor (progress, checkpoints, its result), where
a resumed run starts from, and a hook for the SIGTERM that comes before a
stop. In a resident handler (ebb.handler) the same calls speak for the
job it runs now.

Outside ebb (no EBB_CONTROL_FD: a job tried by hand) the lines go
nowhere, so that the same program runs either way."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

_lock = threading.Lock()
_term_hooks: list[Callable[[], None]] = []
_terminating = False
# Run after the hooks: a resident handler's own (it stops when idle).
_term_last: Callable[[], None] | None = None


@dataclass(frozen=True)
class Resume:
    """Where a run starts: the checkpoint token its job last wrote in an
    earlier run (None on a first run), and the job's items (what progress
    and checkpoint count to)."""

    checkpoint: str | None
    items: int


# The job a resident handler runs now; None in a plain job, which reads
# its environment.
_current: Resume | None = None


def resume() -> Resume:
    """The checkpoint to resume from and the job's items: EBB_CHECKPOINT
    (empty on a first run) and EBB_ITEMS, or in a handler those of the
    job it runs."""
    if _current is not None:
        return _current
    return Resume(os.environ.get("EBB_CHECKPOINT") or None, int(os.environ.get("EBB_ITEMS") or 1))


def payload() -> Any:
    """The job's payload (EBB_PAYLOAD, parsed); None when it has none. A
    handler is handed it as handle's first argument."""
    text = os.environ.get("EBB_PAYLOAD")
    return None if text is None else json.loads(text)


def progress(n: int) -> None:
    """n items of the job are done (of its items, counted over every run)."""
    _write(f"progress {_count(n)}")


def checkpoint(token: str, n: int) -> None:
    """The job could resume from token, with n items done up to it: sent
    to serve at once, and handed to a later run by resume()."""
    if "\n" in token or "\0" in token:
        raise ValueError("checkpoint token: no newline or NUL byte")
    _write(f"checkpoint {token} {_count(n)}")


def result(value: Any) -> None:
    """The job's result, any JSON value: stored with the job when it
    succeeds and returned by GET /v1/jobs/ID (Client.get, wait, map). The
    last one written counts."""
    _write("result " + json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False))


def on_term(fn: Callable[[], None]) -> None:
    """Calls fn when the job gets SIGTERM (a stop, a cancel, a spot
    reclaim: docs/JOBS.md "Stopping"), so that it can finish the item
    under way, write a last checkpoint and exit within the grace. Without
    a hook SIGTERM ends the process at once, as it would any program.
    Call from the main thread: Python runs signal handlers there."""
    _install()
    _term_hooks.append(fn)


def terminating() -> bool:
    """Has SIGTERM come (once on_term, or an ebb.handler, took it over)?"""
    return _terminating


def _install() -> None:
    if signal.getsignal(signal.SIGTERM) is not _on_sigterm:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _terminating
    _terminating = True
    for fn in list(_term_hooks):
        fn()
    if _term_last is not None:
        _term_last()


def _count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"items {n!r}: expected an integer from 0")
    return n


def _write(line: str) -> None:
    """One control line, whole, to EBB_CONTROL_FD (under a lock: threads
    do not interleave their lines)."""
    fd = os.environ.get("EBB_CONTROL_FD")
    if not fd:
        return
    data = (line + "\n").encode()
    with _lock:
        while data:
            data = data[os.write(int(fd), data):]
