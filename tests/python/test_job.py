#!/usr/bin/python3
"""ebb.job, the job's side: a job run by a real `ebb worker` that counts
its items with progress and checkpoints, is stopped half-way (SIGTERM:
its on_term hook makes it checkpoint) and resumed by another worker from
resume(); the payload; the lines as the worker reads them; the same job
run by hand, outside ebb."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

from ebbtest import CLIENT, PYTHON, TestCase, ebb, main, wait_for

ITEMS = 60

# Appends "item N" to the payload's file for each item, resuming from
# its checkpoint, stopping after the item under way on SIGTERM.
COUNT = """#!/usr/bin/python3
import time
import ebb

stopping = []
ebb.job.on_term(lambda: stopping.append(1))
start = ebb.job.resume()
pos = int(start.checkpoint or 0)
print(f"from {pos} of {start.items}", flush=True)
out = ebb.job.payload()["out"]
while pos < start.items and not stopping:
    time.sleep(0.05)
    with open(out, "a") as f:
        f.write(f"item {pos}\\n")
    pos += 1
    ebb.job.progress(pos)
    if pos % 10 == 0:
        ebb.job.checkpoint(str(pos), pos)
ebb.job.checkpoint(str(pos), pos)
print(f"stopped at {pos}" if stopping else "done", flush=True)
"""


class Job(TestCase):
    def test_stop_and_resume(self) -> None:
        s = self.serve()
        c = s.client()
        out = os.path.join(self.tmp, "items.txt")
        job = c.submit([self.script("count.py", COUNT)], items=ITEMS, payload={"out": out})
        first = self.worker(s, "first")
        wait_for(lambda: c.get(job["id"])["items_done"] >= 10, "a checkpoint", log=s)
        first.stop()
        stopped = c.get(job["id"])
        self.assertEqual((stopped["state"], stopped["interruptions"], stopped["attempts"]), ("queued", 1, 0))
        self.assertEqual(stopped["checkpoint"], str(stopped["items_done"]))
        self.assertLess(stopped["items_done"], ITEMS, "the job was not stopped half-way")
        self.assertEqual(stopped["items_lost"], 0, "on_term's last checkpoint covers every item done")
        self.worker(s, "second")
        done = c.wait(job["id"], timeout=60)
        self.assertEqual((done["state"], done["items_done"]), ("succeeded", ITEMS))
        with open(out) as f:
            self.assertEqual(f.read(), "".join(f"item {i}\n" for i in range(ITEMS)))
        logs = [ln.text for ln in c.logs(job["id"], follow=False, attempt=1)]
        self.assertEqual(logs, ["from 0 of 60", f"stopped at {stopped['items_done']}"])
        logs = [ln.text for ln in c.logs(job["id"], follow=False, attempt=2)]
        self.assertEqual(logs, [f"from {stopped['items_done']} of 60", "done"])

    def test_lines(self) -> None:
        # What each call writes on the control descriptor, as the worker reads it.
        r, w = os.pipe()
        code = ("import ebb\n"
                "ebb.job.progress(3)\n"
                "ebb.job.checkpoint('s3://ckpt/7 with spaces', 12)\n"
                "ebb.job.result({'n': 3, 'name': 'caf\\u00e9', 'list': [1.5, None, True]})\n"
                "ebb.job.result('second wins')\n")
        env = dict(os.environ, PYTHONPATH=CLIENT, EBB_CONTROL_FD=str(w))
        p = subprocess.run([PYTHON, "-c", code], env=env, pass_fds=(w,), capture_output=True, text=True)
        os.close(w)
        with os.fdopen(r, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(lines, ["progress 3", "checkpoint s3://ckpt/7 with spaces 12",
                                 'result {"n":3,"name":"café","list":[1.5,null,true]}', 'result "second wins"'])

    def test_bad_values(self) -> None:
        calls: list[Callable[[], None]] = [
            lambda: ebb.job.progress(-1), lambda: ebb.job.progress(True), lambda: ebb.job.checkpoint("a\nb", 1),
            lambda: ebb.job.checkpoint("a", -2), lambda: ebb.job.result(float("nan"))]
        for call in calls:
            with self.assertRaises(ValueError):
                call()
        with self.assertRaises(TypeError):
            ebb.job.result(object())

    def test_outside_ebb(self) -> None:
        # Run by hand: no control descriptor, a first run of one item.
        code = ("import ebb\n"
                "ebb.job.progress(1); ebb.job.checkpoint('x', 1); ebb.job.result(1)\n"
                "print(ebb.job.resume(), ebb.job.payload(), ebb.job.terminating())\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("EBB_")}
        p = subprocess.run([PYTHON, "-c", code], env=dict(env, PYTHONPATH=CLIENT), capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "Resume(checkpoint=None, items=1) None False\n")


if __name__ == "__main__":
    main()
