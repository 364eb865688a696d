#!/usr/bin/python3
"""The client as a package: installed with no network into a venv of
Debian's Python (pip install --no-build-isolation, Debian's setuptools),
used from there against a real serve; its types clean under Debian's
mypy --strict, and seen through its py.typed marker by a program that
uses it."""

from __future__ import annotations

import os
import shutil
import subprocess

from ebbtest import CLIENT, PYTHON, SRC, TestCase, main

MYPY = "/usr/bin/mypy"


class Package(TestCase):
    def run_ok(self, *argv: str, env: dict[str, str] | None = None) -> str:
        p = subprocess.run(argv, cwd=self.tmp, capture_output=True, text=True, env=env, timeout=150)
        self.assertEqual(p.returncode, 0, f"{' '.join(argv)}:\n{p.stdout}{p.stderr}")
        return p.stdout

    def mypy(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, MYPYPATH=CLIENT)
        return subprocess.run([MYPY, "--strict", "--cache-dir", os.path.join(self.tmp, "mypy-cache"), *args],
                              cwd=self.tmp, capture_output=True, text=True, timeout=150, env=env)

    def test_install_into_venv(self) -> None:
        # A copy: pip builds in the tree it is given.
        src = shutil.copytree(CLIENT, os.path.join(self.tmp, "python"),
                              ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        venv = os.path.join(self.tmp, "venv")
        self.run_ok(PYTHON, "-m", "venv", "--system-site-packages", venv)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.run_ok(f"{venv}/bin/pip", "install", "--no-build-isolation", "--no-index", "--quiet", src, env=env)
        site = self.run_ok(f"{venv}/bin/python", "-c", "import ebb, os; print(os.path.dirname(ebb.__file__))",
                           env=env).strip()
        self.assertTrue(site.startswith(venv), site)
        self.assertTrue(os.path.exists(os.path.join(site, "py.typed")))
        s = self.serve()
        out = self.run_ok(f"{venv}/bin/python", "-c",
                          "import ebb, sys\n"
                          "c = ebb.Client(sys.argv[1])\n"
                          "job = c.submit(['true'], payload={'from': 'venv'})\n"
                          "print(c.get(job['id'])['payload']['from'])\n", s.url, env=env)
        self.assertEqual(out, "venv\n")

        # A program of one's own, checked against the installed package:
        # mypy reads its types (py.typed), and finds a wrong call.
        prog = os.path.join(self.tmp, "prog.py")
        with open(prog, "w") as f:
            f.write("import ebb\n\n\ndef first_result(c: ebb.Client) -> object:\n"
                    "    return next(c.map([1, 2], type='square'))\n\n\n"
                    "def state(c: ebb.Client, job: int) -> str:\n"
                    "    return str(c.wait(job, timeout=60.0)['state'])\n")
        p = self.mypy("--python-executable", f"{venv}/bin/python", prog)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(prog, "a") as f:
            f.write("\n\ndef wrong(c: ebb.Client) -> None:\n    c.get('seven')\n")
        p = self.mypy("--python-executable", f"{venv}/bin/python", prog)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn('Argument 1 to "get" of "Client" has incompatible type "str"; expected "int"', p.stdout)

    def test_mypy_strict(self) -> None:
        p = self.mypy(os.path.join(CLIENT, "ebb"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Success: no issues found", p.stdout)
        # The suites are typed too.
        p = self.mypy(*sorted(os.path.join(SRC, "tests", "python", f) for f in os.listdir(
            os.path.join(SRC, "tests", "python")) if f.endswith(".py")))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


if __name__ == "__main__":
    main()
