"""flax (linen) models with random weights, closed over by the function JAX lowers (so they import
as constants, as the torch models' do): a small NHWC CNN with LayerNorm and a transformer encoder
block at sequence length 128."""
from __future__ import annotations

import numpy as np

from . import ZooModel


def _bound(module, x: np.ndarray):
    """`module`'s apply with freshly initialised parameters, as a function of the input alone."""
    import jax
    params = module.init(jax.random.PRNGKey(0), x)
    return lambda inputs: module.apply(params, inputs)


def _cnn():
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            for features, stride in ((32, 2), (64, 1), (64, 2)):
                x = nn.Conv(features, (3, 3), strides=stride, padding="SAME")(x)
                x = nn.relu(nn.LayerNorm()(x))
            x = x.mean(axis=(1, 2))
            return nn.Dense(10)(x)

    x = np.random.default_rng(0).standard_normal((1, 64, 64, 3), dtype=np.float32)
    return _bound(CNN(), x), [x]


def _transformer():
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=4)(h, h)
            h = nn.LayerNorm()(x)
            return x + nn.Dense(256)(nn.gelu(nn.Dense(1024)(h)))

    x = np.random.default_rng(0).standard_normal((1, 128, 256), dtype=np.float32)
    return _bound(Block(), x), [x]


MODELS = [
    ZooModel("flax_cnn", "flax", _cnn, ("jax",)),
    ZooModel("flax_transformer", "flax", _transformer, ("jax",)),
]
