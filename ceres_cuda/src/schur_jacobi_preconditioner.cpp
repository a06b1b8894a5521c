#include "schur_jacobi_preconditioner.h"

#include <algorithm>

#include "device_upload.h"

namespace ceres_cuda::detail {

SchurJacobiPreconditioner::SchurJacobiPreconditioner(const SchurStructure& s, const CellProducts& products,
                                                     cudaStream_t stream)
    : products_(products), size_(static_cast<std::size_t>(s.f_tangent_size)) {
  std::vector<long> offsets(s.num_f_blocks + 1, 0);
  for (int b = 0; b < s.num_f_blocks; ++b) {
    const long t = s.blocks[b].tangent_size;
    offsets[b + 1] = offsets[b] + t * t;
  }
  offsets_ = upload_array(offsets, stream);
  blocks_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, offsets.back()), 0.0);
}

void SchurJacobiPreconditioner::update(bool schur, const double* d2, const double* v_inverse, int* singular) {
  products_.diagonal_blocks(schur, v_inverse);
  products_.finish_diagonal_blocks(d2, offsets_.as<long>(), blocks_.data(), singular);
}

}  // namespace ceres_cuda::detail
