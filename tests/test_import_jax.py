"""`mlirtext import jax`: a jitted function as StableHLO with its Python locations, run by mlirtext
at every level and compiled, against JAX's own numbers."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the jax extra is not installed (pip install 'mlirtext[jax]'; "
                                        "make import-deps installs it, as CI does)")

from mlirtext.analysis.document import Document  # noqa: E402
from mlirtext.analysis.hover import hover  # noqa: E402
from mlirtext.cli import main  # noqa: E402
from mlirtext.importers.common import ImportFailed  # noqa: E402
from mlirtext.importers.jax import import_function  # noqa: E402
from mlirtext.interpreter import Interpreter  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def _scaled_tanh(x, y):
    return jax.numpy.tanh(x) * 2.0 + y   # the hover must point at this line


def test_import_function_gives_a_parsed_module_with_python_locations():
    x, y = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    imported = import_function(_scaled_tanh, x, y)
    got = Interpreter(imported.module).call("main", [x, y])[0]
    np.testing.assert_allclose(got, np.asarray(_scaled_tanh(x, y)), rtol=1e-6)
    line = _scaled_tanh.__code__.co_firstlineno + 1
    assert f'"{__file__}":{line}:' in imported.text
    doc = Document("file:///imported.mlir", imported.text, 1)
    markdown, _, _ = hover(doc, imported.text.index("stablehlo.tanh"))
    assert f"{__file__}:{line}:" in markdown and "in _scaled_tanh" in markdown


def test_the_command_writes_stablehlo_that_runs(tmp_path, capsys):
    out = tmp_path / "mlp.mlir"
    assert main(["import", "jax", os.path.join(EXAMPLES, "jax_models.py") + ":mlp",
                 "--args", "4x8xf32", "8x16xf32", "16xf32", "16x4xf32", "4xf32", "-o", str(out)]) == 0
    assert "stablehlo.dot_general" in out.read_text() and "jax_models.py" in out.read_text()
    assert main(["run", str(out), "--input=4x8xf32=1", "--input=8x16xf32=0.5", "--input=16xf32=0",
                 "--input=16x4xf32=0", "--input=4xf32=0"]) == 0
    assert "4x4xf32=[0.25 0.25 0.25 0.25]" in capsys.readouterr().out


def test_example_inputs_from_an_npz(tmp_path):
    npz, out = tmp_path / "args.npz", tmp_path / "f.mlir"
    np.savez(npz, np.zeros((3,), np.float32), np.zeros((3,), np.float32))
    (tmp_path / "jf.py").write_text("import jax.numpy as jnp\ndef f(a, b):\n    return jnp.maximum(a, b)\n")
    assert main(["import", "jax", f"{tmp_path / 'jf.py'}:f", "--args-npz", str(npz), "-o", str(out)]) == 0
    assert "stablehlo.maximum" in out.read_text()


@pytest.mark.parametrize("argv, message", [
    (["import", "jax", "json:nope", "--args", "f32"], "module 'json' has no 'nope'"),
    (["import", "jax", "no_such_module_xyz:f", "--args", "f32"], "cannot import 'no_such_module_xyz'"),
    (["import", "jax", "missing.py:f", "--args", "f32"], "'missing.py': no such file"),
    (["import", "jax", "nocolon", "--args", "f32"], "expected MODULE:NAME"),
    (["import", "jax", "operator:neg", "--args", "4xbogus"], "argument spec '4xbogus'"),
    (["import", "jax", "operator:add", "--args", "f32"], "jax could not lower 'add': TypeError"),
])
def test_bad_requests_are_one_clear_error(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_tracing_error_is_reported_not_raised():
    with pytest.raises(ImportFailed, match="jax could not lower"):
        import_function(lambda x: x.reshape(7), np.zeros(4, np.float32))


def test_mlp_example_matches_jax_at_every_level_and_compiled():
    sys.path.insert(0, EXAMPLES)
    try:
        import flow
    finally:
        sys.path.remove(EXAMPLES)
    errors = flow.check("jax", "mlp", report=lambda line: None)
    assert list(errors) == ["imported", "tosa", "linalg", "loops", "llvm", "local-task"]


#: A LayerNorm block written as flax's `nn.LayerNorm` computes it (the variance as
#: mean(square(x)) - square(mean), `lax.square` being `chlo.square` in StableHLO), then an exact
#: (erf) GELU and a top-k: the chlo ops a user's flax model brings.
LAYER_NORM_BLOCK = '''
import jax
import jax.numpy as jnp


def block(x, scale, bias, w):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.maximum(0.0, jnp.mean(jax.lax.square(x), axis=-1, keepdims=True) - jax.lax.square(mean))
    y = (x - mean) * jax.lax.rsqrt(var + 1e-6) * scale + bias
    h = jax.nn.gelu(y @ w, approximate=False)
    values, indices = jax.lax.top_k(h, 3)
    return h, values, indices
'''

FLAX_LAYER_NORM = '''
import jax
import flax.linen as nn


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(16)(nn.LayerNorm()(x))


MODEL = Model()
PARAMS = MODEL.init(jax.random.PRNGKey(0), jax.numpy.zeros((4, 32)))


def model(x):
    return MODEL.apply(PARAMS, x)
'''


def _import_lower_and_run(tmp_path, capsys, source: str, name: str, specs, inputs, results: int):
    """`mlirtext import jax` the function, `opt --lower-to=llvm --check-semantics` it, then run
    it compiled (local-task); returns the native results."""
    module_file, mlir = tmp_path / "model.py", tmp_path / "model.mlir"
    module_file.write_text(source)
    assert main(["import", "jax", f"{module_file}:{name}", "--args", *specs, "-o", str(mlir)]) == 0
    assert main(["opt", str(mlir), "--lower-to=llvm", "--check-semantics", "-o", str(tmp_path / "llvm.mlir")]) == 0, \
        capsys.readouterr().err
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", x)
    capsys.readouterr()
    outputs = [tmp_path / f"out{i}.npy" for i in range(results)]
    assert main(["run", str(mlir), "--device=local-task", *(f"--input=@{tmp_path / f'in{i}.npy'}" for i in range(len(inputs))),
                 *(f"--output=@{o}" for o in outputs)]) == 0, capsys.readouterr().err
    return mlir.read_text(), [np.load(o) for o in outputs]


def test_a_layer_norm_gelu_top_k_model_lowers_and_runs_natively(tmp_path, capsys):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((4, 32)).astype(np.float32), rng.standard_normal(32).astype(np.float32),
              rng.standard_normal(32).astype(np.float32), (rng.standard_normal((32, 16)) / 6).astype(np.float32)]
    text, got = _import_lower_and_run(tmp_path, capsys, LAYER_NORM_BLOCK, "block",
                                      ["4x32xf32", "32xf32", "32xf32", "32x16xf32"], inputs, 3)
    assert "chlo.square" in text and "chlo.erf" in text and "chlo.top_k" in text
    namespace = {}
    exec(compile(LAYER_NORM_BLOCK, "<block>", "exec"), namespace)
    want = [np.asarray(v) for v in namespace["block"](*inputs)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[2], want[2])


def test_a_flax_layer_norm_model_lowers_and_runs_natively(tmp_path, capsys):
    pytest.importorskip("flax", reason="flax is not installed (the plain-JAX LayerNorm test covers the same ops)")
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    text, got = _import_lower_and_run(tmp_path, capsys, FLAX_LAYER_NORM, "model", ["4x32xf32"], [x], 1)
    assert "chlo.square" in text
    namespace = {}
    exec(compile(FLAX_LAYER_NORM, "<flax model>", "exec"), namespace)
    np.testing.assert_allclose(got[0], np.asarray(namespace["model"](x)), rtol=1e-5, atol=1e-5)
