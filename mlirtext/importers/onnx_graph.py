"""Rewrites of an ONNX graph that keep what it computes and let torch-mlir convert more models:
ops that ONNX defines as functions replaced by their function bodies, and nodes whose inputs are
all known before the model runs (constants, and the shapes of statically shaped tensors) folded
to constants. StableHLO's shapes are static, so an axis list or a target shape computed inside
the graph (RMSNormalization's reduction axes, grouped-query attention's Expand shape) must be a
constant by the time torch-mlir sees it."""
from __future__ import annotations

import numpy as np

#: The domain the expanded functions are declared in while onnx.inliner inlines them.
_EXPANSION_DOMAIN = "mlirtext.expanded"

#: The most elements a folded value may have (larger results stay computations, as in canonicalize).
FOLD_LIMIT = 65_536

#: Ops whose result is not determined by their inputs.
_RANDOM = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
           "Multinomial", "Dropout"}


def default_opset(proto) -> int:
    """The version of the default (ai.onnx) domain the model imports."""
    return next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)


def function_ops(onnx, proto) -> set[str]:
    """The ops of `proto`'s graph (default domain) that ONNX defines, at the model's opset, as
    functions of other ops."""
    opset = default_opset(proto)
    return {op for op in {n.op_type for n in proto.graph.node if n.domain in ("", "ai.onnx")}
            if _function_version(onnx, op, opset)[0]}


def _function_version(onnx, op: str, opset: int) -> tuple[int, bool]:
    """(the version of op's function definition in force at `opset`, whether it depends on the
    node's attributes and input types); (0, False) when there is none."""
    try:
        schema = onnx.defs.get_schema(op, max_inclusive_version=opset, domain="")
    except onnx.defs.SchemaError:
        return 0, False
    plain = max((v for v in schema.function_opset_versions if v <= opset), default=0)
    contextual = max((v for v in schema.context_dependent_function_opset_versions if v <= opset), default=0)
    return (contextual, True) if contextual >= plain and contextual else (plain, False)


def expand_functions(onnx, proto, ops: set[str] | None):
    """A copy of `proto` (shapes inferred) whose nodes of the ops `ops` are replaced by the ONNX
    function bodies that define them (specialised to each node's attributes and input types).
    `ops` None: every function op, those the bodies bring in as well."""
    if ops is not None:
        return infer_shapes(onnx, _expand_once(onnx, proto, ops))
    for _ in range(_NESTING):
        ops = function_ops(onnx, proto)
        if not ops:
            break
        proto = infer_shapes(onnx, _expand_once(onnx, proto, ops))
    return proto


#: How deep functions defined with function ops (SoftmaxCrossEntropyLoss with
#: NegativeLogLikelihoodLoss) are expanded.
_NESTING = 4


def infer_shapes(onnx, proto):
    """`proto` with the shapes ONNX infers, data propagation included."""
    return onnx.shape_inference.infer_shapes(proto, data_prop=True)


def _expand_once(onnx, proto, ops: set[str]):
    """Each node of `ops` becomes a call of a model-local function holding its definition, which
    onnx.inliner then inlines (converting the body's opset to the model's where they differ)."""
    import onnx.inliner
    model = type(proto)()
    model.CopyFrom(proto)
    opset = default_opset(model)
    types = _value_types(model.graph)
    for i, node in enumerate(model.graph.node):
        if node.op_type not in ops or node.domain not in ("", "ai.onnx"):
            continue
        version, contextual = _function_version(onnx, node.op_type, opset)
        schema = onnx.defs.get_schema(node.op_type, max_inclusive_version=opset, domain="")
        if contextual:
            inputs = [types.get(name, onnx.TypeProto()).SerializeToString() for name in node.input]
            body = schema.get_context_dependent_function_with_opset_version(version, node.SerializeToString(), inputs)
        else:
            body = schema.get_function_with_opset_version(version)
        function = onnx.FunctionProto.FromString(body)
        function.domain, function.name = _EXPANSION_DOMAIN, f"{node.op_type}_{i}"
        node.domain, node.op_type = function.domain, function.name
        model.functions.append(function)
    if not model.functions:
        return model
    model.opset_import.append(onnx.helper.make_opsetid(_EXPANSION_DOMAIN, 1))
    inlined = onnx.inliner.inline_local_functions(model, convert_version=True)
    kept = [o for o in inlined.opset_import if o.domain != _EXPANSION_DOMAIN]
    del inlined.opset_import[:]
    inlined.opset_import.extend(kept)
    return inlined


def _value_types(graph) -> dict:
    """Every typed value of `graph` by name (inputs, outputs, value_info, initializers)."""
    import onnx
    types = {v.name: v.type for v in list(graph.input) + list(graph.output) + list(graph.value_info)}
    for t in graph.initializer:
        types.setdefault(t.name, onnx.helper.make_tensor_type_proto(t.data_type, t.dims))
    return types


def fold_constants(onnx, proto):
    """A copy of `proto` (shapes inferred) in which every node whose inputs are known before the
    model runs is a Constant holding its result, computed by ONNX's reference implementation of
    the op. Known: Constant nodes, initializers that are not also graph inputs (those a caller
    may override), results already folded, and the shape (Shape, Size) of a tensor whose
    dimensions are all static."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator
    model = type(proto)()
    model.CopyFrom(proto)
    graph = model.graph
    inputs = {i.name for i in graph.input}
    known = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.name not in inputs}
    types = _value_types(graph)
    opsets = {o.domain or "": o.version for o in model.opset_import}
    nodes = []
    for node in graph.node:
        values = _fold(onnx, ReferenceEvaluator, node, known, types, opsets)
        if values is None or node.op_type == "Constant":
            known.update(zip(node.output, values or []))
            nodes.append(node)
            continue
        for name, value in zip(node.output, values):
            if name:
                known[name] = value
                nodes.append(onnx.helper.make_node("Constant", [], [name], name=name + "_folded",
                                                   value=numpy_helper.from_array(value, name)))
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def _fold(onnx, evaluator, node, known: dict, types: dict, opsets: dict):
    """The values of `node`'s outputs when they are known before the model runs, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type in _RANDOM:
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    feeds = {}
    for name in node.input:
        if not name:
            continue
        if name in known:
            feeds[name] = known[name]
        elif node.op_type in ("Shape", "Size") and _static_shape(types.get(name)) is not None:
            feeds[name] = np.zeros(_static_shape(types[name]), np.float32)   # only its shape is read
        else:
            return None
    try:
        values = evaluator(node, opsets=opsets).run(None, feeds)
    except Exception:  # an op the reference implementation lacks or rejects: left to torch-mlir
        return None
    if not all(isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and v.size <= FOLD_LIMIT for v in values):
        return None
    return values


def _static_shape(type_proto):
    """The dimensions of a tensor type when all are known, else None."""
    if type_proto is None or not type_proto.HasField("tensor_type") or \
            not type_proto.tensor_type.HasField("shape"):
        return None
    dims = type_proto.tensor_type.shape.dim
    return tuple(d.dim_value for d in dims) if all(d.HasField("dim_value") for d in dims) else None
