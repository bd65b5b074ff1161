"""Three PyTorch models: an MLP, a small CNN and a transformer block, each from a factory (as
`mlirtext import torch examples/torch_models.py:mlp --args 4x8xf32` takes them). `EXAMPLES`
gives each with a seeded example input."""
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden, self.out = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.out(torch.relu(self.hidden(x))), dim=-1)


class CNN(nn.Module):
    """NCHW images; two 3x3 convolutions with ReLU, a 2x2 max pool, then a dense layer."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 8, 3)
        self.pool, self.dense = nn.MaxPool2d(2), nn.Linear(72, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.conv2(torch.relu(self.conv1(x)))))
        return self.dense(h.flatten(1))


class TransformerBlock(nn.Module):
    """(sequence, model) in and out; one attention head, pre-norm, a GELU feed-forward."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.gelu = nn.GELU(approximate="tanh")

    def forward(self, x):
        h = self.norm1(x)
        scores = self.q(h) @ self.k(h).transpose(0, 1) / self.q.out_features ** 0.5
        x = x + self.o(torch.softmax(scores, dim=-1) @ self.v(h))
        return x + self.ff2(self.gelu(self.ff1(self.norm2(x))))


def mlp():
    torch.manual_seed(0)
    return MLP()


def cnn():
    torch.manual_seed(0)
    return CNN()


def transformer_block():
    torch.manual_seed(0)
    return TransformerBlock()


def _input(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1)).numpy()


EXAMPLES = {
    "mlp": (mlp, [_input(4, 8)]),
    "cnn": (cnn, [_input(2, 3, 8, 8)]),
    "transformer_block": (transformer_block, [_input(8, 16)]),
}
