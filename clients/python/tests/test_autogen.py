"""sandq.autogen's two executors against a real Redis and a real worker.

AutoGen itself is not needed: CodeBlock and CodeResult are AutoGen's
shapes (sandq.autogen's own when autogen_core is not installed), and
Token below behaves as autogen_core.CancellationToken documents
(cancel(), is_cancelled(), add_callback(), link_future()). Run by
tests/integration/client_python.sh, which sets SANDQ_REDIS_URL (workers on
queue "default"); without it every test here is skipped, and the script
fails a run that skipped anything.
"""
import asyncio
import os
import shutil
import tempfile
import unittest
from urllib.parse import urlparse

from sandq.autogen import CodeBlock, CodeResult, SandqCodeExecutor, SandqLegacyCodeExecutor

URL = os.environ.get("SANDQ_REDIS_URL")


class Token:
    """autogen_core.CancellationToken's documented behaviour."""

    def __init__(self):
        self._cancelled = False
        self._callbacks = []

    def cancel(self):
        if not self._cancelled:
            self._cancelled = True
            for cb in self._callbacks:
                cb()

    def is_cancelled(self):
        return self._cancelled

    def add_callback(self, cb):
        if self._cancelled:
            cb()
        else:
            self._callbacks.append(cb)

    def link_future(self, future):
        if self._cancelled:
            future.cancel()
        else:
            self.add_callback(future.cancel)
        return future


