"""Three JAX models, written as plain functions of (inputs, weights): an MLP, a small CNN and a
transformer block. `EXAMPLES` gives each with seeded example arguments."""
import jax
import jax.numpy as jnp
import numpy as np


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(h @ w2 + b2, axis=-1)


def cnn(x, k1, k2, w, b):
    """x: NHWC images; two 3x3 convolutions with ReLU, a 2x2 max pool, then a dense layer."""
    dims = ("NHWC", "HWIO", "NHWC")
    h = jax.nn.relu(jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dims))
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, k2, (1, 1), "VALID", dimension_numbers=dims))
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return h.reshape(h.shape[0], -1) @ w + b


def _layer_norm(x, gain):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * gain


def transformer_block(x, wq, wk, wv, wo, w1, w2, g1, g2):
    """x: (sequence, model); one attention head, pre-norm, a GELU feed-forward."""
    h = _layer_norm(x, g1)
    q, k, v = h @ wq, h @ wk, h @ wv
    attention = jax.nn.softmax(q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1])), axis=-1)
    x = x + (attention @ v) @ wo
    return x + jax.nn.gelu(_layer_norm(x, g2) @ w1) @ w2


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(s[0] if len(s) > 1 else 1)).astype(np.float32) for s in shapes]


EXAMPLES = {
    "mlp": (mlp, _arrays((4, 8), (8, 16), (16,), (16, 4), (4,))),
    "cnn": (cnn, _arrays((2, 8, 8, 3), (3, 3, 3, 4), (3, 3, 4, 8), (72, 10), (10,))),
    "transformer_block": (transformer_block,
                          _arrays((8, 16), (16, 16), (16, 16), (16, 16), (16, 16), (16, 32), (32, 16),
                                  (16,), (16,))),
}
