"""transformers encoder, decoder and encoder-decoder models from small configs (2 layers, width 256,
4 heads, vocabulary 1000), random weights, a batch of one sequence of 128 tokens."""
from __future__ import annotations

import numpy as np

from . import ZooModel
from .torchvision_fix import importable_torchvision

SEQ = 128
VOCAB = 1000


def _tokens(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (1, SEQ), dtype=np.int64)


def _transformers():
    """The transformers package, with torchvision importable first (it imports torchvision when
    installed: torchvision_fix.py)."""
    try:
        importable_torchvision()
    except ImportError:   # not installed: transformers does without it
        pass
    import transformers
    return transformers


def _last_hidden_state(model, *names):
    """`model` as a module of token tensors returning only its last hidden state (a tensor, which
    every import path and runtime takes; the model's output object is not one)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *tokens):
            return self.model(**dict(zip(names, tokens))).last_hidden_state
    return LastHiddenState().eval()


def _bert():
    import torch
    t = _transformers()
    torch.manual_seed(0)
    config = t.BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=SEQ, attn_implementation="eager")
    return _last_hidden_state(t.BertModel(config), "input_ids"), [_tokens()]


def _gpt2():
    import torch
    t = _transformers()
    torch.manual_seed(0)
    config = t.GPT2Config(vocab_size=VOCAB, n_embd=256, n_layer=2, n_head=4, n_positions=SEQ,
                        attn_implementation="eager")
    return _last_hidden_state(t.GPT2Model(config), "input_ids"), [_tokens()]


def _t5():
    import torch
    t = _transformers()
    torch.manual_seed(0)
    config = t.T5Config(vocab_size=VOCAB, d_model=256, d_kv=64, d_ff=1024, num_layers=2, num_decoder_layers=2,
                      num_heads=4, attn_implementation="eager")
    return _last_hidden_state(t.T5Model(config), "input_ids", "decoder_input_ids"), [_tokens(0), _tokens(1)]


MODELS = [
    ZooModel("bert", "transformers", _bert, ("torch", "onnx")),
    ZooModel("gpt2", "transformers", _gpt2, ("torch", "onnx")),
    ZooModel("t5", "transformers", _t5, ("torch", "onnx")),
]
