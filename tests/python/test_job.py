#!/usr/bin/python3
"""ebb.job, the job's side: a result returned through a real worker; the
lines it writes as the worker reads them, the values it refuses, the
same job run by hand, outside ebb. (A
job that checkpoints, is stopped and resumes in a real worker is
docs/PYTHON.md's count.py: test_python_doc.py.)"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

from ebbtest import CLIENT, PYTHON, TestCase, ebb, main

class Job(TestCase):
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

    def test_result(self) -> None:
        s = self.serve()
        self.worker(s)
        c = s.client()
        script = self.script("result.py", "#!/usr/bin/python3\nimport ebb\n\n"
                                          "ebb.job.result('a first one')\n"
                                          "ebb.job.result({'n': 3, 'payload': ebb.job.payload()})\n")
        job = c.submit([script], payload=[1, "two"])
        self.assertEqual(c.wait(job["id"], timeout=60)["result"], {"n": 3, "payload": [1, "two"]})

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
