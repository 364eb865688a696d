#!/usr/bin/python3
"""ebb.Client against a real `ebb serve` and real `ebb worker`s: submit,
get and wait; submit_many's batches and idempotency keys; logs followed
attempt after attempt; cancel and requeue; map's results in order; the
API's errors as ApiError; HTTPS with a CA file; EBB_SERVER and
EBB_TOKEN."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Any
from unittest import mock

from ebbtest import PYTHON, TestCase, api, ebb, main, wait_for


class Submit(TestCase):
    def test_submit_get_wait(self) -> None:
        s = self.serve()
        c = s.client()
        job = c.submit(["sh", "-c", "echo hello"], type="echo", items=3, priority=5)
        self.assertEqual((job["state"], job["type"], job["items"], job["priority"]), ("queued", "echo", 3, 5))
        self.assertEqual(job["command"], ["sh", "-c", "echo hello"])
        self.assertEqual(c.get(job["id"])["runs"], [])
        other = c.submit(["true"], payload={"n": 1})
        self.assertEqual(other["payload"], {"n": 1})
        self.worker(s)
        seen: list[tuple[int, str]] = []
        done = c.wait([other["id"], job["id"]], timeout=60, progress=lambda j: seen.append((j["id"], j["state"])))
        self.assertEqual([(j["id"], j["state"]) for j in done], [(other["id"], "succeeded"), (job["id"], "succeeded")])
        self.assertEqual(done[1]["items_done"], 3)
        # Each job's last word to progress is its final state.
        self.assertEqual([x for x in seen if x[1] == "succeeded"], [(other["id"], "succeeded"), (job["id"], "succeeded")])
        one = c.wait(job["id"])
        self.assertEqual((one["state"], len(one["runs"]), one["runs"][0]["worker"]), ("succeeded", 1, "hand"))
        with self.assertRaises(TypeError):
            c.submit("echo hello")  # a str is a Sequence[str] to mypy: refused when called

    def test_wait_long_polls(self) -> None:
        # While the job runs, wait asks serve once and is answered at the
        # job's end: no polling loop.
        s = self.serve()
        c = s.client()
        job = c.submit(["sleep", "5"])
        self.worker(s)
        wait_for(lambda: c.get(job["id"])["state"] == "leased", "the job leased", log=s)
        with mock.patch.object(c._http, "call", wraps=c._http.call) as call:
            started = time.monotonic()
            self.assertEqual(c.wait(job["id"], timeout=60)["state"], "succeeded")
            took = time.monotonic() - started
        self.assertEqual(call.call_count, 1, call.call_args_list)
        self.assertEqual(call.call_args.kwargs["query"], {"wait": 30})
        self.assertLess(took, 30, "answered by the wait's end, not the job's")

    def test_wait_timeout(self) -> None:
        s = self.serve()
        c = s.client()
        a, b = c.submit(["true"])["id"], c.submit(["true"])["id"]
        started = time.monotonic()
        with self.assertRaises(ebb.WaitTimeout) as e:
            c.wait([a, b], timeout=1.5)
        took = time.monotonic() - started
        self.assertEqual(e.exception.pending, [a, b])
        self.assertIsInstance(e.exception, TimeoutError)
        self.assertGreaterEqual(took, 1.4)
        self.assertLess(took, 20)

    def test_submit_many_idempotent(self) -> None:
        s = self.serve("[queue]\nmax_queued = 10000\n")
        c = s.client()
        jobs = [{"command": ["echo", str(i)], "type": "many"} for i in range(2500)]
        ids = c.submit_many(jobs, batch=1000, key="run-7")
        self.assertEqual(len(ids), 2500)
        self.assertEqual(len(set(ids)), 2500)
        self.assertEqual(c.get(ids[1234])["command"], ["echo", "1234"])
        self.assertEqual(c.get(ids[2499])["idempotency_key"], "run-7-2499")
        # The same call again (a retry after an error, another process):
        # nothing queued twice, the same ids.
        self.assertEqual(c.submit_many(jobs, batch=700, key="run-7"), ids)
        self.assertEqual(api(s, "GET", "/v1/stats")[1]["states"]["queued"], 2500)
        # Another key is other jobs.
        more = c.submit_many(jobs[:10], key="run-8")
        self.assertTrue(set(more).isdisjoint(ids))
        with self.assertRaises(ValueError):
            c.submit_many(jobs, batch=1001)

    def test_submit_many_refusals_and_max_body(self) -> None:
        s = self.serve("[server]\nmax_body = 8KiB\n")
        c = s.client()
        # 40 jobs of ~1 KiB: 40 KiB a request is past max_body; the client
        # sends them in halves until they fit, in order.
        jobs: list[dict[str, Any]] = [{"payload": {"i": i, "pad": "x" * 1000}, "command": ["true"]} for i in range(40)]
        ids = c.submit_many(jobs, key="big")
        self.assertEqual([c.get(i)["payload"]["i"] for i in ids], list(range(40)))
        jobs = [{"command": ["true"]}, {"command": ["true"], "lane": "nope"}, {"command": ["true"]}]
        with self.assertRaises(ebb.SubmitError) as e:
            c.submit_many(jobs)
        self.assertEqual(list(e.exception.errors), [1])
        err = e.exception.errors[1]
        self.assertEqual((err.status, err.code, err.field), (400, "bad_value", "lane"))
        self.assertIsNone(e.exception.ids[1])
        queued = [i for i in e.exception.ids if i is not None]
        self.assertEqual([c.get(i)["state"] for i in queued], ["queued", "queued"])
        # One job past max_body alone cannot be split.
        with self.assertRaises(ebb.ApiError) as big:
            c.submit_many([{"payload": "x" * 9000, "command": ["true"]}])
        self.assertEqual((big.exception.status, big.exception.code), (413, "too_large"))


class Logs(TestCase):
    def test_follow_attempts(self) -> None:
        s = self.serve("[queue]\nretry_base = 0s\n")
        c = s.client()
        marker = os.path.join(self.tmp, "ran-once")
        # The first attempt writes, fails; the second writes and succeeds.
        script = self.script("twice.sh", f"""#!/bin/sh
