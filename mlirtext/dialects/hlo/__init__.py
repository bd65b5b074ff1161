"""The HLO op families (stablehlo, mhlo, chlo), one module per family.

Each family module declares its ops as `declare.HloOp` records, each carrying its
checks (`verify=`), its custom syntax (a declared `syntax.HloFormat`, or a hand-written
printer with the grammar callbacks in the module's `RULES`) and what `dialect.op`
takes. `op_set.py` gathers them; stablehlo.py, mhlo.py and chlo.py build their
dialects from it. `shared.py` holds the check pieces several families use (types,
shapes, windows, quantization), `syntax.py` the syntax pieces.
"""
