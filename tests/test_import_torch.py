"""`mlirtext import torch`: torch.export + torch-mlir to StableHLO, TOSA or Linalg, weights as
constants (dense_resource blobs) or as arguments, against PyTorch's own numbers."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'mlirtext[torch]'; "
                                            "make import-deps installs it, as CI does)")
pytest.importorskip("torch_mlir", reason="torch-mlir is not installed (pip install 'mlirtext[torch]')")

from mlirtext.api import parse_and_verify, to_text  # noqa: E402
from mlirtext.cli import main  # noqa: E402
from mlirtext.importers.baked_weights import bake_weights  # noqa: E402
from mlirtext.importers.common import ImportFailed  # noqa: E402
from mlirtext.importers.torch import import_module  # noqa: E402
from mlirtext.interpreter import Interpreter  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
MODELS = os.path.join(EXAMPLES, "torch_models.py")


def _mlp():
    sys.path.insert(0, EXAMPLES)
    try:
        import torch_models
    finally:
        sys.path.remove(EXAMPLES)
    return torch_models.mlp().eval()


X = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)


@pytest.mark.parametrize("to, weights", [("stablehlo", "inline"), ("tosa", "inline"), ("linalg", "args")])
def test_levels_and_weight_modes_match_pytorch(to, weights):
    model = _mlp()
    want = model(torch.from_numpy(X)).detach().numpy()
    imported = import_module(model, X, to=to, weights=weights)
    if weights == "inline":
        assert "dense_resource<" in imported.text and imported.weights == []
    else:
        assert imported.weight_names == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
        assert "dense_resource<" not in imported.text
    got = Interpreter(imported.module).call("main", [X] + imported.weights)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_command_writes_the_module_and_with_weights_args_the_npz(tmp_path, capsys):
    out = tmp_path / "mlp.mlir"
    assert main(["import", "torch", f"{MODELS}:mlp", "--args", "4x8xf32", "--weights=args", "-o", str(out)]) == 0
    assert "hidden.weight" in capsys.readouterr().err
    with np.load(str(out) + ".weights.npz") as weights:
        arrays = [weights[k] for k in weights.files]
    assert [a.shape for a in arrays] == [(16, 8), (16,), (4, 16), (4,)]
    np.save(tmp_path / "x.npy", X)
    inputs = [f"--input=@{tmp_path / 'x.npy'}"]
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"w{i}.npy", a)
        inputs.append(f"--input=@{tmp_path / f'w{i}.npy'}")
    assert main(["run", str(out), *inputs, f"--output=@{tmp_path / 'y.npy'}"]) == 0
    want = _mlp()(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-5, atol=1e-6)


def test_a_failing_factory_or_export_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "bad.py").write_text("def broken():\n    raise RuntimeError('no weights file')\n")
    assert main(["import", "torch", f"{tmp_path / 'bad.py'}:broken", "--args", "4xf32"]) == 1
    err = capsys.readouterr().err
    assert "broken() failed: RuntimeError: no weights file" in err and "Traceback" not in err
    (tmp_path / "notamodel.py").write_text("def f():\n    return 42\n")
    assert main(["import", "torch", f"{tmp_path / 'notamodel.py'}:f", "--args", "4xf32"]) == 1
    assert "expected a torch.nn.Module, got int" in capsys.readouterr().err
    with pytest.raises(ImportFailed, match="torch-mlir could not import MLP to stablehlo"):
        import_module(_mlp(), np.zeros((3, 5), np.float32))   # wrong input shape for the model


def test_mlp_example_matches_pytorch_at_every_level_and_compiled():
    sys.path.insert(0, EXAMPLES)
    try:
        import flow
    finally:
        sys.path.remove(EXAMPLES)
    errors = flow.check("torch", "mlp", report=lambda line: None)
    assert list(errors) == ["imported", "tosa", "linalg", "loops", "llvm", "local-task"]


@pytest.mark.parametrize("to", ["stablehlo", "tosa", "linalg"])
def test_weights_imported_as_arguments_bake_back_in_as_constants(to):
    model = _mlp()
    as_args = import_module(model, X, to=to, weights="args")
    bake_weights(as_args.module, as_args.weights, to)
    baked = parse_and_verify(to_text(as_args.parsed))
    assert baked.ok, [d.message for d in baked.diagnostics]
    assert "func.func @main(%arg0: tensor<4x8xf32>) ->" in to_text(baked)
    got = Interpreter(baked.module).call("main", [X])[0]
    np.testing.assert_allclose(got, model(torch.from_numpy(X)).detach().numpy(), rtol=1e-5, atol=1e-6)


def _treat_a_broken_torchvision_as_absent(monkeypatch) -> None:
    """transformers imports torchvision whenever it is installed; a torchvision built for another
    torch (`import torchvision` fails: "operator torchvision::nms does not exist") would make
    BertModel unimportable, though BERT needs no torchvision. Such a one counts as absent."""
    try:
        import torchvision  # noqa: F401
    except Exception:  # noqa: BLE001 - any failure to import it
        import transformers.utils
        import transformers.utils.import_utils
        for module in (transformers.utils, transformers.utils.import_utils):
            for name in ("is_torchvision_available", "is_torchvision_v2_available"):
                monkeypatch.setattr(module, name, lambda: False, raising=False)


def test_a_bert_model_that_torch_mlir_cannot_import_inline_gets_its_weights_baked_in(monkeypatch):
    """torch-mlir fails on a transformers BertModel with inline weights ("Could not find state
    mapping for buffer"); the importer retries with the weights as arguments and bakes them in."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    _treat_a_broken_torchvision_as_absent(monkeypatch)
    try:
        bert_model, bert_config = transformers.BertModel, transformers.BertConfig
    except Exception as e:  # noqa: BLE001 - e.g. a torchvision that does not match torch, which transformers imports
        pytest.skip(f"transformers cannot import BertModel here: {str(e).splitlines()[0]}")
    torch.manual_seed(0)
    bert = bert_model(bert_config(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=64)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, ids):
            return self.bert(input_ids=ids).last_hidden_state

    ids = np.array([[1, 5, 7, 9, 2, 3, 4, 8], [8, 7, 6, 5, 4, 3, 2, 1]], np.int64)
    imported = import_module(LastHiddenState(), ids)
    assert "func.func @main(%arg0: tensor<2x8xi64>) -> tensor<2x8x32xf32>" in imported.text
    want = bert(input_ids=torch.from_numpy(ids)).last_hidden_state.detach().numpy()
    # The interpreter, not a native run: late in a long test process (jax, torch and many native
    # modules loaded) MCJIT placed this module's sections over 2 GiB apart and aborted the whole
    # process on a 32-bit relocation (RuntimeDyldELF `isInt<32>(RealOffset)`).
    got = Interpreter(imported.module).call("main", [ids])[0]
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) <= 1e-4
