"""Processes and collectives: all_gather, all_reduce, all_to_all, reduce_scatter,
collective_broadcast / permute / reduce, send / recv, infeed / outfeed, and the process
grid they meet in (`interpreter.run_parallel` itself is in interpreter_ops.py).

`interpreter.run_parallel` runs `programs[r][p]` as process (replica r, partition p) of a
process grid, each in its own thread with its own interpreter; collectives meet at a
rendezvous keyed by their process group and channel, as StableHLO's reference interpreter
does (`ProcessGrid.cpp`): process groups come from `replica_groups` by the spec's
cross_replica / cross_replica_and_partition / flattened_ids / cross_partition rules.

Outside run_parallel a program is the single process (0, 0) of a 1x1 grid: group members
that do not exist are dropped, so all_reduce / all_gather / ... of one process return their
operand (all_reduce runs its body on nothing: the identity), and collective_permute with no
pair for the process gives zeros. infeed and recv have no data source without
run_parallel and report that.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Optional

import numpy as np

from ..dialects.hlo_attrs import struct_fields
from ..ir.arrays import TOKEN, dense_to_array
from ..ir.dense import DenseElementsAttr
from .hlo_common import bool_attr, fit, int_attr, np_dtype
from .machine import InterpreterError
from .registry import impl

#: Seconds a process waits at a rendezvous (or for a recv) before giving up.
WAIT_SECONDS = 10.0


class ProcessGrid:
    def __init__(self, num_replicas: int, num_partitions: int, infeed=()):
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.infeed = deque(infeed)
        self.outfeed: list = []
        self.cond = threading.Condition()
        self.meetings: dict = {}
        self.channels: dict = {}
        self.failed: Optional[str] = None

    # -- process groups (spec: "Collective ops") --------------------------------------------
    def _exists(self, pid) -> bool:
        return pid[0] < self.num_replicas and pid[1] < self.num_partitions

    def _clean(self, groups):
        return [g for g in ([p for p in grp if self._exists(p)] for grp in groups) if g]

    def cross_replica(self, groups):
        return self._clean([[(r, p) for r in g] for g in groups for p in range(self.num_partitions)])

    def cross_partition(self, groups):
        return self._clean([[(r, p) for p in g] for g in groups for r in range(self.num_replicas)])

    def cross_replica_and_partition(self, groups):
        return self._clean([[(r, p) for p in range(self.num_partitions) for r in g] for g in groups])

    def flattened_ids(self, groups):
        n = self.num_partitions
        return self._clean([[(i // n, i % n) for i in g] for g in groups])

    # -- meeting points ---------------------------------------------------------------------
    def _wait(self, ready, what: str):
        if not self.cond.wait_for(lambda: ready() or self.failed is not None, timeout=WAIT_SECONDS):
            raise InterpreterError(f"{what} timed out: not every process of the group reached it")
        if self.failed is not None and not ready():
            raise InterpreterError(f"{what} abandoned: another process failed ({self.failed})")

    def rendezvous(self, group: list, channel: int, pid, values: list) -> dict:
        """Every process of `group` contributes `values`; each gets {pid: values} of all."""
        if len(set(group)) == 1:
            return {pid: values}
        key = (tuple(group), channel)
        with self.cond:
            m = self.meetings.setdefault(key, {"generation": 0, "values": {}, "results": {}})
            generation = m["generation"]
            m["values"][pid] = values
            if len(m["values"]) == len(set(group)):
                m["results"][generation] = [m["values"], len(set(group))]
                m["values"] = {}
                m["generation"] += 1
                self.cond.notify_all()
            else:
                self._wait(lambda: m["generation"] > generation, "collective")
            entry = m["results"][generation]
            entry[1] -= 1
            if entry[1] == 0:
                del m["results"][generation]
            return entry[0]

    def send(self, channel: int, values: list) -> None:
        with self.cond:
            self.channels.setdefault(channel, deque()).append(values)
            self.cond.notify_all()

    def recv(self, channel: int) -> list:
        with self.cond:
            q = self.channels.setdefault(channel, deque())
            self._wait(lambda: bool(q), "recv")
            return q.popleft()

    def fail(self, message: str) -> None:
        with self.cond:
            if self.failed is None:
                self.failed = message
            self.cond.notify_all()


class Process:
    def __init__(self, replica_id: int, partition_id: int, grid: ProcessGrid):
        self.replica_id = replica_id
        self.partition_id = partition_id
        self.grid = grid

    @property
    def id(self):
        return (self.replica_id, self.partition_id)


def _process(interp) -> Process:
    proc = getattr(interp, "process", None)
    if proc is None:
        proc = Process(0, 0, ProcessGrid(1, 1))
        interp.process = proc
    return proc


# ---- collectives ------------------------------------------------------------------------------------
def _replica_groups(op) -> list:
    attr = op.attr("replica_groups")
    if attr is None:
        return []
    if isinstance(attr, DenseElementsAttr):
        arr = dense_to_array(attr, np.dtype(np.int64), tuple(attr.shape))
        arr = arr.reshape(arr.shape[0] if arr.ndim else 1, -1)
        return [[int(x) for x in row if x != -1] for row in arr]
    text = str(attr)  # #stablehlo.replica_group_mesh / iota forms are not modelled
    raise InterpreterError(f"unsupported replica_groups form: {text}")


def _channel_id(op) -> int:
    f = struct_fields(op.attr("channel_handle"))
    if f is None:
        return 0
    return int(f.get("handle", 0))


def _group(interp, op, kind: str):
    """The calling process, its process group (None if not in any), and the channel id."""
    proc = _process(interp)
    grid = proc.grid
    groups = _replica_groups(op)
    channel = _channel_id(op)
    if kind == "partition_or_replica":  # all_to_all, collective_broadcast / permute
        sets = grid.cross_replica(groups) if channel <= 0 else grid.cross_partition(groups)
    else:
        global_ids = bool_attr(op, "use_global_device_ids")
        if channel <= 0 and not global_ids:
            sets = grid.cross_replica(groups)
        elif not global_ids:
            sets = grid.cross_replica_and_partition(groups)
        else:
            sets = grid.flattened_ids(groups)
    if not groups:
        sets = [[proc.id]]
    for g in sets:
        if proc.id in g:
            return proc, g, channel
    return proc, None, channel


def _reduce_values(interp, op, values: list) -> np.ndarray:
    acc = values[0]
    for v in values[1:]:
        acc = interp.run_region(op.regions[0], [acc, v])[0]
    return acc


@impl("stablehlo.all_gather", "mhlo.all_gather")
def _all_gather(interp, op, args):
    proc, group, channel = _group(interp, op, "replica")
    if group is None:
        raise InterpreterError(f"process {proc.id} is in no replica group")
    met = proc.grid.rendezvous(group, channel, proc.id, list(args))
    dim = int_attr(op, "all_gather_dim")
    return [fit(op, np.concatenate([np.asarray(met[p][i]) for p in group], axis=dim), i)
            for i in range(len(args))]


@impl("stablehlo.all_reduce", "mhlo.all_reduce")
def _all_reduce(interp, op, args):
    proc, group, channel = _group(interp, op, "replica")
    if group is None:
        raise InterpreterError(f"process {proc.id} is in no replica group")
    met = proc.grid.rendezvous(group, channel, proc.id, list(args))
    order = sorted(group)
    return [fit(op, _reduce_values(interp, op, [np.asarray(met[p][i]) for p in order]), i)
            for i in range(len(args))]


@impl("stablehlo.reduce_scatter", "mhlo.reduce_scatter")
def _reduce_scatter(interp, op, args):
    proc, group, channel = _group(interp, op, "replica")
    if group is None:
        raise InterpreterError(f"process {proc.id} is in no replica group")
    met = proc.grid.rendezvous(group, channel, proc.id, list(args))
    order = sorted(group)
    reduced = _reduce_values(interp, op, [np.asarray(met[p][0]) for p in order])
    parts = np.split(reduced, len(group), axis=int_attr(op, "scatter_dimension"))
    return [fit(op, parts[group.index(proc.id)])]


@impl("stablehlo.all_to_all", "mhlo.all_to_all")
def _all_to_all(interp, op, args):
    proc, group, channel = _group(interp, op, "partition_or_replica")
    if group is None:
        raise InterpreterError(f"process {proc.id} is in no replica group")
    met = proc.grid.rendezvous(group, channel, proc.id, list(args))
    split_dim = int_attr(op, "split_dimension")
    concat_dim = int_attr(op, "concat_dimension")
    count = int_attr(op, "split_count", len(group))
    me = group.index(proc.id)
    out = []
    for i in range(len(args)):
        parts = [np.split(np.asarray(met[p][i]), count, axis=split_dim)[me] for p in group]
        out.append(fit(op, np.concatenate(parts, axis=concat_dim), i))
    return out


def _zeros_like_result(op, i):
    t = op.results[i].type
    return np.zeros(tuple(t.shape), dtype=np_dtype(t))


@impl("stablehlo.collective_broadcast", "mhlo.collective_broadcast")
def _collective_broadcast(interp, op, args):
    dynamic = bool_attr(op, "has_dynamic_root")
    data = list(args[:-1]) if dynamic else list(args)
    proc, group, channel = _group(interp, op, "partition_or_replica")
    if group is None:
        return [_zeros_like_result(op, i) for i in range(len(data))]
    met = proc.grid.rendezvous(group, channel, proc.id, data)
    roots = [int(x) for x in np.asarray(args[-1]).reshape(-1)] if dynamic else [0] * len(data)
    return [fit(op, met[group[roots[i]]][i], i) for i in range(len(data))]


@impl("stablehlo.collective_reduce")
def _collective_reduce(interp, op, args):
    proc, group, channel = _group(interp, op, "replica")
    if group is None:
        return [_zeros_like_result(op, i) for i in range(len(args))]
    met = proc.grid.rendezvous(group, channel, proc.id, list(args))
    if proc.id != group[0]:
        return [_zeros_like_result(op, i) for i in range(len(args))]
    order = sorted(group)
    return [fit(op, _reduce_values(interp, op, [np.asarray(met[p][i]) for p in order]), i)
            for i in range(len(args))]


@impl("stablehlo.collective_permute", "mhlo.collective_permute")
def _collective_permute(interp, op, args):
    proc = _process(interp)
    grid = proc.grid
    attr = op.attr("source_target_pairs")
    pairs = dense_to_array(attr, np.dtype(np.int64), tuple(attr.shape)).reshape(-1, 2).tolist()
    channel = _channel_id(op)
    groups = grid.cross_replica(pairs) if channel <= 0 else grid.cross_partition(pairs)
    result = None
    for g in groups:
        if len(g) != 2 or proc.id not in g:
            continue
        src, dst = g
        if src == dst:
            result = args[0]
            continue
        met = grid.rendezvous(g, channel, proc.id, [args[0]])
        if dst == proc.id:
            result = met[src][0]
    if result is None:
        return [_zeros_like_result(op, 0)]
    return [fit(op, result)]


# ---- host / channel transfers ------------------------------------------------------------------
@impl("stablehlo.send", "mhlo.send")
def _send(interp, op, args):
    proc = _process(interp)
    data = [a for a in args if a is not TOKEN]
    proc.grid.send(_channel_id(op), data)
    return [TOKEN]


@impl("stablehlo.recv", "mhlo.recv")
def _recv(interp, op, args):
    proc = _process(interp)
    channel = _channel_id(op)
    q = proc.grid.channels.get(channel)
    if proc.grid.num_replicas * proc.grid.num_partitions == 1 and not q:
        raise InterpreterError("stablehlo.recv: nothing was sent on this channel "
                               "(a host transfer needs interpreter.run_parallel with a sender)")
    values = proc.grid.recv(channel)
    return [fit(op, v, i) for i, v in enumerate(values)] + [TOKEN]


@impl("stablehlo.infeed", "mhlo.infeed")
def _infeed(interp, op, args):
    proc = _process(interp)
    n = len(op.results) - 1
    with proc.grid.cond:
        if len(proc.grid.infeed) < n:
            raise InterpreterError("stablehlo.infeed: the infeed queue is empty (give it data with "
                                   "interpreter.run_parallel's `infeed` functions)")
        values = [proc.grid.infeed.popleft() for _ in range(n)]
    return [fit(op, v, i) for i, v in enumerate(values)] + [TOKEN]


@impl("stablehlo.outfeed", "mhlo.outfeed")
def _outfeed(interp, op, args):
    proc = _process(interp)
    with proc.grid.cond:
        proc.grid.outfeed.append([a for a in args if a is not TOKEN])
    return [TOKEN]