@unittest.skipUnless(URL, "SANDQ_REDIS_URL is not set (run through tests/integration/client_python.sh)")
class AsyncExecutorTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.dir = tempfile.mkdtemp(prefix="sandq-ag-test-")
        self.ex = SandqCodeExecutor(URL, timeout=20, work_dir=self.dir)
        await self.ex.start()

    async def asyncTearDown(self):
        await self.ex.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    async def run_blocks(self, *blocks, token=None):
        r = await self.ex.execute_code_blocks([CodeBlock(code=c, language=l) for l, c in blocks], token or Token())
        self.assertIsInstance(r, CodeResult)
        return r

    async def test_python_and_bash(self):
        r = await self.run_blocks(("python", "print(6 * 7)"), ("bash", "echo from-bash; echo to-err >&2"),
                                  ("sh", "echo $((1 + 2))"))
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(r.output, "42\nto-err\nfrom-bash\n3\n")

    async def test_first_failure_stops(self):
        r = await self.run_blocks(("python", "print('one')"), ("bash", "echo two; exit 3"), ("python", "print('three')"))
        self.assertEqual(r.exit_code, 3)
        self.assertIn("one\n", r.output)
        self.assertIn("two\n", r.output)
        self.assertNotIn("three", r.output)
        r = await self.run_blocks(("python", "raise ValueError('bad value')"), ("python", "print('after')"))
        self.assertEqual(r.exit_code, 1)
        self.assertIn("ValueError: bad value", r.output)
        self.assertIn("Traceback", r.output)
        self.assertNotIn("after", r.output)

    async def test_timeout_is_124(self):
        ex = SandqCodeExecutor(URL, timeout=1, work_dir=self.dir)
        async with ex:
            r = await ex.execute_code_blocks([CodeBlock(code="sleep 30", language="bash"),
                                              CodeBlock(code="echo next", language="bash")], Token())
        self.assertEqual(r.exit_code, 124)
        self.assertIn("Timeout", r.output)
        self.assertNotIn("next", r.output)

    async def test_files_persist_between_calls(self):
        r = await self.run_blocks(("python", "open('data.txt', 'w').write('kept')\nimport os\nos.makedirs('out')\n"
                                             "open('out/n.bin', 'wb').write(bytes(range(256)))"))
        self.assertEqual(r.exit_code, 0, r.output)
        with open(os.path.join(self.dir, "data.txt")) as f:
            self.assertEqual(f.read(), "kept")
        with open(os.path.join(self.dir, "out", "n.bin"), "rb") as f:
            self.assertEqual(f.read(), bytes(range(256)))
        r = await self.run_blocks(("bash", "cat data.txt; echo; wc -c < out/n.bin; echo more >> data.txt"))
        self.assertEqual(r.exit_code, 0, r.output)
        self.assertEqual(r.output, "kept\n256\n")
        with open(os.path.join(self.dir, "data.txt")) as f:
            self.assertEqual(f.read(), "keptmore\n")

    async def test_caller_files_go_in(self):
        with open(os.path.join(self.dir, "input.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        with open(os.path.join(self.dir, "helper.py"), "w") as f:
            f.write("def total(rows):\n    return sum(int(x) for r in rows for x in r)\n")
        r = await self.run_blocks(("python", "import csv, helper\nrows = list(csv.reader(open('input.csv')))[1:]\n"
                                             "print(helper.total(rows))"))
        self.assertEqual(r.exit_code, 0, r.output)
        self.assertEqual(r.output, "3\n")

    async def test_no_network(self):
        port = urlparse(URL).port or 6379
        r = await self.run_blocks(("python", "import socket\nsocket.create_connection(('127.0.0.1', %d), 2)\n"
                                             "print('connected')" % port))
        self.assertNotEqual(r.exit_code, 0)
        self.assertNotIn("connected", r.output)
        r = await self.run_blocks(("bash", "exec 3<>/dev/tcp/127.0.0.1/%d && echo connected" % port))
        self.assertNotEqual(r.exit_code, 0)
        self.assertNotIn("connected", r.output)

    async def test_unknown_language(self):
        r = await self.run_blocks(("cobol", "DISPLAY 1"))
        self.assertNotEqual(r.exit_code, 0)
        self.assertIn("'cobol' is not a language sandq runs", r.output)
        self.assertIn("python, bash, sh", r.output)

    async def test_blocked_by_precheck(self):
        r = await self.run_blocks(("python", "import os\nos.system('id')"))
        self.assertNotEqual(r.exit_code, 0)
        self.assertIn("blocked: static pre-check", r.output)

    async def test_cancellation(self):
        token = Token()
        asyncio.get_running_loop().call_later(0.5, token.cancel)
        r = await self.run_blocks(("bash", "sleep 15; echo done"), token=token)
        self.assertEqual(r.exit_code, 125)
        self.assertIn("Cancelled", r.output)
        self.assertNotIn("done", r.output)

    async def test_profile(self):
        """profile= is the task's interpreter profile: the worker names one it lacks, and "data" runs
        numpy and pandas where the worker has it (Debian's python3-numpy and python3-pandas)."""
        async with SandqCodeExecutor(URL, timeout=20, work_dir=self.dir, profile="no-such") as ex:
            r = await ex.execute_code_blocks([CodeBlock(code="print(1)", language="python")], Token())
        self.assertEqual(r.exit_code, 1)
        self.assertIn("invalid_task: profile: 'no-such' is not a profile of this worker", r.output)
        async with SandqCodeExecutor(URL, timeout=60, work_dir=self.dir, profile="data") as ex:
            r = await ex.execute_code_blocks([CodeBlock(
                code="import numpy, pandas\nprint(int(pandas.DataFrame({'a': numpy.arange(4)})['a'].sum()))",
                language="python")], Token())
        if "'data' is not a profile of this worker" in r.output:
            self.skipTest("the worker has no data profile: Debian's python3-numpy and python3-pandas are not installed")
        self.assertEqual((r.exit_code, r.output), (0, "6\n"))

    async def test_restart_keeps_work_dir(self):
        await self.run_blocks(("bash", "echo x > kept.txt"))
        await self.ex.restart()
        r = await self.run_blocks(("bash", "cat kept.txt"))
        self.assertEqual(r.output, "x\n")


@unittest.skipUnless(URL, "SANDQ_REDIS_URL is not set (run through tests/integration/client_python.sh)")
class LegacyExecutorTest(unittest.TestCase):
    def test_protocol(self):
        ex = SandqLegacyCodeExecutor(URL, timeout=20)
        try:
            blocks = ex.code_extractor.extract_code_blocks(
                "Run these:\n```python\nprint('py')\nopen('f.txt', 'w').write('1')\n```\nthen\n```sh\ncat f.txt\n```\n")
            self.assertEqual([(b.language, b.code) for b in blocks],
                             [("python", "print('py')\nopen('f.txt', 'w').write('1')"), ("sh", "cat f.txt")])
            r = ex.execute_code_blocks(blocks)
            self.assertEqual((r.exit_code, r.output), (0, "py\n1"))
            self.assertTrue(os.path.isfile(os.path.join(ex.work_dir, "f.txt")))
            r = ex.execute_code_blocks([CodeBlock(code="exit 2", language="bash"), CodeBlock(code="print(1)", language="python")])
            self.assertEqual((r.exit_code, r.output), (2, ""))
            ex.restart()
            r = ex.execute_code_blocks([CodeBlock(code="import time\ntime.sleep(1)", language="python")])
            self.assertEqual(r.exit_code, 0)
        finally:
            work_dir = ex.work_dir
            ex.close()
        self.assertFalse(os.path.exists(work_dir))  # its own temporary work_dir goes with it


if __name__ == "__main__":
    unittest.main()
