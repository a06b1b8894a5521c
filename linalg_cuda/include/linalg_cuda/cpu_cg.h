#pragma once
// CPU reference of the conjugate-gradient solver (Eigen): the same iteration, stopping rules and
// preconditioners as the GPU solver. Backend::Cpu of solve(), and the yardstick of the GPU tests.
#include <functional>

#include <Eigen/Core>

#include "linalg_cuda/cg_options.h"
#include "linalg_cuda/csr_matrix.h"
#include "linalg_cuda/solver_summary.h"

namespace linalg_cuda::cpu {

using Apply = std::function<void(const Eigen::VectorXd& in, Eigen::VectorXd& out)>;

// General form: apply_a computes A v, apply_m computes M^{-1} v (empty function = no preconditioner).
SolverSummary cg(const Apply& apply_a, const Apply& apply_m, const Eigen::VectorXd& b, Eigen::VectorXd& x,
                 const CgOptions& options);

// Matrix forms: the preconditioner is options.preconditioner / options.block_size. A non-SPD diagonal
// or diagonal block throws InvalidArgument, exactly as the GPU preconditioners do.
SolverSummary cg(const CsrMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options);
SolverSummary cg(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, const CgOptions& options);

// M^{-1} as a function, built with the same block inversion the GPU uses.
Apply make_preconditioner(const CsrMatrix& a, PreconditionerType type, int block_size);

}  // namespace linalg_cuda::cpu
