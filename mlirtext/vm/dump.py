"""`mlirtext dump FILE.vmpack`: a module file's sections, as `iree-dump-module` prints a .vmfb."""
from __future__ import annotations

import re

import numpy as np

from .modfile import ModuleFile
from .module_checks import WEIGHTS
from .program import HostProgram, describe, listing


def _size(n: int) -> str:
    return f"{n} B" if n < 10240 else f"{n / 1024:.1f} KiB" if n < 10 * 1024 * 1024 else f"{n / 1048576:.1f} MiB"


def _text(mf: ModuleFile, path: str) -> str:
    """A text entry as it is (its bytes that are not UTF-8 shown as U+FFFD: dump shows any file)."""
    return mf.entry(path).decode(errors="replace")


def kernel_kinds(ir: str) -> dict:
    """Per kernel in the optimised LLVM IR: its vector widths (whether the loops vectorised)."""
    kinds: dict = {}
    for m in re.finditer(r"define [^@]*@(\w+)\(.*?\n}\n", ir, re.S):
        widths = sorted(set(re.findall(r"<(\d+ x (?:float|double|i\d+))>", m.group(0))))
        kinds[m.group(1)] = ", ".join(widths) if widths else "scalar"
    return kinds


def native_ir(mf: ModuleFile):
    """The llvm-cpu kernels' LLVM IR, None when the module file does not keep it."""
    exe = mf.manifest["executables"].get("llvm-cpu", {})
    return _text(mf, exe["llvm_ir"]) if "llvm_ir" in exe else None


def native_vectors(mf: ModuleFile) -> dict:
    """Per llvm-cpu kernel, its vector widths: as the manifest records them (read from the IR
    for a file that keeps the IR without them)."""
    exe = mf.manifest["executables"].get("llvm-cpu")
    if exe is None:
        return {}
    if "vectors" in exe:
        return exe["vectors"]
    ir = native_ir(mf)
    return kernel_kinds(ir) if ir is not None else {}


def _gpu_sections(mf: ModuleFile, show_code: bool) -> list:
    """Per GPU executable: its kernels (entry point, launch, code size, the device memory of its
    scratch buffers) and, with `show_code`, their PTX / AMDGPU assembly / SPIR-V assembly."""
    out = []
    for target, exe in mf.manifest["executables"].items():
        if "arch" not in exe:
            continue
        checked = f"; validated: {', '.join(exe['validated'])}" if exe.get("validated") else ""
        out += ["", f"//----- {target} kernels ({exe['format']}, {exe['arch']}{checked}) -----"]
        for name, k in exe["kernels"].items():
            if k.get("tiling") == "row reduction":
                launch = (f"{k['grid'][0]} workgroups of {k['workgroup'][0]}; tiled row reduction: a workgroup per row "
                          f"of {k['block'][1]}, a tree in workgroup memory")
            elif k.get("tiling") == "fused rows":
                launch = (f"{k['workgroups']} workgroups of {k['workgroup'][0]}; fused row kernel: a workgroup per row "
                          f"of {k['block'][1]}, each reduction a tree in workgroup memory")
            elif k.get("workgroup"):
                (tx, ty), (rows, cols) = k["workgroup"], k["block"]
                launch = (f"{'x'.join(map(str, k['grid']))} workgroups of {tx}x{ty}; tiled: each workgroup computes "
                          f"a {rows}x{cols} output block, {rows // ty}x{cols // tx} per thread, K in slices of {tx} "
                          "through workgroup memory")
            else:
                how = "one thread per output row" if k.get("split") else "serial: one thread"
                launch = f"{k['workgroups']} workgroups of {k['workgroup_size']}; {how}"
            scratch = f", scratch {' + '.join(_size(n) for n in k['scratch'])}" if k.get("scratch") else ""
            out.append(f"@{name}: entry point {k['entry']}, {k['threads']} threads ({launch}), "
                       f"code {_size(len(mf.entry(k['code'])))}{scratch}")
        if show_code:
            for name, k in exe["kernels"].items():
                text = _text(mf, k.get("assembly") or k["code"])
                out += ["", f"// {target} @{name}", text.rstrip("\n")]
    return out


