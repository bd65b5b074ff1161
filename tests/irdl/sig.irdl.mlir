// sig: a hand-written dialect whose definitions carry C++ predicates (irdl.c_pred) beside the
// constraints that can be checked (tests/test_irdl.py). A c_pred is text for C++ code generated
// from the definition; loaded with `--irdl-file`, MLIR's IRDL does not treat it as a constraint
// at all: each list that names one (any_of, all_of, parametric, a type's parameters, a region's
// arguments, the attributes) loses that entry. sig.mlir shows what that means, as iree-opt does.
irdl.dialect @sig {
  // A sample of a signal, of a 16- or 32-bit float.
  irdl.type @sample {
    %float = irdl.c_pred "::llvm::isa<::mlir::FloatType>($_self)"
    %f16 = irdl.is f16
    %f32 = irdl.is f32
    %elem = irdl.any_of(%float, %f16, %f32)
    irdl.parameters(elem: %elem)
  }

  // A buffer of samples at a rate: the rate is a C++ predicate, so the buffer takes only the
  // element type.
  irdl.type @buffer {
    %rate = irdl.c_pred "::llvm::isa<::mlir::IntegerAttr>($_self)"
    %elem = irdl.any
    irdl.parameters(rate: %rate, elem: %elem)
  }

  // Scales a sample by a factor (checked in C++ only, so not required), in a mode.
  irdl.operation @gain {
    %elem = irdl.any
    %s = irdl.parametric @sig::@sample<%elem>
    %factor = irdl.c_pred "::llvm::isa<::mlir::FloatAttr>($_self)"
    %mode = irdl.base "#builtin.string"
    irdl.operands(in: %s)
    irdl.results(out: %s)
    irdl.attributes {"factor" = %factor, "mode" = %mode}
  }

  // The level of a signal, a positive f32: all_of keeps the f32.
  irdl.operation @level {
    %positive = irdl.c_pred "$_self.getValue().isPositive()"
    %f32 = irdl.is f32
    %l = irdl.all_of(%positive, %f32)
    irdl.results(level: %l)
  }

  // A peak: only a C++ predicate, so any_of has no choice left and accepts nothing.
  irdl.operation @peak {
    %p = irdl.c_pred "::llvm::isa<::mlir::FloatType>($_self)"
    %peak = irdl.any_of(%p)
    irdl.results(peak: %peak)
  }

  // Resamples a sample of the rate a C++ predicate checks: parametric has no parameter left,
  // so no sample matches it.
  irdl.operation @resample {
    %rate = irdl.c_pred "::llvm::isa<::mlir::IntegerAttr>($_self)"
    %s = irdl.parametric @sig::@sample<%rate>
    irdl.operands(in: %s)
  }

  // Applies its one-block body to each sample: the body's argument is the sample alone.
  irdl.operation @each {
    %elem = irdl.any
    %s = irdl.parametric @sig::@sample<%elem>
    %index = irdl.c_pred "::llvm::isa<::mlir::IndexType>($_self)"
    %body = irdl.region(%s, %index) with size 1
    irdl.operands(in: %s)
    irdl.regions(body: %body)
  }
}
