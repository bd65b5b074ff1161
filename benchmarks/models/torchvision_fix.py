"""torchvision beside the CPU torch of the `torch` extra.

The torchvision wheel for torch 2.13 on PyPI (0.28.0, the `vision` extra) is built against CUDA
torch: its operator library `_C.so` needs libtorch_cuda and does not load here, and importing
torchvision then fails registering fake kernels for `torchvision::nms` / `qnms`. transformers
imports torchvision whenever it is installed, so its models fail to import too. No zoo model needs
those operators (the model definitions are plain Python), so when the library is missing the two
schemas are declared (never called) before the import.
"""
from __future__ import annotations

_declared = []   # the Library holding the schemas: they live as long as it does


def importable_torchvision():
    """`torchvision`, imported (declaring the schemas its missing operator library would have)."""
    import torch
    try:
        import torchvision
    except RuntimeError:
        lib = torch.library.Library("torchvision", "DEF")
        for op in ("nms", "qnms"):
            lib.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _declared.append(lib)
        import torchvision
    return torchvision


def torchvision_models():
    return importable_torchvision().models
