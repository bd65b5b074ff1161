"""torchvision CNNs and a ViT, random weights, one 224x224 image (NCHW, as PyTorch and ONNX give it)."""
from __future__ import annotations

import numpy as np

from . import ZooModel
from .torchvision_fix import torchvision_models

IMAGE = (1, 3, 224, 224)


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
    # torchvision starts the classifier at zero (weights and bias): every output would be 0 and the
    # error column 0 whatever the encoder computed. Random ones make the logits depend on it.
    with torch.no_grad():
        torch.nn.init.normal_(vit.heads.head.weight, std=0.02)
        torch.nn.init.normal_(vit.heads.head.bias, std=0.02)
    return vit.eval(), [_image()]


MODELS = [
    ZooModel("resnet18", "torchvision", _torchvision("resnet18"), ("torch", "onnx")),
    ZooModel("resnet50", "torchvision", _torchvision("resnet50"), ("torch", "onnx")),
    ZooModel("mobilenet_v3_small", "torchvision", _torchvision("mobilenet_v3_small"), ("torch", "onnx")),
    ZooModel("efficientnet_b0", "torchvision", _torchvision("efficientnet_b0"), ("torch", "onnx")),
    ZooModel("vit_b_16_2layers", "torchvision", _vit, ("torch", "onnx")),
]