echo "attempt $EBB_ATTEMPT"
echo "to stderr" >&2
if [ ! -e {marker} ]; then touch {marker}; exit 3; fi
for i in 1 2 3; do echo "line $i"; sleep 0.2; done
""")
        job = c.submit([script], max_attempts=2)
        lines: list[ebb.LogLine] = []
        follower = threading.Thread(target=lambda: lines.extend(c.logs(job["id"])))
        follower.start()
        self.worker(s)
        follower.join(90)
        self.assertFalse(follower.is_alive(), "logs(follow=True) did not end with the job")
        self.assertEqual(c.get(job["id"])["state"], "succeeded")
        # In order within a stream (two pipes: not between them).
        for stream, want in (("stdout", [(1, "attempt 1"), (2, "attempt 2"), (2, "line 1"), (2, "line 2"), (2, "line 3")]),
                             ("stderr", [(1, "to stderr"), (2, "to stderr")])):
            self.assertEqual([(ln.attempt, ln.text) for ln in lines if ln.stream == stream], want)
        self.assertEqual([ln.attempt for ln in lines], sorted(ln.attempt for ln in lines))
        self.assertEqual([ln.seq for ln in lines if ln.attempt == 2][:1], [0])
        # Not following: what serve has now, of the latest attempt or of one asked for.
        self.assertEqual([ln.text for ln in c.logs(job["id"], follow=False)][-1], "line 3")
        self.assertEqual([ln.text for ln in c.logs(job["id"], follow=False, attempt=1)],
                         ["attempt 1", "to stderr"])


class CancelRequeue(TestCase):
    def test_cancel_and_requeue(self) -> None:
        s = self.serve()
        c = s.client()
        job = c.submit(["true"])
        self.assertEqual(c.cancel(job["id"])["state"], "cancelled")
        with self.assertRaises(ebb.ApiError) as e:
            c.cancel(job["id"])
        self.assertEqual((e.exception.status, e.exception.code), (409, "already_finished"))
        self.assertEqual(c.wait(job["id"], timeout=5)["state"], "cancelled")

        marker = os.path.join(self.tmp, "may-succeed")
        script = self.script("fails.sh", f"#!/bin/sh\necho 'checkpoint at-7 7' >&3\n[ -e {marker} ] || exit 4\n")
        failing = c.submit([script], max_attempts=1, items=10)
        w = self.worker(s)
        dead = c.wait(failing["id"], timeout=60)
        self.assertEqual((dead["state"], dead["checkpoint"], dead["items_done"]), ("dead", "at-7", 7))
        w.stop()
        again = c.requeue(failing["id"])
        self.assertEqual((again["state"], again["attempts"], again["checkpoint"]), ("queued", 0, "at-7"))
        with self.assertRaises(ebb.ApiError) as e:
            c.requeue(failing["id"])
        self.assertEqual((e.exception.status, e.exception.code), (409, "not_failed"))
        open(marker, "w").close()
        self.worker(s, "hand2")
        self.assertEqual(c.wait(failing["id"], timeout=60)["state"], "succeeded")

    def test_cancel_running(self) -> None:
        s = self.serve()
        c = s.client()
        job = c.submit(["sleep", "600"])
        self.worker(s)
        wait_for(lambda: c.get(job["id"])["state"] == "leased", "the job leased", log=s)
        started = time.monotonic()
        self.assertEqual(c.cancel(job["id"])["state"], "cancelled")
        self.assertEqual(c.wait(job["id"], timeout=30)["runs"][0]["outcome"], "cancelled")
        self.assertLess(time.monotonic() - started, 30)


def stand_in_worker(s: Any, stop: threading.Event, work: Any) -> None:
    """Leases payload jobs through the worker API and completes each with
    work(payload), newest first, so that results come out of order, or
    fails it when work raises."""
    while not stop.is_set():
        st, reply = api(s, "POST", "/v1/lease", {"worker": "stand-in", "gpus": 0, "max_jobs": 100, "wait_s": 1})
        assert st == 200, reply
        for job in sorted(reply["jobs"], key=lambda j: -int(j["id"])):
            token = job["lease"]["token"]
            try:
                body = {"lease_token": token, "result": work(job["payload"])}
                api(s, "POST", f"/v1/jobs/{job['id']}/complete", body)
            except ValueError as e:
                api(s, "POST", f"/v1/jobs/{job['id']}/fail", {"lease_token": token, "error": str(e), "retry": False})


class Map(TestCase):
    def test_map_in_order(self) -> None:
        s = self.serve(tokens=True)
        c = s.client()
        stop = threading.Event()

        def work(p: Any) -> Any:
            if p == 13:
                raise ValueError("13 is unlucky")
            return {"square": p * p}

        t = threading.Thread(target=stand_in_worker, args=(s, stop, work))
        t.start()
        try:
            # A command for serve, which wants one of a type without a
            # handler; the stand-in runs the payload.
            got = list(c.map(range(12), type="square", gpus=0, command=["square"]))
            self.assertEqual(got, [{"square": i * i} for i in range(12)])
            it = c.map([11, 12, 13, 14], type="square", gpus=0, key="m", command=["square"])
            self.assertEqual([next(it), next(it)], [{"square": 121}, {"square": 144}])
            with self.assertRaises(ebb.JobFailed) as e:
                next(it)
            self.assertEqual((e.exception.state, e.exception.error), ("failed", "13 is unlucky"))
            self.assertEqual(c.get(e.exception.id)["payload"], 13)
        finally:
            stop.set()
            t.join()


SQUARE = """#!/usr/bin/python3
import os
import ebb


