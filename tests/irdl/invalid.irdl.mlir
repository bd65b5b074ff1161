// IRDL files that do not load, one per chunk: each is given alone to `--irdl-file`, and the
// first error (line and message) is the one iree-opt --irdl-file reports (tests/test_irdl.py).
irdl.dialect @shapes {
  irdl.type @box {
    %0 = irdl.any
    // expected-error@+1 {{custom op 'irdl.parameters' expected valid keyword}}
    irdl.parameters(%0)
  }
}

// -----

irdl.dialect @shapes {
  irdl.operation @area {
    %0 = irdl.is f32
    // expected-error@+1 {{name of result #0 should not contain uppercase letters}}
    irdl.results(Area: %0)
  }
}

// -----

irdl.dialect @shapes {
  irdl.operation @scale {
    %0 = irdl.any
    // expected-error@+1 {{name of operand #1 is a duplicate of the name of operand #0}}
    irdl.operands(x: %0, x: %0)
  }
}

// -----

irdl.dialect @shapes {
  // expected-error@+1 {{contains a value named 'v' for both its operands and results}}
  irdl.operation @copy {
    %0 = irdl.any
    irdl.operands(v: %0)
    irdl.results(v: %0)
  }
}

// -----

irdl.dialect @shapes {
  irdl.type @ring {
    // expected-error@+1 {{symbol '@circle' not found}}
    %0 = irdl.base @circle
    irdl.parameters(inner: %0)
  }
}

// -----

irdl.dialect @shapes {
  irdl.type @ring {
    // expected-error@+1 {{the base type or attribute name should start with '!' or '#'}}
    %0 = irdl.base "builtin.float"
    irdl.parameters(inner: %0)
  }
}

// -----

func.func private @helper()

irdl.dialect @shapes {
  irdl.operation @make {
    // expected-error@+1 {{symbol '@helper' does not refer to a type or attribute definition (refers to 'func.func')}}
    %0 = irdl.parametric @helper<>
    irdl.results(made: %0)
  }
}

// -----

irdl.dialect @shapes {
  irdl.type @box {
    %0 = irdl.any
    // expected-error@+1 {{'irdl.results' op expects parent op 'irdl.operation'}}
    irdl.results(side: %0)
  }
}
