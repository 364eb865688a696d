#!/usr/bin/python3
"""ebb.handler's loop, driven as the worker drives a resident handler:
job lines and `cancel ID` on its stdin, its answers read from its
control descriptor (ready once after setup; per job progress,
checkpoint, result, and done or failed), its stdout and stderr the jobs'
logs; it ends at the end of its stdin, or at SIGTERM once the job under
way has ended."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import IO, Any

from ebbtest import CLIENT, PYTHON, TestCase, main, wait_for

HANDLER = """#!/usr/bin/python3
import os
import sys
import time
import ebb


def setup():
    with open(os.environ["SETUPS"], "a") as f:
        f.write("setup\\n")
    time.sleep(0.5)  # a model loaded
    return {"factor": 10}


@ebb.handler(setup=setup)
def handle(payload, ctx):
    print(f"job {ctx.id} attempt {ctx.attempt}: {payload}")
    if payload.get("fail"):
        raise ValueError(f"cannot do {payload['fail']}")
    if payload.get("wait_cancel"):
        ebb.job.checkpoint("waiting", 0)  # serve hears of it at once
        until = time.monotonic() + 30
        while not ctx.cancelled and time.monotonic() < until:
            time.sleep(0.01)
        return "not cancelled"
    if payload.get("until_term"):
        ebb.job.checkpoint("started", 0)
        until = time.monotonic() + 30
        while not ebb.job.terminating() and time.monotonic() < until:
            time.sleep(0.01)
        ebb.job.checkpoint("at-1", 1)
        raise RuntimeError("stopped by SIGTERM")
    if payload.get("unserializable"):
        return {1, 2}
    start = ebb.job.resume()
    pos = int(start.checkpoint or 0)
    while pos < start.items:
        pos += 1
        ebb.job.progress(pos)
        if pos % 2 == 0:
            ebb.job.checkpoint(str(pos), pos)
    print("to stderr", file=sys.stderr)
    if payload.get("none"):
        return None
    return {"x": payload["x"] * ctx.state["factor"], "from": int(start.checkpoint or 0)}


if __name__ == "__main__":
    handle.run()
"""


def _lines(stream: IO[bytes], into: queue.Queue[str | None]) -> None:
    for raw in stream:
        into.put(raw.decode().rstrip("\n"))
    into.put(None)


class Proc:
    """The handler as the worker runs it: pipes on its stdin, stdout,
    stderr and control descriptor, each read on a thread of its own."""

    def __init__(self, path: str, env: dict[str, str]) -> None:
        r, w = os.pipe()
        self.proc = subprocess.Popen([PYTHON, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, pass_fds=(w,),
                                     env=dict(os.environ, PYTHONPATH=CLIENT, EBB_CONTROL_FD=str(w), **env))
        os.close(w)
        self.control: queue.Queue[str | None] = queue.Queue()
        self.out: queue.Queue[str | None] = queue.Queue()
        self.err: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout and self.proc.stderr
        for stream, q in ((os.fdopen(r, "rb"), self.control), (self.proc.stdout, self.out),
                          (self.proc.stderr, self.err)):
            threading.Thread(target=_lines, args=(stream, q), daemon=True).start()

    def send(self, line: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def job(self, id: int, payload: Any, checkpoint: str | None = None, items: int = 1, attempt: int = 1) -> None:
        self.send(json.dumps({"id": id, "attempt": attempt, "payload": payload, "checkpoint": checkpoint,
                              "items": items}))

    def answers(self, until: str, timeout: float = 30) -> list[str]:
        """The control lines up to the first that starts with until."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.control.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no '{until}' within {timeout:g} s; the control lines: {got}") from None
            if line is None:
                raise AssertionError(f"the control pipe ended before '{until}' (exit {self.proc.poll()}); "
                                     f"lines: {got}; stderr: {drain(self.err)}")
            got.append(line)
            if line.startswith(until):
                return got

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def exited(self, timeout: float = 15) -> int:
        return self.proc.wait(timeout)


