"""The VM's devices, by name: a module of its own, so that the command line can check a
--device without importing the devices (numpy, ctypes, the interpreter)."""

DEVICES = ("local-task", "local-sync", "reference", "vulkan", "opencl", "cuda")
#: GPU devices (their own modules: vulkan_device.py, opencl_device.py, cuda_device.py) and the
#: target each runs.
GPU_DEVICES = {"vulkan": "vulkan-spirv", "opencl": "opencl-spirv", "cuda": "cuda"}
