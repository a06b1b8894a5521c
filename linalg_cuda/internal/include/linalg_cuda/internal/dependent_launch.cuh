#pragma once
// Programmatic dependent launch (compute capability 9.0 and later): a kernel launched with
// launch_after_previous may start while the kernel before it on the stream is still finishing, and
// waits for it (its memory writes visible) where it calls begin_dependent_kernel. A chain of short
// kernels, such as a CG iteration's, then loses less to each launch: the next kernel's blocks are
// placed on the multiprocessors the previous one's last blocks leave idle. Elsewhere (older devices,
// or a kernel launched as usual) both device calls do nothing. Graph capture keeps the relation.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace linalg_cuda::detail {

// At the top of a kernel launched with launch_after_previous, before it reads anything an earlier
// kernel wrote: waits for the previous kernel to complete, then lets the next one be placed (it
// too waits here before reading). Every thread calls it.
__device__ __forceinline__ void begin_dependent_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, shared, stream>>>(args...) with the programmatic-serialisation attribute.
// The kernel must call begin_dependent_kernel before reading what earlier work wrote.
template <class... Params, class... Args>
cudaError_t launch_after_previous(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared,
                                  cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace linalg_cuda::detail
