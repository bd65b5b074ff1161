"""Output files: every command writes through the one writer (`mlirtext/cli/io.py`). A regular file is
replaced atomically with its mode kept, a symlink is written through, a directory, a device node, a
FIFO or a socket is refused with one line and exit status 1, no temporary file is ever left behind,
and the old file survives any failure."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlirtext import cli
from mlirtext.cli import io as cli_io

ROOT = Path(__file__).resolve().parent.parent
SMALL = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n" \
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
LLVM = "llvm.func @f(%a: i32) -> i32 {\n  %0 = llvm.add %a, %a : i32\n  llvm.return %0 : i32\n}\n"


def mlirtext(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "server")]))
    return subprocess.run([sys.executable, "-m", "mlirtext", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "in" / "small.mlir"
    path.parent.mkdir()
    path.write_text(SMALL)
    return path


def _refused(done, path, kind):
    """Exit 1 and one line that names the file and what it is, no traceback."""
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"could not write output file '{path}': it is {kind}" in lines[0]


def _no_temporaries(directory: Path, expected: set):
    assert {p.name for p in directory.iterdir()} == expected


def test_a_regular_file_is_replaced_with_its_mode_kept(small, tmp_path):
    out = tmp_path / "out.mlir"
    out.write_text("old\n")
    out.chmod(0o640)
    before = out.stat()
    done = mlirtext("opt", small, "-o", out)
    assert done.returncode == 0, done.stderr
    assert "stablehlo.add" in out.read_text()
    after = out.stat()
    assert stat.S_IMODE(after.st_mode) == 0o640 and after.st_ino != before.st_ino  # replaced, not rewritten
    _no_temporaries(tmp_path, {"in", "out.mlir"})


def test_a_new_file_gets_the_mode_open_would_give(small, tmp_path):
    out = tmp_path / "new.mlir"
    done = subprocess.run(f"umask 027 && {sys.executable} -m mlirtext opt {small} -o {out}", shell=True,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize("command", ["opt", "translate", "compile"])
def test_a_symlink_is_written_through(command, tmp_path):
    source = tmp_path / "f.mlir"
    source.write_text(LLVM if command == "translate" else SMALL)
    target = tmp_path / "target"
    target.write_text("old\n")
    link = tmp_path / "link"
    link.symlink_to(target.name)
    args = {"opt": ["opt", source], "translate": ["translate", "--mlir-to-llvmir", source],
            "compile": ["compile", source, "--target=reference"]}[command]
    done = mlirtext(*args, "-o", link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    written = target.read_bytes()
    assert written != b"old\n" and (written.startswith(b"PK") if command == "compile" else b"@f" in written
                                    or b"@main" in written)
    _no_temporaries(tmp_path, {"f.mlir", "target", "link"})


def test_a_dangling_symlink_creates_its_target(small, tmp_path):
    link = tmp_path / "link"
    link.symlink_to("made.mlir")
    assert mlirtext("opt", small, "-o", link).returncode == 0
    assert link.is_symlink() and "stablehlo.add" in (tmp_path / "made.mlir").read_text()


@pytest.mark.parametrize("command", ["opt", "compile"])
def test_a_directory_is_refused(command, small, tmp_path):
    out = tmp_path / "dir"
    out.mkdir()
    (out / "keep").write_text("kept\n")
    done = mlirtext(command, small, "-o", out)
    _refused(done, out, "a directory")
    _no_temporaries(out, {"keep"})
    _no_temporaries(tmp_path, {"in", "dir"})


def test_a_device_node_is_refused_and_kept(small, tmp_path):
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device's numbers: harmless if written
    done = mlirtext("compile", small, "-o", node)
    _refused(done, node, "a character device")
    assert stat.S_ISCHR(node.lstat().st_mode) and node.lstat().st_rdev == os.makedev(1, 3)
    _no_temporaries(tmp_path, {"in", "null"})


def test_a_symlink_to_a_device_node_is_refused(small, tmp_path):
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    link = tmp_path / "link"
    link.symlink_to(node)
    _refused(mlirtext("opt", small, "-o", link), link, "a character device")
    assert link.is_symlink() and stat.S_ISCHR(node.lstat().st_mode)


def test_a_fifo_is_refused_without_being_opened(small, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # Opening a FIFO with no reader blocks: a writer that opened it would run into the timeout.
    _refused(mlirtext("opt", small, "-o", fifo), fifo, "a FIFO")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    _no_temporaries(tmp_path, {"in", "fifo"})


def test_a_socket_is_refused(small, tmp_path):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        _refused(mlirtext("opt", small, "-o", path), path, "a socket")
    assert stat.S_ISSOCK(path.lstat().st_mode)


def test_a_missing_directory_is_one_line(small, tmp_path):
    out = tmp_path / "no" / "such" / "out.mlir"
    done = mlirtext("opt", small, "-o", out)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"could not write output file '{out}': No such file or directory" in done.stderr


def test_an_input_that_fails_keeps_the_old_output(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    out = tmp_path / "out.mlir"
    out.write_text("old\n")
    assert mlirtext("opt", bad, "-o", out).returncode == 1
    assert out.read_text() == "old\n"
    _no_temporaries(tmp_path, {"bad.mlir", "out.mlir"})


def _failing_replace(error):
    def replace(src, dst):
        raise error
    return replace


def test_a_failed_replace_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    monkeypatch.setattr(cli_io.os, "replace", _failing_replace(OSError(28, "No space left on device")))
    problem = cli_io.write_output(str(out), "new\n")
    assert problem is not None and problem.message.endswith("No space left on device")
    assert out.read_text() == "old\n"
    _no_temporaries(tmp_path, {"out.txt"})


def test_an_interrupt_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch, capsys):
    src = tmp_path / "f.mlir"
    src.write_text(SMALL)
    out = tmp_path / "out.mlir"
    out.write_text("old\n")
    monkeypatch.setattr(cli_io.os, "replace", _failing_replace(KeyboardInterrupt()))
    assert cli.main(["opt", str(src), "-o", str(out)]) == 130
    assert out.read_text() == "old\n"
    _no_temporaries(tmp_path, {"f.mlir", "out.mlir"})


def test_run_outputs_write_and_append_through_the_writer(small, tmp_path):
    link = tmp_path / "y.npy"
    (tmp_path / "real.npy").write_bytes(b"")
    link.symlink_to("real.npy")
    done = mlirtext("run", small, "--input=4xf32=1 2 3 4", f"--output=@{link}")
    assert done.returncode == 0, done.stderr
    done = mlirtext("run", small, "--input=4xf32=5 6 7 8", f"--output=+{link}")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()
    with open(tmp_path / "real.npy", "rb") as f:
        first, second = np.load(f), np.load(f)
    assert first.tolist() == [2, 4, 6, 8] and second.tolist() == [10, 12, 14, 16]
    _no_temporaries(tmp_path, {"in", "y.npy", "real.npy"})


def test_run_output_onto_a_directory_is_refused(small, tmp_path):
    out = tmp_path / "d"
    out.mkdir()
    done = mlirtext("run", small, "--input=4xf32=1", f"--output=@{out}")
    assert done.returncode == 1 and f"could not write output file '{out}': it is a directory" in done.stderr
    assert "Traceback" not in done.stderr and list(out.iterdir()) == []


def test_bench_page_is_written_through_a_symlink(small, tmp_path):
    (tmp_path / "page.html").write_text("old\n")
    link = tmp_path / "link.html"
    link.symlink_to("page.html")
    done = mlirtext("bench", small, "--targets=reference", "--devices=reference", "--rounds=1", "--warmup=0",
                    "--no-progress", "--html", link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and (tmp_path / "page.html").read_text().lstrip().lower().startswith("<!doctype html")
    _no_temporaries(tmp_path, {"in", "page.html", "link.html"})
