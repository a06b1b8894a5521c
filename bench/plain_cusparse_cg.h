#pragma once
// The textbook GPU CG the benchmark compares against: cusparseSpMV plus cuBLAS level-1 calls with
// host-side scalars (as in NVIDIA's conjugateGradient sample), i.e. what a user writes without
// fused kernels or graphs. Benchmark-only; not part of the library.
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/device_vector.h"

namespace bench {

// Runs exactly `iterations` unpreconditioned CG iterations from x = 0; returns the final |r|.
double plain_cusparse_cg(const linalg_cuda::DeviceCsrMatrix& a, const linalg_cuda::DeviceVector<double>& b,
                         linalg_cuda::DeviceVector<double>& x, int iterations);

}  // namespace bench
