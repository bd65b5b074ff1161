"""The real language server over stdio, spoken to in raw JSON-RPC frames: what a hostile
or broken client can send (bodies that are not JSON, wrong params, requests after
shutdown), which a typed client library would refuse to send."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict

from tests.lsp_support import ROOT


class RawServer:
    """`python -m mlirtext lsp` with its stdout read on a thread. Requests the server sends
    (progress, applyEdit) are answered with null; every message it sends is kept."""

    def __init__(self, root=ROOT):
        """`root`: the checkout whose server runs (a benchmark compares two)."""
        self.stderr_file = tempfile.TemporaryFile()
        env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'server'}"}
        self.process = subprocess.Popen([sys.executable, "-m", "mlirtext", "lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr_file, env=env, cwd=root)
        self.ids = itertools.count(1)
        self.sent: list = []   # the ids of every request sent
        self.lock = threading.Condition()
        self.responses: dict = defaultdict(list)   # id -> every response with that id
        self.notifications: list = []
        self.reader = threading.Thread(target=self.read_all, daemon=True)
        self.reader.start()

    # -- sending ----------------------------------------------------------------------------------
    def send_body(self, body: bytes) -> None:
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message) -> None:
        self.send_body(json.dumps(message).encode())

    def request(self, method, params=None, **fields) -> int:
        """Send a request (params left out when None; `fields` replace the usual ones); returns its id."""
        msg_id = next(self.ids)
        self.sent.append(msg_id)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, **fields}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})})

    def call(self, method: str, params=None, timeout: float = 60) -> dict:
        return self.response(self.request(method, params), timeout)

    # -- receiving --------------------------------------------------------------------------------
    def read_all(self) -> None:
        out = self.process.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:   # the server asks: answer null
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            with self.lock:
                if "method" in message:
                    self.notifications.append(message)
                else:
                    self.responses[message.get("id")].append(message)
                self.lock.notify_all()

    def response(self, msg_id, timeout: float = 60) -> dict:
        with self.lock:
            if not self.lock.wait_for(lambda: self.responses.get(msg_id), timeout):
                raise TimeoutError(f"no response to request {msg_id!r} in {timeout} s")
            return self.responses[msg_id][0]

    def diagnostics(self, uri: str, timeout: float = 120) -> list:
        """The diagnostics of `uri` once the server has published them."""
        def published():
            return next((n for n in self.notifications if n["method"] == "textDocument/publishDiagnostics"
                         and n["params"]["uri"] == uri), None)
        with self.lock:
            found = self.lock.wait_for(published, timeout)
        if not found:
            raise TimeoutError(f"no diagnostics for {uri} in {timeout} s")
        return found["params"]["diagnostics"]

    def stderr_text(self) -> str:
        """What the server has written to stderr so far (read without moving the offset it writes at)."""
        fd = self.stderr_file.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")

    # -- life cycle -------------------------------------------------------------------------------
    def initialize(self, capabilities=None) -> dict:
        answer = self.call("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities or {}})
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "mlir", "version": version,
                                                              "text": text}})

    def stop(self, timeout: float = 30) -> tuple:
        """shutdown and exit (if still running); returns (exit code, stderr)."""
        if self.process.poll() is None:
            try:
                self.call("shutdown", timeout=timeout)
                self.notify("exit")
                self.process.wait(timeout)
            except (OSError, TimeoutError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.process.stdin.close()
        self.stderr_file.seek(0)
        return self.process.returncode, self.stderr_file.read().decode("utf-8", "replace")

    def timed(self, method: str, params, timeout: float = 60) -> tuple:
        """(seconds to the answer, the server's CPU seconds meanwhile or None, the answer).
        The CPU time says how much work the answer was on a machine whose load stretches
        the wall time."""
        cpu, started = self.cpu_seconds(), time.perf_counter()
        answer = self.call(method, params, timeout)
        seconds, cpu_after = time.perf_counter() - started, self.cpu_seconds()
        return seconds, None if cpu is None or cpu_after is None else cpu_after - cpu, answer

    def cpu_seconds(self):
        """User + system CPU time of the server process so far (Linux: /proc), else None."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None
