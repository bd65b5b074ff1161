"""The Ray driver of the editor's cluster devices, in a child process of the language server.

A process that joins a Ray cluster (`ray.init(address=...)`) is ended by Ray about 60 s after the
cluster's head goes away; Ray also installs its own threads and signal handlers. So the language
server does not join: a spawned child does, stays joined between requests (joining takes seconds),
and answers one request at a time over a pipe. A child that died (its cluster gone) is a one-line
error and is started again on the next request; a cancelled request ends the child, and with it the
Ray task it owns (Ray cleans up the tasks of a driver that is gone); a request for another cluster
(the setting changed) starts a new child, which joins that one.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from typing import Optional

from .. import cluster

#: How often a request in progress looks at its cancel event and at the child.
POLL_S = 0.2


class ClusterRunError(Exception):
    """A one-line reason a request to the cluster did not happen."""


class ClusterDriver:
    """The child process, started on the first request; `address`: the `mlirtext.cluster` setting
    (None: no cluster)."""

    def __init__(self):
        self.address: Optional[str] = None
        self._process = None
        self._conn = None
        self._joined: Optional[str] = None   # the cluster the child was started for
        self._lock = threading.Lock()   # (one request at a time: the pipe carries one answer at a time)

    def call(self, what: str, *args, cancelled: Optional[threading.Event] = None):
        """The child's answer to `what` (a name in REQUESTS) with `args` (the cluster's address first);
        ClusterRunError says why not."""
        with self._lock:
            if self._process is None or not self._process.is_alive() or self._joined != args[0]:
                self._start()
                self._joined = args[0]
            try:
                self._conn.send((what, args))
                while not self._conn.poll(POLL_S):
                    if cancelled is not None and cancelled.is_set():
                        self.close()
                        raise ClusterRunError("cancelled")
                    if not self._process.is_alive():
                        break
                ok, value = self._conn.recv()
            except (EOFError, OSError):
                self.close()
                raise ClusterRunError(f"lost the connection to the Ray cluster at {args[0]} (the process "
                                      "that joined it ended)") from None
        if not ok:
            raise ClusterRunError(value)
        return value

    def _start(self) -> None:
        self.close()
        context = multiprocessing.get_context("spawn")   # (the server has threads: no fork)
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), name="mlirtext-cluster", daemon=True)
        self._process.start()
        child.close()

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._conn.close()
        self._process = self._conn = None


def _devices(address: str) -> dict:
    return cluster.device_nodes(cluster.connect(address))


def _run(address: str, data: bytes, device: str, function: str, args: list, node=None) -> tuple[list, dict]:
    """(outputs, where and how long) of `function` of the module file `data` on a node of the cluster
    that offers `device` (on `node` when given), by the path `mlirtext run --cluster` takes."""
    from ..remote import RemoteModule
    module = RemoteModule(data, device, address, node=node)
    outputs = module.function(function).call(*args)
    return outputs, module.last_call


REQUESTS = {"devices": _devices, "run": _run}


def _serve(conn) -> None:
    """The child: answer (ok, value) or (False, one line) to each (request, args), until the pipe closes."""
    from ..vm.vm import VMError
    # The server's stdout, which the child inherits, carries the protocol: what Ray (or its C++ core)
    # prints goes to stderr, the server's log, instead.
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    while True:
        try:
            what, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (True, REQUESTS[what](*args))
        except (cluster.ClusterError, VMError) as e:
            answer = (False, str(e))
        except Exception as e:  # noqa: BLE001 - Ray's many-line errors (a task that failed, a cluster lost)
            lines = str(e).strip().splitlines()
            answer = (False, f"the Ray cluster at {args[0]} failed the request: "
                             f"{lines[-1] if lines else type(e).__name__}")
        conn.send(answer)
