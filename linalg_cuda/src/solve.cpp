#include "linalg_cuda/solve.h"

#include <memory>

#include "linalg_cuda/conjugate_gradient.h"
#include "linalg_cuda/cpu_cg.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/preconditioner.h"

namespace linalg_cuda {

std::unique_ptr<Preconditioner> make_preconditioner(const DeviceCsrMatrix& a, PreconditionerType type, int block_size) {
  switch (type) {
    case PreconditionerType::None: return nullptr;
    case PreconditionerType::Jacobi: return std::make_unique<JacobiPreconditioner>(a);
    case PreconditionerType::BlockJacobi: return std::make_unique<BlockJacobiPreconditioner>(a, block_size);
  }
  throw InvalidArgument("unknown preconditioner type");
}

SolverSummary solve(const CsrMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options) {
  if (a.rows() != a.cols() || a.rows() != b.size())
    throw DimensionMismatch("solve: matrix is " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                            ", b has " + std::to_string(b.size()) + " entries");
  if (x.size() != b.size()) x = Eigen::VectorXd::Zero(b.size());
  if (resolve_backend(options.backend) == Backend::Cpu) return cpu::cg(a, b, x, options);

  const DeviceCsrMatrix device_a(a);
  const DeviceVector<double> device_b(b);
  DeviceVector<double> device_x(x);
  const std::unique_ptr<Preconditioner> preconditioner =
      make_preconditioner(device_a, options.preconditioner, options.block_size);
  SolverSummary summary = cg(device_a, device_b, device_x, options, preconditioner.get());
  device_x.download(x.data(), static_cast<std::size_t>(x.size()));
  return summary;
}

}  // namespace linalg_cuda