def setup():
    with open(os.environ["SETUPS"], "a") as f:
        f.write("setup\\n")


@ebb.handler(setup=setup)
def handle(payload, ctx):
    if payload == 13:
        raise ValueError("13 is unlucky")
    return {"square": payload * payload}


handle.run()
"""


class MapHandler(TestCase):
    def test_map_with_a_handler(self) -> None:
        # A real worker hands the payload jobs to the type's handler,
        # started once, and sends each result with its complete.
        handler = self.script("square.py", SQUARE)
        s = self.serve(f"[type.square]\nhandler = {PYTHON} {handler}\n")
        setups = os.path.join(self.tmp, "setups")
        self.worker(s, env={"SETUPS": setups})
        c = s.client()
        payloads = [i for i in range(40) if i != 13]
        self.assertEqual(list(c.map(payloads, type="square")), [{"square": i * i} for i in payloads])
        with open(setups) as f:
            self.assertEqual(f.read(), "setup\n")
        it = c.map([12, 13], type="square", max_attempts=1)
        self.assertEqual(next(it), {"square": 144})
        with self.assertRaises(ebb.JobFailed) as e:
            next(it)
        # The handler's REASON, then its last lines on stderr (the traceback).
        self.assertEqual(e.exception.state, "dead")
        self.assertRegex(e.exception.error or "", r"^ValueError: 13 is unlucky: .*\| ValueError: 13 is unlucky$")


class Errors(TestCase):
    def test_api_errors(self) -> None:
        s = self.serve(tokens=True)
        with self.assertRaises(ebb.ApiError) as e:
            s.client().submit(["true"], lane="fast")
        self.assertEqual((e.exception.status, e.exception.code, e.exception.field), (400, "bad_value", "lane"))
        self.assertIn("lane 'fast' is not one of [queue] lanes", e.exception.message)
        with self.assertRaises(ebb.ApiError) as e:
            s.client().submit(["true"], colour="red")
        self.assertEqual((e.exception.code, e.exception.field), ("unknown_field", "colour"))
        with self.assertRaises(ebb.ApiError) as e:
            s.client().get(999)
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        with self.assertRaises(ebb.ApiError) as e:
            s.client(token="").get(1)
        self.assertEqual((e.exception.status, e.exception.code), (401, "unauthorized"))
        with self.assertRaises(ebb.ApiError) as e:
            s.client(token="nope").submit(["true"])
        self.assertEqual((e.exception.status, e.exception.message), (401, "unknown token"))

    def test_no_server(self) -> None:
        s = self.serve()
        url = s.url
        s.stop()
        with self.assertRaises(ebb.ConnectionFailed) as e:
            ebb.Client(url).get(1)
        self.assertIn(url, str(e.exception))
        with self.assertRaises(ValueError):
            ebb.Client("127.0.0.1:7070")

    def test_kept_alive_connection_closed_by_serve(self) -> None:
        # serve closes an idle connection after connection_timeout: the
        # next call notices and opens another.
        s = self.serve("[server]\nconnection_timeout = 1s\n")
        c = s.client()
        job = c.submit(["true"])
        time.sleep(2.5)  # idle past serve's timeout, which is what is tested
        self.assertEqual(c.get(job["id"])["id"], job["id"])
        self.assertEqual(c.cancel(job["id"])["state"], "cancelled")

    def test_environment(self) -> None:
        s = self.serve(tokens=True)
        saved = {k: os.environ.get(k) for k in ("EBB_SERVER", "EBB_TOKEN", "EBB_CACERT")}
        try:
            os.environ.update(EBB_SERVER=s.url, EBB_TOKEN=s.token or "")
            os.environ.pop("EBB_CACERT", None)
            c = ebb.Client()
            self.assertEqual(c.server, s.url)
            self.assertEqual(c.get(c.submit(["true"])["id"])["state"], "queued")
            with self.assertRaises(ebb.ApiError) as e:
                ebb.Client(token="").get(1)  # given, even empty, it is the one used
            self.assertEqual(e.exception.status, 401)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class Tls(TestCase):
    def openssl(self, *args: str) -> None:
        r = subprocess.run(["openssl", *args], cwd=self.tmp, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def ca(self, name: str) -> str:
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                     "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN=ebb test {name}",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        return os.path.join(self.tmp, f"{name}.pem")

    def test_https_with_cacert(self) -> None:
        ca = self.ca("ca")
        other = self.ca("other")
        with open(os.path.join(self.tmp, "leaf.ext"), "w") as f:
            f.write("subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n"
                    "keyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\n")
        self.openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                     "-keyout", "serve.key", "-out", "serve.csr", "-subj", "/CN=ebb-serve")
        self.openssl("x509", "-req", "-in", "serve.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "0x51",
                     "-days", "2", "-extfile", "leaf.ext", "-out", "serve.pem")
        s = self.serve(tls=(os.path.join(self.tmp, "serve.pem"), os.path.join(self.tmp, "serve.key")))
        self.assertTrue(s.url.startswith("https://"))
        c = s.client(cacert=ca)
        job = c.submit(["true"])
        self.assertEqual(c.get(job["id"])["state"], "queued")
        with self.assertRaises(ebb.ConnectionFailed) as e:
            s.client(cacert=other).get(job["id"])
        self.assertIn("the server's certificate is not trusted", str(e.exception))
        self.assertIn(f"it must be signed by a CA in {other}", str(e.exception))
        saved = os.environ.pop("EBB_CACERT", None)
        try:
            with self.assertRaises(ebb.ConnectionFailed) as e:
                s.client().get(job["id"])
            self.assertIn("pass cacert= or set EBB_CACERT", str(e.exception))
        finally:
            if saved is not None:
                os.environ["EBB_CACERT"] = saved
        with self.assertRaises(ebb.ConnectionFailed) as e:
            s.client(cacert=os.path.join(self.tmp, "missing.pem"))
        self.assertIn("missing.pem", str(e.exception))


if __name__ == "__main__":
    main()
