"""What the Python suites share, as tests/harness.h is for the C ones:
temp dirs, a real `ebb serve` on a port the kernel picks (its config
written as harness_serve() writes it), `ebb worker` processes started by
hand, waits that poll a condition with a deadline, and main(), which runs
a file's tests and prints cmocka's lines, so that tests/run.sh counts
them as it counts the C suites'.

Environment: EBB_BIN (the ebb binary; make test sets it), EBB_SRC (the
source tree), EBB_TEST=PATTERN to run only the tests it matches,
EBB_KEEP_TMP=1 to keep the temp dirs (configs, serve's and the workers'
logs) to look at."""

from __future__ import annotations

import ctypes
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

SRC = os.path.abspath(os.environ.get("EBB_SRC") or os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.abspath(os.environ.get("EBB_BIN") or os.path.join(SRC, "build", "ebb"))
CLIENT = os.path.join(SRC, "clients", "python")
# Debian's Python, whatever python3 comes first in PATH: the one the
# client is for (Debian 12's 3.11) and the one its packages (setuptools,
# mypy) are installed for.
PYTHON = "/usr/bin/python3"
ADMIN = "admin-secret-0123456789"

sys.path.insert(0, CLIENT)
import ebb  # noqa: E402  (the client of this tree, not one installed)

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    """In a child before exec: killed with the test process, as
    child_setup() does for the C tests."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def api(serve: Serve, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """A call straight through urllib, not through the client under test
    (a stand-in worker, a count to check): its status and JSON reply."""
    req = urllib.request.Request(serve.url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    if serve.token:
        req.add_header("Authorization", f"Bearer {serve.token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def wait_for(cond: Callable[[], Any], what: str, timeout: float = 30, log: Serve | None = None) -> Any:
    """Polls cond every 50 ms until it returns something true, which it
    returns; after timeout seconds fails with what (and serve's log)."""
    until = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > until:
            raise AssertionError(f"{what}: not within {timeout:g} s" + (f"\n{log.log_text()}" if log else ""))
        time.sleep(0.05)


class Serve:
    """A real `ebb serve` with its own temp dir, config and data."""

    def __init__(self, tmp: str, conf_extra: str = "", tokens: bool = False, test_clock: bool = False,
                 tls: tuple[str, str] | None = None, port: int = 0) -> None:
        self.dir = tmp
        self.conf = os.path.join(tmp, "ebb.conf")
        self.token = ADMIN if tokens else None
        self.test_clock = test_clock
        self.scheme = "https" if tls else "http"
        with open(self.conf, "w") as f:
            f.write("# written by tests/python/ebbtest.py\n"
                    f"[server]\nlisten = 127.0.0.1:{port}\ndata_dir = {tmp}/data\n"
                    + (f"tls_cert = {tls[0]}\ntls_key = {tls[1]}\n" if tls else "")
                    + "[store]\nkind = sqlite\n"
                    + (f"[token.admin]\nsecret = {ADMIN}\nrole = admin\n" if tokens else "")
                    + conf_extra)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start()

    def start(self) -> None:
        self.starts += 1
        self.log = os.path.join(self.dir, f"serve-{self.starts}.log")
        argv = [BIN, "serve", "-c", self.conf] + (["--test-clock"] if self.test_clock else [])
        with open(self.log, "wb") as err, open(os.path.join(self.dir, f"serve-{self.starts}.out"), "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         preexec_fn=_die_with_parent)
        until = time.monotonic() + 15
        while not (port := self._logged_port()):
            if self.proc.poll() is not None:
                raise AssertionError(f"ebb serve exited with status {self.proc.returncode} before it "
                                     f"listened\n{self.log_text()}")
            if time.monotonic() > until:
                raise AssertionError(f"ebb serve did not log 'msg=listening ... port=' within 15 s\n"
                                     f"{self.log_text()}")
            time.sleep(0.01)
        self.port = port
        self.url = f"{self.scheme}://127.0.0.1:{port}"

    def _logged_port(self) -> int:
        m = re.search(r"msg=listening [^\n]* port=(\d+)[^\n]*\n", self.log_text())
        return int(m.group(1)) if m else 0

    def log_text(self) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def client(self, **kw: Any) -> ebb.Client:
        kw.setdefault("token", self.token)
        return ebb.Client(self.url, **kw)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class Worker:
    """`ebb worker --server URL --name NAME --grace 200ms ARGS...` started
    by hand in serve's dir, with the client of this tree on its jobs'
    PYTHONPATH."""

    def __init__(self, serve: Serve, name: str = "hand", args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None) -> None:
        self.log = os.path.join(serve.dir, f"worker-{name}.log")
        # Its jobs' python3 is Debian's, first in PATH.
        environ = dict(os.environ, PYTHONPATH=CLIENT, PATH=f"{os.path.dirname(PYTHON)}:{os.environ['PATH']}",
                       **(env or {}))
        if serve.token:
            environ["EBB_TOKEN"] = serve.token
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([BIN, "worker", "--server", serve.url, "--name", name, "--grace", "200ms",
                                          *args], cwd=serve.dir, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=environ, preexec_fn=_die_with_parent)

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM, and its exit status once it has exited (killed after
        timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"the worker still ran {timeout:g} s after SIGTERM")
        return self.proc.returncode


class TestCase(unittest.TestCase):
    """A test with a temp dir of its own, and the serves and workers it
    starts stopped (and the dir removed) when it ends, failed or not."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="ebb-py.")
        self._serves: list[Serve] = []
        self._workers: list[Worker] = []

    def tearDown(self) -> None:
        for w in self._workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()
        for s in self._serves:
            s.stop()
        if os.environ.get("EBB_KEEP_TMP"):
            print(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def serve(self, conf_extra: str = "", **kw: Any) -> Serve:
        d = tempfile.mkdtemp(prefix="serve.", dir=self.tmp)
        s = Serve(d, conf_extra, **kw)
        self._serves.append(s)
        return s

    def worker(self, serve: Serve, name: str = "hand", args: tuple[str, ...] = (),
               env: dict[str, str] | None = None) -> Worker:
        w = Worker(serve, name, args, env)
        self._workers.append(w)
        return w

    def script(self, name: str, text: str) -> str:
        """text as an executable file of the test's dir."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
        return path


def main() -> None:
    """Runs the calling file's TestCases, printing what cmocka prints
    (tests/run.sh reads the summary); exit status 1 if one failed."""
    tests: list[unittest.TestCase] = []
    only = os.environ.get("EBB_TEST")
    pending: list[unittest.TestSuite | unittest.TestCase] = [
        unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])]
    while pending:
        t = pending.pop(0)
        if isinstance(t, unittest.TestSuite):
            pending[:0] = list(t)
        elif not only or fnmatch.fnmatch(t.id().rsplit(".", 1)[-1], only):
            tests.append(t)
    print(f"[==========] Running {len(tests)} test(s).", flush=True)
    failed: list[str] = []
    skipped: list[str] = []
    for t in tests:
        name = t.id().rsplit(".", 1)[-1]
        print(f"[ RUN      ] {name}", flush=True)
        result = unittest.TestResult()
        t.run(result)
        for _, text in result.errors + result.failures:
            print(text, end="", flush=True)
        if result.errors or result.failures:
            print(f"[  FAILED  ] {name}", flush=True)
            failed.append(name)
        elif result.skipped:
            print(f"{result.skipped[0][1]}\n[  SKIPPED ] {name}", flush=True)
            skipped.append(name)
        else:
            print(f"[       OK ] {name}", flush=True)
    print(f"[==========] {len(tests)} test(s) run.")
    print(f"[  PASSED  ] {len(tests) - len(failed) - len(skipped)} test(s).")
    if skipped:
        print(f"[  SKIPPED ] {len(skipped)} test(s), listed below:")
        for name in skipped:
            print(f"[  SKIPPED ] {name}")
    if failed:
        print(f"[  FAILED  ] {len(failed)} test(s), listed below:")
        for name in failed:
            print(f"[  FAILED  ] {name}")
        print(f"\n {len(failed)} FAILED TEST(S)")
    sys.stdout.flush()
    sys.exit(1 if failed else 0)


__all__ = ["ADMIN", "BIN", "CLIENT", "PYTHON", "SRC", "Serve", "TestCase", "Worker", "api", "ebb", "main", "wait_for"]