def drain(q: queue.Queue[str | None]) -> list[str]:
    out: list[str] = []
    while True:
        try:
            line = q.get_nowait()
        except queue.Empty:
            return out
        if line is not None:
            out.append(line)


def next_line(q: queue.Queue[str | None], timeout: float = 15) -> str | None:
    return q.get(timeout=timeout)


class Handler(TestCase):
    def start(self) -> Proc:
        self.setups = os.path.join(self.tmp, "setups")
        p = Proc(self.script("handler.py", HANDLER), {"SETUPS": self.setups})
        self.addCleanup(p.kill)
        return p

    def test_jobs_one_after_another(self) -> None:
        p = self.start()
        self.assertEqual(p.answers("ready"), ["ready"])
        p.job(1, {"x": 2}, items=4)
        self.assertEqual(p.answers("done"), ["progress 1", "progress 2", "checkpoint 2 2", "progress 3", "progress 4",
                                             "checkpoint 4 4", 'result {"x":20,"from":0}', "done"])
        self.assertEqual(next_line(p.out), "job 1 attempt 1: {'x': 2}")
        self.assertEqual(next_line(p.err), "to stderr")
        # A resumed job: resume() is its checkpoint and items.
        p.job(2, {"x": 3}, checkpoint="2", items=3, attempt=2)
        self.assertEqual(p.answers("done"), ["progress 3", 'result {"x":30,"from":2}', "done"])
        self.assertEqual(next_line(p.out), "job 2 attempt 2: {'x': 3}")
        # None returned: no result line.
        p.job(3, {"x": 1, "none": True})
        self.assertEqual(p.answers("done"), ["progress 1", "done"])
        # Set up once for all of them.
        with open(self.setups) as f:
            self.assertEqual(f.read(), "setup\n")
        assert p.proc.stdin
        p.proc.stdin.close()
        self.assertEqual(p.exited(), 0)

    def test_failures(self) -> None:
        p = self.start()
        p.answers("ready")
        p.job(4, {"fail": "this\nat all"})
        self.assertEqual(p.answers("failed"), ["failed ValueError: cannot do this at all"])
        err = drain(p.err)
        wait = time.monotonic() + 15
        while "ValueError: cannot do this" not in err and time.monotonic() < wait:
            err.append(str(next_line(p.err)))
        self.assertIn("Traceback (most recent call last):", err)
        p.job(5, {"unserializable": True})
        self.assertIn("failed TypeError: Object of type set is not JSON serializable", p.answers("failed"))
        p.send("not json")
        self.assertRegex(p.answers("failed")[0], r"^failed bad job line \(.*\): not json$")
        p.send('{"payload": 1}')
        self.assertEqual(p.answers("failed"), ["failed bad job line ('id'): {\"payload\": 1}"])
        # Still serving.
        p.job(6, {"x": 1})
        self.assertEqual(p.answers("done")[-2:], ['result {"x":10,"from":0}', "done"])

    def test_cancel(self) -> None:
        p = self.start()
        p.answers("ready")
        p.job(7, {"wait_cancel": True})
        self.assertEqual(p.answers("checkpoint"), ["checkpoint waiting 0"])
        p.send("cancel 8")  # not the job under way: nothing
        p.send("cancel 7")
        self.assertEqual(p.answers("failed"), ["failed cancelled"])
        # A cancel that comes right behind its job's line: the job is not run.
        p.job(9, {"wait_cancel": True})
        p.send("cancel 9")
        self.assertEqual(p.answers("failed")[-1], "failed cancelled")
        p.job(10, {"x": 1})
        self.assertEqual(p.answers("done")[-1], "done")

    def test_sigterm(self) -> None:
        # While idle: it ends at once.
        p = self.start()
        p.answers("ready")
        p.proc.send_signal(signal.SIGTERM)
        self.assertEqual(p.exited(), 0)
        # While a job runs: the job hears it (terminating()), ends, and
        # the handler takes no other.
        p = self.start()
        p.answers("ready")
        p.job(11, {"until_term": True})
        p.answers("checkpoint started")
        p.job(12, {"x": 1})
        p.proc.send_signal(signal.SIGTERM)
        self.assertEqual(p.answers("failed"), ["checkpoint at-1 1", "failed RuntimeError: stopped by SIGTERM"])
        self.assertEqual(p.exited(), 0)
        self.assertIsNone(next_line(p.control))

    def test_setup_fails(self) -> None:
        path = self.script("broken.py", "import ebb\n\n\ndef setup():\n    raise OSError('no model')\n\n\n"
                                        "ebb.handler(lambda p, c: p, setup=setup).run()\n")
        p = Proc(path, {})
        self.assertEqual(p.exited(), 1)
        self.assertIsNone(next_line(p.control), "ready before a setup that failed")
        self.assertIn("OSError: no model", drain(p.err))

    def test_in_a_real_worker(self) -> None:
        # A real worker: the jobs' results, a cancel answered in time (so
        # the handler is kept, not started again), the job's log.
        s = self.serve(f"[type.h]\nhandler = {PYTHON} {self.script('handler.py', HANDLER)}\n")
        self.setups = os.path.join(self.tmp, "setups")
        self.worker(s, env={"SETUPS": self.setups})
        c = s.client()
        job = c.submit(type="h", payload={"x": 4}, items=2)
        done = c.wait(job["id"], timeout=60)
        self.assertEqual((done["state"], done["items_done"], done["result"]), ("succeeded", 2, {"x": 40, "from": 0}))
        logs = {(ln.stream, ln.text) for ln in c.logs(job["id"], follow=False)}
        self.assertEqual(logs, {("stdout", "job 1 attempt 1: {'x': 4}"), ("stderr", "to stderr")})
        waiting = c.submit(type="h", payload={"wait_cancel": True})
        wait_for(lambda: c.get(waiting["id"]).get("checkpoint") == "waiting", "the job under way", log=s)
        self.assertEqual(c.cancel(waiting["id"])["state"], "cancelled")
        after = c.submit(type="h", payload={"x": 1})
        self.assertEqual(c.wait(after["id"], timeout=60)["result"], {"x": 10, "from": 0})
        with open(self.setups) as f:
            self.assertEqual(f.read(), "setup\n", "the handler was started again")

    def test_real_worker_stopped(self) -> None:
        # The worker stopped with a job under way: SIGTERM reaches the
        # handler, whose job checkpoints; the job is interrupted, to
        # resume elsewhere from that checkpoint.
        s = self.serve(f"[type.h]\nhandler = {PYTHON} {self.script('handler.py', HANDLER)}\n")
        self.setups = os.path.join(self.tmp, "setups")
        w = self.worker(s, env={"SETUPS": self.setups})
        c = s.client()
        job = c.submit(type="h", payload={"until_term": True})
        wait_for(lambda: c.get(job["id"]).get("checkpoint") == "started", "the job under way", log=s)
        w.stop()
        stopped = c.get(job["id"])
        self.assertEqual((stopped["state"], stopped["interruptions"], stopped.get("checkpoint")), ("queued", 1, "at-1"),
                         stopped)

    def test_plain_decorator(self) -> None:
        path = self.script("plain.py", "import ebb\n\n\n@ebb.handler\ndef handle(payload, ctx):\n"
                                       "    return [payload, ctx.id, ctx.state]\n\n\n"
                                       "assert handle('direct', ebb.Context(1, 1, 1, None, 's')) == ['direct', 1, 's']\n"
                                       "handle.run()\n")
        p = Proc(path, {})
        p.answers("ready")
        p.job(13, "p")
        self.assertEqual(p.answers("done"), ['result ["p",13,null]', "done"])


if __name__ == "__main__":
    main()
