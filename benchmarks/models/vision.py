"""torchvision CNNs and a ViT, random weights, one 224x224 image (NCHW, as PyTorch and ONNX give it)."""
from __future__ import annotations

import numpy as np

from . import ZooModel

IMAGE = (1, 3, 224, 224)


def torchvision_models():
    """`torchvision.models`, importable beside the CPU torch of the `torch` extra.

    The torchvision wheel for torch 2.13 on PyPI (0.28.0, the `vision` extra) is built against CUDA
    torch: its operator library `_C.so` needs libtorch_cuda and does not load here, and importing
    torchvision then fails registering fake kernels for `torchvision::nms` / `qnms`. The model
    definitions are plain Python and need none of its operators, so when the library is missing
    the two schemas are declared (never called) before the import."""
    import torch
    try:
        import torchvision
    except RuntimeError:
        lib = torch.library.Library("torchvision", "DEF")
        for op in ("nms", "qnms"):
            lib.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        torchvision_models.keep = lib   # the schemas live as long as the library object
        import torchvision
    return torchvision.models


def _image() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(IMAGE, dtype=np.float32)


def _torchvision(factory: str, **kwargs):
    def build():
        import torch
        torch.manual_seed(0)
        return getattr(torchvision_models(), factory)(weights=None, **kwargs).eval(), [_image()]
    return build


def _vit():
    """vit_b_16's shape (patch 16, width 768, 12 heads, MLP 3072) at 2 layers instead of 12."""
    import torch
    torch.manual_seed(0)
    vit = torchvision_models().vision_transformer.VisionTransformer(
        image_size=224, patch_size=16, num_layers=2, num_heads=12, hidden_dim=768, mlp_dim=3072)
    return vit.eval(), [_image()]


MODELS = [
    ZooModel("resnet18", "torchvision", _torchvision("resnet18"), ("torch", "onnx")),
    ZooModel("resnet50", "torchvision", _torchvision("resnet50"), ("torch", "onnx")),
    ZooModel("mobilenet_v3_small", "torchvision", _torchvision("mobilenet_v3_small"), ("torch", "onnx")),
    ZooModel("efficientnet_b0", "torchvision", _torchvision("efficientnet_b0"), ("torch", "onnx")),
    ZooModel("vit_b_16_2layers", "torchvision", _vit, ("torch", "onnx")),
]
