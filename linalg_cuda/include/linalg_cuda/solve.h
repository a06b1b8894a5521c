#pragma once
// One call from host data to a solution, on the backend options.backend names: uploads A and b,
// builds the preconditioner options.preconditioner names, runs CG, downloads x. x is the initial
// guess on entry (resized to zeros if its size is wrong).
#include <memory>

#include <Eigen/Core>

#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/device_csr_matrix.h"
#include "linalg_cuda/matrix_market.h"
#include "linalg_cuda/preconditioner.h"
#include "linalg_cuda/solver_summary.h"

namespace linalg_cuda {

SolverSummary solve(const CsrMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options);

// The preconditioner `type` names, built on the device for A (nullptr for None).
std::unique_ptr<Preconditioner> make_preconditioner(const DeviceCsrMatrix& a, PreconditionerType type, int block_size);

}  // namespace linalg_cuda