def trust(mf: ModuleFile) -> str:
    """What loading the file trusts (dump reads the file and maps none of its code)."""
    native = [t for t in mf.manifest["executables"] if t != "reference"]
    code = f"native code ({', '.join(native)})" if native else "kernels the interpreter runs"
    if mf.signer is None:
        return (f"// unsigned: this module file is executable code, {code}; loading it runs that code, trusted "
                "as whoever made the file (sign with `mlirtext compile --sign KEY`, check with `run --trusted-keys`)")
    checked = "one of the trusted keys given" if mf.signature_checked else \
        "not checked: give dump or run --trusted-keys to check it"
    return f"// signed by key {mf.signer[:60]} ({checked}): this module file is executable code, {code}"


def dump(mf: ModuleFile, show_ir: bool = False, show_target_code: bool = False) -> str:
    m = mf.manifest
    out = [f"//===== {m['format']} version {m['version']} ({m.get('producer', '?')}), target {m.get('target')}, "
           f"{_size(mf.size)} =====", trust(mf), "", "//----- Exports -----"]
    for e in m["exports"]:
        ins = ", ".join((f"%{r['name']}: " if r.get("name") else "") + describe(r) for r in e["inputs"])
        out.append(f"@{e['name']}({ins}) -> ({', '.join(describe(r) for r in e['results'])})"
                   f"    peak memory {_size(e.get('peak_bytes', 0))}")
    out += ["", "//----- Host programs -----"]
    for e in m["exports"]:
        prog = HostProgram.from_json(mf.json(e["program"]))
        out.append(listing(prog))
        p = prog.plan
        out.append(f"  // memory plan: {p['buffers']} buffers in {len(p['slots'])} pool slots "
                   f"({_size(p['pool_bytes'])}) + results {_size(p['result_bytes'])}; peak {_size(p['peak_bytes'])} "
                   f"(without reuse {_size(p['without_reuse_bytes'])})")
        out.append("")
    out.append("//----- Constants -----")
    if not m["constants"]:
        out.append("(none)")
    for name, c in m["constants"].items():
        n = int(np.prod(c["shape"], dtype=np.int64)) * np.dtype(c["dtype"]).itemsize
        where = f"one value at {c['offset']}" if c.get("splat") else f"at {c['offset']}"
        out.append(f"@{name}: {'x'.join(map(str, c['shape'])) or 'scalar'} {np.dtype(c['dtype']).name}  "
                   f"{_size(n)}  ({WEIGHTS} {where})")
    out += ["", "//----- Executables -----"]
    for target, exe in m["executables"].items():
        paths = [v for k, v in exe.items() if isinstance(v, str) and v in mf.entries]
        sizes = ", ".join(f"{p} {_size(len(mf.entry(p)))}" for p in paths)
        extra = f" {exe.get('triple', '')} cpu={exe.get('cpu', '')}" if target == "llvm-cpu" else ""
        if "arch" in exe:   # a GPU executable: one code file per kernel
            paths = [k["code"] for k in exe["kernels"].values()]
            sizes = f"{len(paths)} kernels, {_size(sum(len(mf.entry(p)) for p in paths))}"
            extra = f" {exe['arch']}"
        out.append(f"{target} ({exe['format']}){extra}: {sizes}")
    kinds = native_vectors(mf)
    out += ["", "//----- Kernels -----"]
    for name, k in m["kernels"].items():
        sig = f"({', '.join(describe(r) for r in k['inputs'])}) -> ({', '.join(describe(r) for r in k['outputs'])})"
        how = k.get("implementation", "generated loops")
        if k.get("workgroups"):
            how += f", workgroups: {k['workgroups']['count']} on output axis {k['workgroups']['axis']}"
        vec = f", vectors: {kinds[name]}" if name in kinds else ""
        out.append(f"@{name}{sig}  [{how}{vec}]")
    out += _gpu_sections(mf, show_target_code)
    if show_ir:
        out += ["", "//----- Reference kernels (MLIR) -----",
                _text(mf, m["executables"]["reference"]["kernels"])]
        if "llvm-cpu" in m["executables"]:
            ir = native_ir(mf)
            out += ["//----- llvm-cpu kernels (LLVM IR) -----",
                    ir if ir is not None else "// not kept in this module file (`mlirtext compile --keep-llvm-ir` "
                    "keeps it)\n"]
    return "\n".join(out) + "\n"
