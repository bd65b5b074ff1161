"""The `vulkan` device: a module's vulkan-spirv kernels on any Vulkan implementation (Mesa's
software driver lavapipe where there is no GPU), through the `vulkan` PyPI binding (cffi).

One compute pipeline per kernel (its SPIR-V module, entry point = the kernel's name, one storage
buffer per argument at set 0, binding i, then its scratch buffers: see targets/gpu/spirv.py). A
dispatch copies its inputs into host-visible buffers, records bind + dispatch(workgroups, 1, 1)
(a tiled kernel: its x, y, z grid), waits on a fence and copies the outputs back. Buffers do not
stay on the device between dispatches: each dispatch moves its own data (simple and correct; the
VM's memory plan stays in host memory).
"""
from __future__ import annotations

import threading

import numpy as np

from .devices import DeviceError, check_device_buffers


def _vk():
    try:
        import vulkan
    except ImportError:
        raise DeviceError("the vulkan device needs the `vulkan` Python package (pip install 'mlirtext[gpu]', "
                          "or `make gpu-deps`)") from None
    except OSError as e:   # the package imports the loader library at import time
        raise DeviceError(f"the vulkan device needs the Vulkan loader (Debian libvulkan1): {e}") from None
    return vulkan


_context = {}
_context_lock = threading.Lock()


def context() -> "_Context":
    """The process's Vulkan instance, device and queue (opened once: creating a Vulkan device is
    the slow part, and every loaded module shares it)."""
    with _context_lock:
        if "ready" not in _context:
            try:
                _context["ready"] = _Context(_vk())
            except DeviceError:
                raise
            except Exception as e:  # noqa: BLE001 - any Vulkan error is a device that cannot run
                raise DeviceError(f"vulkan: {type(e).__name__} {e}".strip()) from None
        return _context["ready"]


