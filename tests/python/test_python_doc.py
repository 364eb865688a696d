#!/usr/bin/python3
"""docs/PYTHON.md's examples do what the page says, as it shows them:
each is cut from the page and run against a real `ebb serve` and `ebb
worker`, its output compared with the block that follows it ("$ python3
NAME.py" and what it prints). A python or sh block that no test here
runs fails the page's check."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from ebbtest import BIN, CLIENT, PYTHON, SRC, Serve, TestCase, main, wait_for

PAGE = os.path.join(SRC, "docs", "PYTHON.md")
RUN = {"install.sh", "wait.py", "many.py", "map.py", "errors.py", "count.py", "embed_handler.py", "serve.ini"}


def page() -> tuple[dict[str, str], dict[str, str]]:
    """The page's examples by name (a python block's first line is "#
    NAME.py: ...", the sh block is install.sh, the ini block, serve's
    config, serve.ini), and its output blocks by their command line ("$
    python3 wait.py")."""
    with open(PAGE) as f:
        text = f.read()
    examples: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M):
        if lang == "python":
            m = re.match(r"# (\S+\.py): ", body)
            assert m, f"docs/PYTHON.md: a python block that does not start '# NAME.py: ': {body[:60]!r}"
            examples[m.group(1)] = body
        elif lang == "ini":
            assert "serve.ini" not in examples, "docs/PYTHON.md: a second ini block"
            examples["serve.ini"] = body
        elif lang == "sh":
            assert "install.sh" not in examples, "docs/PYTHON.md: a second sh block"
            examples["install.sh"] = body
        elif body.startswith("$ "):
            command, _, out = body.partition("\n")
            outputs[command[2:]] = out
    return examples, outputs


EXAMPLES, OUTPUTS = page()


class Doc(TestCase):
    def write(self, name: str, where: str | None = None) -> str:
        path = os.path.join(where or self.tmp, name)
        with open(path, "w") as f:
            f.write(EXAMPLES[name])
        return path

    def run_example(self, command: str, serve: Serve | None, cwd: str | None = None,
                    path: tuple[str, str] = ("", "")) -> None:
        """Runs the page's command in the test's dir (path[0] in it made
        path[1]) and compares what it prints with the page's block for it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("EBB_") and k != "PYTHONPATH"}
        env.update(PATH=f"{os.path.dirname(PYTHON)}:{os.path.dirname(BIN)}:{env['PATH']}")
        if serve:
            env.update(EBB_SERVER=serve.url, PYTHONPATH=CLIENT)
        p = subprocess.run(["sh", "-c", command.replace(*path) if path[0] else command], cwd=cwd or self.tmp, env=env, capture_output=True, text=True,
                           timeout=150)
        self.assertEqual(p.returncode, 0, f"{command}: {p.stderr}")
        self.assertEqual(p.stdout, OUTPUTS[command], f"{command}: stderr: {p.stderr}")

    def test_page(self) -> None:
        self.assertEqual(set(EXAMPLES), RUN, "docs/PYTHON.md's examples are not those this test runs")

    def test_install(self) -> None:
        shutil.copytree(CLIENT, os.path.join(self.tmp, "clients", "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        self.write("install.sh")
        self.run_example("sh install.sh", None)

    def test_wait(self) -> None:
        s = self.serve()
        self.worker(s)
        self.write("wait.py")
        self.run_example("python3 wait.py", s)

    def test_many(self) -> None:
        s = self.serve()
        self.worker(s)
        self.write("many.py")
        self.run_example("python3 many.py", s)

    def test_errors(self) -> None:
        s = self.serve()
        self.write("errors.py")
        self.run_example("python3 errors.py", s)

    def test_map(self) -> None:
        # The page's handler, run by a real worker as serve's config on
        # the page says.
        handler = self.write("embed_handler.py")
        s = self.serve(EXAMPLES["serve.ini"].replace("/opt/jobs/embed_handler.py", handler))
        self.worker(s)
        self.write("map.py")
        self.run_example("python3 map.py", s)

    def test_count(self) -> None:
        # Submitted as the page says, with count.py and its file in the
        # workers' directory; stopped half-way and resumed by another.
        s = self.serve()
        c = s.client()
        self.write("count.py", s.dir)
        submit = [line for line in OUTPUTS if line.startswith("ebb submit ")]
        self.assertEqual(len(submit), 1)
        out = os.path.join(s.dir, "count.txt")
        first = self.worker(s, "first")
        self.run_example(submit[0], s, s.dir, ("/data/count.txt", out))
        wait_for(lambda: c.get(1)["items_done"] >= 10, "a checkpoint", log=s)
        first.stop()
        stopped = c.get(1)
        self.assertEqual((stopped["state"], stopped["interruptions"], stopped["attempts"]), ("queued", 1, 0))
        self.assertLess(stopped["items_done"], 100, "the job was not stopped half-way")
        self.assertEqual(stopped["items_lost"], 0, "on_term's last checkpoint covers every item done")
        self.worker(s, "second")
        done = c.wait(1, timeout=60)
        self.assertEqual((done["state"], done["items_done"]), ("succeeded", 100))
        with open(out) as f:
            self.assertEqual(f.read(), "".join(f"item {i}\n" for i in range(100)))
        self.assertEqual([ln.text for ln in c.logs(1, follow=False)], [f"items {stopped['items_done']} to 100"])
        self.assertEqual(done["result"], {"last": 99})


if __name__ == "__main__":
    main()
