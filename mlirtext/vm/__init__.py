"""The module file (`.vmpack`), its compiler, and the VM that runs it on a device.

    compile:  .mlir -> dispatch regions -> kernels (native code per target) + host program -> .vmpack
    run:      .vmpack -> checked load -> inputs checked against the signature -> host program:
              buffers from the memory plan, kernels dispatched to a device -> outputs
"""
