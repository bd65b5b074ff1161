"""The lexical part of semantic tokens (types, attribute keywords, strings, numbers spelled
in the text) at the edges of its patterns: word boundaries, signs, nesting, comments."""
from mlirtext.analysis import tokens
from mlirtext.analysis.document import Document

EDGES = '''-5 x-5 3.5e-3 %i32 foo_i32 i32 si8 ui16 u8 f16 bf16 index indexed @i64 #i32 ^bb0.i1 .5 a.7
dense<1> dense_resource<blob> sparse<1> sparsely affine_map<(d0) -> (d0)> array<i64: 1> xtensor<2xf32>
tensor<4x?xvector<2xi8>> memref<2xf32, #map<x>> !llvm.ptr #gpu.address_space<x> "str i32 \\" 5" // i32 "c"
vector<4xcomplex<f32>> complex<f64> 12abc 7 -x 0x1F 1e5 i32z'''


def decoded(text: str) -> list[tuple[str, str]]:
    data = tokens.encode(Document("file:///edges.mlir", text))
    lines, line, col, out = text.split("\n"), 0, 0, []
    for i in range(0, len(data), 5):
        dl, dc, length, kind, _ = data[i:i + 5]
        line, col = line + dl, col + dc if dl == 0 else dc
        out.append((lines[line][col:col + length], tokens.TOKEN_TYPES[kind]))
    return out


def test_lexical_tokens_at_the_edges():
    # The text does not parse: no IR entry hides a lexical token (`%i32`'s `i32` shows).
    found = [t for t in decoded(EDGES) if t[1] in ("type", "macro", "string", "number")]
    assert found == [
        ("-5", "number"), ("5", "number"), ("3.5e-3", "number"), ("i32", "type"), ("i32", "type"), ("si8", "type"),
        ("ui16", "type"), ("u8", "type"), ("f16", "type"), ("bf16", "type"), ("index", "type"), ("i64", "type"),
        ("i32", "type"), ("i1", "type"), ("dense", "macro"), ("1", "number"), ("dense_resource", "macro"),
        ("sparse", "macro"), ("1", "number"), ("affine_map", "macro"), ("array", "macro"), ("i64", "type"),
        ("1", "number"), ("tensor<2xf32>", "type"), ("tensor<4x?xvector<2xi8>>", "type"),
        ("memref<2xf32, #map<x>>", "type"), ("!llvm.ptr", "type"), ("#gpu.address_space", "macro"),
        ('"str i32 \\" 5"', "string"), ("vector<4xcomplex<f32>>", "type"), ("complex<f64>", "type"),
        ("7", "number"), ("1e5", "number")], found
