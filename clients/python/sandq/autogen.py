"""sandq.autogen: sandq as an AutoGen code executor.

Each code block runs as one sandq task on a worker's jail (never on the
caller's machine): blocks in order, stopping at the first that exits
non-zero, output as AutoGen's command-line executors give it (each block's
stderr, then its stdout). work_dir acts as a container's workspace: its
files go in with every block (``files``) and the files a block creates or
changes come back into it (``fetch_files``: docs/formats.md, "Files in and
out").

    SandqCodeExecutor        AutoGen 0.4+ (autogen_core.code_executor.CodeExecutor
                             when autogen_core is importable; the same methods otherwise)
    SandqLegacyCodeExecutor  AutoGen 0.2's protocol (synchronous)
"""
import asyncio
import base64
import os
import re
import shutil
import tempfile
import threading
import time
import uuid

from . import Client, SandqError, _full_result

__all__ = ["SandqCodeExecutor", "SandqLegacyCodeExecutor", "CodeBlock", "CodeResult"]

try:  # AutoGen 0.4+
    from autogen_core.code_executor import CodeBlock, CodeExecutor as _Base, CodeResult
except ImportError:  # the same shapes, for use (and tests) without AutoGen
    from dataclasses import dataclass

    @dataclass
    class CodeBlock:
        code: str
        language: str

    @dataclass
    class CodeResult:
        exit_code: int
        output: str

    _Base = object

# AutoGen's language names to the task's (docs/formats.md); others go to the
# worker as they are, and it names the ones it runs.
_LANGUAGES = {"python": "python", "python3": "python", "py": "python",
              "bash": "bash", "sh": "bash", "shell": "bash"}