class _Context:
    def __init__(self, vk):
        self.vk = vk
        self.lock = threading.Lock()   # one queue, one command buffer: one dispatch at a time
        app = vk.VkApplicationInfo(pApplicationName="mlirtext", applicationVersion=1, pEngineName="mlirtext",
                                   engineVersion=1, apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        try:
            self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
        except Exception as e:  # noqa: BLE001
            raise DeviceError(f"no Vulkan driver could be opened ({type(e).__name__}); on a machine without a "
                              "GPU install Mesa's lavapipe (Debian mesa-vulkan-drivers, `make gpu-deps`)") from None
        physical = vk.vkEnumeratePhysicalDevices(self.instance)
        if not physical:
            raise DeviceError("Vulkan found no device (install Debian mesa-vulkan-drivers for lavapipe)")
        self.physical = physical[0]
        self.device_name = vk.vkGetPhysicalDeviceProperties(self.physical).deviceName
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical)
        self.family = next((i for i, f in enumerate(families) if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT), None)
        if self.family is None:
            raise DeviceError(f"the Vulkan device {self.device_name} has no compute queue")
        # Enable every feature the device has (8/16-bit storage, int8/16/64, float16/64: the
        # shaders use the ones their element types need).
        f12 = vk.VkPhysicalDeviceVulkan12Features()
        f11 = vk.VkPhysicalDeviceVulkan11Features(pNext=f12)
        features = vk.VkPhysicalDeviceFeatures2(pNext=f11)
        vk.vkGetPhysicalDeviceFeatures2(self.physical, features)
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.family, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(self.physical, vk.VkDeviceCreateInfo(
            pNext=features, queueCreateInfoCount=1, pQueueCreateInfos=[queue]), None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.family, 0)
        self.pool = vk.vkCreateCommandPool(self.device, vk.VkCommandPoolCreateInfo(
            queueFamilyIndex=self.family, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT), None)
        self.command = vk.vkAllocateCommandBuffers(self.device, vk.VkCommandBufferAllocateInfo(
            commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        self.fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        wanted = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        self.memory_types = [i for i in range(memory.memoryTypeCount)
                             if memory.memoryTypes[i].propertyFlags & wanted == wanted]
        if not self.memory_types:
            raise DeviceError(f"the Vulkan device {self.device_name} has no host-visible coherent memory")
        #: The largest memory heap the buffers can be allocated from.
        self.capacity = max(memory.memoryHeaps[memory.memoryTypes[i].heapIndex].size for i in self.memory_types)


    def buffer(self, nbytes: int):
        vk = self.vk
        size = max(4, -(-nbytes // 4) * 4)
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(
            size=size, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
        needs = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        kind = next((i for i in self.memory_types if needs.memoryTypeBits & (1 << i)), None)
        if kind is None:
            raise DeviceError("no host-visible memory type fits a storage buffer")
        memory = vk.vkAllocateMemory(self.device, vk.VkMemoryAllocateInfo(allocationSize=needs.size,
                                                                          memoryTypeIndex=kind), None)
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        return buffer, memory, size


class VulkanDevice:
    name = "vulkan"

    def __init__(self, executable: dict, code: dict, kernels: dict):
        self.ctx = context()
        self.vk = self.ctx.vk
        self.kernels, self.launches, self.code = kernels, executable["kernels"], code
        self.pipelines: dict = {}

    def close(self) -> None:
        """Destroy this module's pipelines (the shared device stays open)."""
        vk, device = self.vk, self.ctx.device
        for pipeline, layout, set_layout, _ in self.pipelines.values():
            vk.vkDestroyPipeline(device, pipeline, None)
            vk.vkDestroyPipelineLayout(device, layout, None)
            vk.vkDestroyDescriptorSetLayout(device, set_layout, None)
        self.pipelines.clear()

    def _pipeline(self, name: str):
        if name in self.pipelines:
            return self.pipelines[name]
        vk = self.vk
        code = self.code[name]
        spec = self.kernels[name]
        count = len(spec["inputs"]) + len(spec["outputs"]) + len(self.launches[name].get("scratch", ()))
        device = self.ctx.device
        module = vk.vkCreateShaderModule(device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None)
        bindings = [vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                    descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                    for i in range(count)]
        set_layout = vk.vkCreateDescriptorSetLayout(device, vk.VkDescriptorSetLayoutCreateInfo(
            bindingCount=count, pBindings=bindings), None)
        layout = vk.vkCreatePipelineLayout(device, vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=1, pSetLayouts=[set_layout]), None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=name)
        pipeline = vk.vkCreateComputePipelines(device, None, 1, [vk.VkComputePipelineCreateInfo(
            stage=stage, layout=layout)], None)[0]
        vk.vkDestroyShaderModule(device, module, None)
        self.pipelines[name] = (pipeline, layout, set_layout, count)
        return self.pipelines[name]

    # -- kernels ---------------------------------------------------------------------------------
    def kernel(self, name: str):
        if name not in self.code:
            raise DeviceError(f"the vulkan-spirv executable has no kernel @{name}")
        launch = self.launches[name]   # a tiled kernel's grid, else a 1-D row of workgroups
        groups = tuple(launch.get("grid") or (launch["workgroups"], 1, 1))

        def run(inputs, outputs) -> None:
            with self.ctx.lock:
                try:
                    self._dispatch(name, groups, inputs, outputs)
                except DeviceError:
                    raise
                except Exception as e:  # noqa: BLE001
                    raise DeviceError(f"vulkan kernel @{name}: {type(e).__name__} {e}".strip()) from None
        return run

    def _dispatch(self, name: str, groups: tuple, inputs, outputs) -> None:
        vk, ctx, device = self.vk, self.ctx, self.ctx.device
        pipeline, layout, set_layout, count = self._pipeline(name)
        arrays = [_storage(a) for a in inputs] + [_storage(o) for o in outputs]
        scratch = self.launches[name].get("scratch", [])   # temporaries: device memory only
        check_device_buffers("vulkan", name, [max(4, a.nbytes) for a in arrays] + scratch, ctx.capacity)
        buffers = [ctx.buffer(a.nbytes) for a in arrays] + [ctx.buffer(n) for n in scratch]
        pool = vk.vkCreateDescriptorPool(device, vk.VkDescriptorPoolCreateInfo(
            maxSets=1, poolSizeCount=1, pPoolSizes=[vk.VkDescriptorPoolSize(
                type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=count)]), None)
        try:
            for (buffer, memory, size), a in zip(buffers[:len(inputs)], arrays):
                mapped = vk.vkMapMemory(device, memory, 0, size, 0)
                mapped[:a.nbytes] = a.tobytes()
                vk.vkUnmapMemory(device, memory)
            dset = vk.vkAllocateDescriptorSets(device, vk.VkDescriptorSetAllocateInfo(
                descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[set_layout]))[0]
            writes = [vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=i, descriptorCount=1,
                                              descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=size)])
                      for i, (b, _, size) in enumerate(buffers)]
            vk.vkUpdateDescriptorSets(device, len(writes), writes, 0, None)
            vk.vkResetCommandBuffer(ctx.command, 0)
            vk.vkBeginCommandBuffer(ctx.command, vk.VkCommandBufferBeginInfo(
                flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
            vk.vkCmdBindPipeline(ctx.command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
            vk.vkCmdBindDescriptorSets(ctx.command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [dset], 0, None)
            vk.vkCmdDispatch(ctx.command, *groups)
            vk.vkEndCommandBuffer(ctx.command)
            vk.vkResetFences(device, 1, [ctx.fence])
            vk.vkQueueSubmit(ctx.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[ctx.command])],
                             ctx.fence)
            try:
                vk.vkWaitForFences(device, 1, [ctx.fence], vk.VK_TRUE, 60 * 10 ** 9)
            except vk.VkTimeout:   # the buffers stay in use until the queue is idle: free them after
                vk.vkQueueWaitIdle(ctx.queue)
                raise DeviceError(f"vulkan kernel @{name}: ran longer than 60 s") from None
            for (buffer, memory, size), a, out in zip(buffers[len(inputs):], arrays[len(inputs):], outputs):
                mapped = vk.vkMapMemory(device, memory, 0, size, 0)
                got = np.frombuffer(bytes(mapped[:a.nbytes]), dtype=a.dtype).reshape(out.shape)
                vk.vkUnmapMemory(device, memory)
                np.copyto(out, got.view(out.dtype) if out.dtype != got.dtype else got, casting="unsafe")
        finally:
            vk.vkDestroyDescriptorPool(device, pool, None)
            for buffer, memory, _ in buffers:
                vk.vkDestroyBuffer(device, buffer, None)
                vk.vkFreeMemory(device, memory, None)

    def execute(self, steps, waves) -> None:
        for step in steps:
            step()


def _storage(a) -> np.ndarray:
    """An argument as the shader reads it: contiguous, booleans as bytes, a scalar as one element."""
    a = np.ascontiguousarray(np.asarray(a))
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    return a.reshape(a.shape or (1,))
