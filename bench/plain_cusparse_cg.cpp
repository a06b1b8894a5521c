#include "plain_cusparse_cg.h"

#include <cmath>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"

namespace bench {

double plain_cusparse_cg(const linalg_cuda::DeviceCsrMatrix& a, const linalg_cuda::DeviceVector<double>& b,
                         linalg_cuda::DeviceVector<double>& x, int iterations) {
  const cublasHandle_t blas = linalg_cuda::thread_context().cublas();
  const int n = static_cast<int>(a.rows());
  linalg_cuda::DeviceVector<double> r = b.copy(), p = b.copy(), q(a.rows());
  x.fill(0.0);
  double rr = 0.0;
  LINALG_CUDA_CHECK(cublasDdot(blas, n, r.data(), 1, r.data(), 1, &rr));
  for (int k = 0; k < iterations; ++k) {
    a.apply(p, q);  // cusparseSpMV
    double pq = 0.0;
    LINALG_CUDA_CHECK(cublasDdot(blas, n, p.data(), 1, q.data(), 1, &pq));
    const double alpha = rr / pq, minus_alpha = -alpha;
    LINALG_CUDA_CHECK(cublasDaxpy(blas, n, &alpha, p.data(), 1, x.data(), 1));
    LINALG_CUDA_CHECK(cublasDaxpy(blas, n, &minus_alpha, q.data(), 1, r.data(), 1));
    double rr_next = 0.0;
    LINALG_CUDA_CHECK(cublasDdot(blas, n, r.data(), 1, r.data(), 1, &rr_next));
    const double beta = rr_next / rr, one = 1.0;
    rr = rr_next;
    LINALG_CUDA_CHECK(cublasDscal(blas, n, &beta, p.data(), 1));
    LINALG_CUDA_CHECK(cublasDaxpy(blas, n, &one, r.data(), 1, p.data(), 1));
  }
  linalg_cuda::thread_context().synchronize();
  return std::sqrt(rr);
}

}  // namespace bench
