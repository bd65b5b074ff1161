"""The run time: a module (a `.vmpack` file, or one compiled in this process) on a device.

    .vmpack bytes -> checked load (modfile.py: every field, module_checks.py; the seal and an
                     optional signature, signing.py) | an in-memory compiled module
      -> inputs checked against the signature -> host program (vm.py): buffers from the memory
         plan, kernels dispatched to a device (devices.py and the GPU devices) -> outputs

The compiler that makes modules is mlirtext/compiler/; nothing here imports it.
"""