_PROGRAM_NAME = "main.py"  # the program's own name in scratch: never sent as a file
_TIMEOUT_EXIT = 124        # timeout(1)'s exit status, as AutoGen's executors use
_CANCELLED_EXIT = 125
_FENCE = re.compile(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n```", re.DOTALL)


def _safe_name(name):
    """Whether name, from a result, may be written under work_dir."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


class _Runner:
    """What both executors share: one block as one task, work_dir in and out."""

    def __init__(self, redis_url, queue, timeout, work_dir, limits, profile, work_dir_max_bytes):
        if timeout < 1:
            raise ValueError("timeout must be at least 1 second")
        self.url = redis_url or os.environ.get("SANDQ_REDIS_URL", "redis://127.0.0.1:6379")
        self.queue = queue
        self.timeout = timeout
        self.limits = dict(limits or {})
        self.profile = profile
        self.work_dir_max_bytes = work_dir_max_bytes
        self._own_dir = work_dir is None
        self.work_dir = work_dir if work_dir is not None else tempfile.mkdtemp(prefix="sandq-autogen-")
        os.makedirs(self.work_dir, exist_ok=True)
        self.client = None

    def open(self):
        if self.client is None:
            self.client = Client(self.url, queue=self.queue)

    def close(self):
        if self.client is not None:
            self.client.close()
            self.client = None

    def remove_own_dir(self):
        if self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def _work_files(self):
        """work_dir's regular files (no links followed), as the task's files."""
        files, total = {}, 0
        for root, dirs, names in os.walk(self.work_dir, followlinks=False):
            dirs.sort()
            for n in sorted(names):
                path = os.path.join(root, n)
                rel = os.path.relpath(path, self.work_dir).replace(os.sep, "/")
                if rel == _PROGRAM_NAME or os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    data = f.read()
                total += len(data)
                if total > self.work_dir_max_bytes:
                    raise SandqError("work_dir %s holds more than the %d bytes sent with a block "
                                     "(work_dir_max_bytes)" % (self.work_dir, self.work_dir_max_bytes))
                files[rel] = base64.b64encode(data).decode("ascii")
        return files

    def _task(self, block):
        lang = (block.language or "python").strip().lower()
        task = {"id": "b-" + uuid.uuid4().hex[:12], "code": block.code,
                "language": _LANGUAGES.get(lang, lang), "fetch_files": ["*"],
                "limits": dict(self.limits, wall_ms=int(self.timeout * 1000))}
        files = self._work_files()
        if files:  # an empty work_dir sends none
            task["files"] = files
        if self.profile:  # the worker's interpreter profile (docs/configuration.md, "Profiles")
            task["profile"] = self.profile
        return task

    def push(self, block):
        """Pushes block as a task; returns (batch, task id)."""
        self.open()
        task = self._task(block)
        batch = "ag-" + uuid.uuid4().hex[:16]
        self.client.push([task], batch=batch)
        return batch, task["id"]

    def wait(self, batch, task_id, cancelled):
        """The task's result, or None when the wait ran out or was cancelled
        (cancelled: a threading.Event). Blocks on the batch's completion
        event (BLPOP) in short slices, so a cancel is seen within one."""
        deadline = time.monotonic() + self.timeout + 30  # the run's wall limit plus time in the queue
        c = self.client
        one_shard = c.shards() == 1
        done_key = c._p + "done:" + batch
        while not cancelled.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if one_shard:
                c._redis.blpop([done_key], timeout=min(left, 0.5))
                raw = c._redis.hget(c._p + "results:" + batch, task_id)
                if raw is not None:
                    return _full_result(task_id, batch, raw)
            else:
                res = c.results(batch)
                if task_id in res:
                    return res[task_id]
                time.sleep(0.01)
        return None

    def take_result(self, res):
        """(exit code, output) of one block's result; its files into work_dir."""
        if res is None:
            return _TIMEOUT_EXIT, "\nTimeout (no result from queue %s within %ss)" % (self.queue, self.timeout + 30)
        status = res.get("status")
        out = (res.get("stderr") or "") + (res.get("stdout") or "")
        for name, data in sorted((res.get("files") or {}).items()):
            if not _safe_name(name):
                continue
            path = os.path.join(self.work_dir, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.islink(path):
                os.unlink(path)
            with open(path, "wb") as f:
                f.write(bytes(data))
        for name in res.get("files_truncated") or []:
            out += "\n(file %s came back truncated: larger than the results' file budget)" % name
        if status == "timeout":
            return _TIMEOUT_EXIT, out + "\nTimeout"
        if status in ("blocked", "invalid_task", "llm_error", "compile_error"):
            return 1, out + "%s: %s" % (status, res.get("reason") or "")
        code = res.get("exit_code")
        if code is None:  # killed: a signal, a limit
            return 1, out + "\n%s: %s" % (status, res.get("reason") or "")
        return code, out


def _result(exit_code, output):
    return CodeResult(exit_code=exit_code, output=output)


class SandqCodeExecutor(_Base):
    """AutoGen 0.4+ code executor running each block as a sandq task.

    redis_url: the queue's Redis (default $SANDQ_REDIS_URL, else
    redis://127.0.0.1:6379); queue: the queue name; timeout: seconds a
    block may run (its wall_ms; 124 past it); work_dir: the workspace kept
    across calls (None: a temporary directory, removed by stop());
    limits: other task limits (cpu_ms, memory_mib, output_kib); profile:
    the interpreter profile the blocks run in (each task's "profile", e.g.
    "data" for numpy and pandas; None: the worker's default). Needs a
    sandq worker on the queue."""

    def __init__(self, redis_url=None, queue="default", timeout=60, work_dir=None, limits=None, profile=None,
                 work_dir_max_bytes=160 * 1024):
        self._r = _Runner(redis_url, queue, timeout, work_dir, limits, profile, work_dir_max_bytes)
        self._started = False

    @property
    def work_dir(self):
        return self._r.work_dir

    @property
    def timeout(self):
        return self._r.timeout

    async def start(self):
        await asyncio.to_thread(self._r.open)
        self._started = True

    async def stop(self):
        await asyncio.to_thread(self._r.close)
        self._r.remove_own_dir()
        self._started = False

    async def restart(self):
        """A fresh connection; work_dir stays (as a container's workspace would)."""
        await asyncio.to_thread(self._r.close)
        await asyncio.to_thread(self._r.open)

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc):
        await self.stop()

    async def execute_code_blocks(self, code_blocks, cancellation_token=None):
        """Runs the blocks in order; stops at the first that exits non-zero."""
        output, exit_code = "", 0
        for block in code_blocks:
            cancelled = threading.Event()
            try:
                batch, task_id = await asyncio.to_thread(self._r.push, block)
            except SandqError as e:
                return _result(1, output + str(e))
            fut = asyncio.ensure_future(asyncio.to_thread(self._r.wait, batch, task_id, cancelled))
            if cancellation_token is not None:
                cancellation_token.link_future(fut)
            try:
                res = await asyncio.shield(fut)
            except asyncio.CancelledError:
                cancelled.set()
                return _result(_CANCELLED_EXIT, output + "\nCancelled")
            exit_code, out = self._r.take_result(res)
            output += out
            if exit_code != 0:
                break
        return _result(exit_code, output)


class _MarkdownExtractor:
    """Code blocks out of a message's ``` fences (AutoGen 0.2's CodeExtractor)."""

    def extract_code_blocks(self, message):
        if not isinstance(message, str):
            message = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in (message or []))
        return [CodeBlock(code=m.group(2), language=(m.group(1) or "python").lower())
                for m in _FENCE.finditer(message)]


class SandqLegacyCodeExecutor:
    """AutoGen 0.2's CodeExecutor protocol (synchronous): the same blocks
    as SandqCodeExecutor, the same arguments, no cancellation."""

    def __init__(self, redis_url=None, queue="default", timeout=60, work_dir=None, limits=None, profile=None,
                 work_dir_max_bytes=160 * 1024):
        self._r = _Runner(redis_url, queue, timeout, work_dir, limits, profile, work_dir_max_bytes)
        self._extractor = _MarkdownExtractor()

    @property
    def code_extractor(self):
        return self._extractor

    @property
    def work_dir(self):
        return self._r.work_dir

    def execute_code_blocks(self, code_blocks):
        output, exit_code = "", 0
        never = threading.Event()
        for block in code_blocks:
            try:
                batch, task_id = self._r.push(block)
            except SandqError as e:
                return _result(1, output + str(e))
            exit_code, out = self._r.take_result(self._r.wait(batch, task_id, never))
            output += out
            if exit_code != 0:
                break
        return _result(exit_code, output)

    def restart(self):
        self._r.close()
        self._r.open()

    def close(self):
        self._r.close()
        self._r.remove_own_dir()
