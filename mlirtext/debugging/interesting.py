"""What makes a candidate of `mlirtext reduce` interesting: it still fails the way the input does.

A test has two halves. `observe(path, module)` runs in a child process that the reducer forks for
the candidate (reducer.py: the child has a time limit, and a child that dies of a signal is observed
as `killed by signal N`), and returns what it saw: a crash's signature, whether a diagnostic
matched, whether two devices agreed. `judge(observation)` runs in the reducer and says whether that
is the failure being reduced; `learn(observation)` does the same for the input itself, and the
tests that compare with the input (a crash's signature) remember it there.

The `mlirtext` commands a test runs are run in the child by `run_cli` (the command line's `main`,
given by the caller: this layer does not import the command line), so a test costs no interpreter
start-up and no parser tables to load: the child is a fork of a process that has them.
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ..interpreter.abi import signature
from ..ir.core import Operation
from ..transforms.semantics_check import Tolerance, compare, random_inputs

#: A diagnostic's location and severity (`file:line:col: error: `), left out of a crash's signature.
_LOCATION = re.compile(r"^(\S*:\d+:\d+: )?(error: )?")

#: `mlirtext` arguments -> exit status (mlirtext.cli.main).
RunCli = Callable[[list], int]


def killed_by(signal_number: int) -> str:
    """The observation of a child that a signal killed (what a crash with a signal looks like)."""
    return f"killed by signal {signal_number}"


def run_captured(run_cli: RunCli, argv: list) -> tuple[int, str]:
    """(exit status, standard error) of `mlirtext ARGV` run here; an exception that escapes the
    command line is a crash, its last line the standard error's."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            status = run_cli(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException as e:  # noqa: BLE001 - the bug being reduced
            return 70, err.getvalue() + f"Traceback (most recent call last)\n{type(e).__name__}: {e}\n"
    return status, err.getvalue()


def crash_signature(stderr: str) -> Optional[str]:
    """What identifies a crash in what a command printed: the internal error's message (without its
    location) or the last line of a traceback; None when it did not crash."""
    lines = stderr.splitlines()
    for line in lines:
        if "internal error" in line:
            return _LOCATION.sub("", line).strip()
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        return next((line for line in reversed(lines) if line.strip()), "").strip()
    return None


class Interestingness:
    """A test of a candidate file (see the module's docstring). `limit`: the seconds the reducer gives
    the child that observes a candidate (it sets it before it forks one)."""

    limit = 60.0

    def observe(self, path: str, module: Operation):
        raise NotImplementedError

    def judge(self, observation) -> bool:
        return observation is True

    def learn(self, observation) -> bool:
        return self.judge(observation)

    def describe(self) -> str:
        raise NotImplementedError


#: The command `--crash` and `--diagnostic` test unless told another: the lowering to llvm.
LOWERING = ("opt", "{}", "--lower-to=llvm", "-o", "-")


class CommandTest(Interestingness):
    """An `mlirtext` command run on the candidate (`words`, `{}` where its path goes; the lowering to
    llvm by default), with the --debug-* fault switches after it."""

    def __init__(self, run_cli: RunCli, fault_flags: list, words=LOWERING):
        self.run_cli = run_cli
        self.fault_flags = list(fault_flags)
        self.words = list(words)

    def run_on(self, path: str) -> tuple[int, str]:
        return run_captured(self.run_cli, [w.replace("{}", path) for w in self.words] + self.fault_flags)

    def command_text(self) -> str:
        return shlex.join(["mlirtext", *(w.replace("{}", "FILE") for w in self.words if w not in ("-o", "-")),
                           *self.fault_flags])


class Crash(CommandTest):
    """The command crashes with the input's signature."""

    signature: Optional[str] = None

    def observe(self, path, module):
        return crash_signature(self.run_on(path)[1])

    def learn(self, observation):
        self.signature = observation
        return observation is not None

    def judge(self, observation):
        return observation is not None and observation == self.signature

    def describe(self):
        return f"{self.command_text()} crashes" + (f": {self.signature}" if self.signature else "")


class DiagnosticMatch(CommandTest):
    """The command reports a diagnostic that matches a regular expression."""

    def __init__(self, run_cli: RunCli, pattern: re.Pattern, fault_flags: list, words=LOWERING):
        super().__init__(run_cli, fault_flags, words)
        self.pattern = pattern

    def observe(self, path, module):
        return any(self.pattern.search(line) for line in self.run_on(path)[1].splitlines())

    def describe(self):
        return f"{self.command_text()} reports a diagnostic matching /{self.pattern.pattern}/"


class UserTest(Interestingness):
    """The user's command, `{}` replaced by the candidate's path: interesting when it exits with 0
    (C-Reduce's convention). It runs as a process of its own, under the child's time limit."""

    def __init__(self, words: list):
        self.words = words

    def observe(self, path, module):
        # (ended here, a little before the reducer ends this child: else the command would outlive it)
        try:
            done = subprocess.run([w.replace("{}", path) for w in self.words], capture_output=True,
                                  stdin=subprocess.DEVNULL, cwd=str(Path(path).parent), timeout=0.9 * self.limit)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    def describe(self):
        return f"'{shlex.join(self.words)}' exits with 0"


class Mismatch(Interestingness):
    """@function's results on device A and on device B differ beyond the tolerance, on the same inputs:
    seeded random ones for the candidate's signature, except the arguments that keep the name and type
    they have in the input (`given`: name -> (type, value)), which take the given values."""

    def __init__(self, run_cli: RunCli, devices: tuple, function: str, given: dict, seed: int,
                 tolerance: Tolerance, fault_flags: list):
        self.run_cli, self.devices, self.function, self.given = run_cli, devices, function, given
        self.seed, self.tolerance, self.fault_flags = seed, tolerance, list(fault_flags)

    def inputs(self, fn: Operation) -> list:
        values = random_inputs(fn, np.random.default_rng(self.seed))
        for i, arg in enumerate(fn.regions[0].blocks[0].arguments):
            name_type = self.given.get(arg.name)
            if name_type is not None and name_type[0] == arg.type:
                values[i] = name_type[1]
        return values

    def observe(self, path, module):
        fn = next((op for op in module.regions[0].blocks[0].ops
                   if op.name == "func.func" and op.sym_name == self.function), None)
        if fn is None:
            return False
        where = Path(path).with_suffix("")
        where.mkdir(exist_ok=True)
        flags = ["--function", self.function]
        for i, value in enumerate(self.inputs(fn)):
            np.save(where / f"input_{i}.npy", value)
            flags.append(f"--input=@{where / f'input_{i}.npy'}")
        results = len(signature(fn).results)
        outputs = []
        for device in self.devices:
            outs = [where / f"{device}_{i}.npy" for i in range(results)]
            status, _ = run_captured(self.run_cli, ["run", path, f"--device={device}", *flags, *self.fault_flags,
                                                    *(f"--output=@{o}" for o in outs)])
            if status != 0:
                return False
            outputs.append([np.load(o) for o in outs])
        return not compare("reduce", self.function, outputs[0], outputs[1], self.tolerance).ok

    def describe(self):
        a, b = self.devices
        return f"@{self.function}'s results on {a} and {b} differ by more than {self.tolerance}"
