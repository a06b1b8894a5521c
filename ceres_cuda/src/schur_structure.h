#pragma once
// The general shape of a ceres::Problem for Schur-complement solvers, as Ceres 2.1 sees it: the
// e-blocks (eliminated: group 0 of options.linear_solver_ordering, or Ceres' independent set when
// there is no ordering), the f-blocks (every other variable block) and, per residual block, its
// parameter blocks in the cost function's order, of which at most one is an e-block. Blocks carry
// their manifold; sizes in the linear system are tangent sizes. analyze_schur_structure() builds it,
// or says why Ceres' Schur solvers would take the problem and ceres_cuda does not.
#include <ceres/manifold.h>
#include <ceres/problem.h>
#include <ceres/solver.h>

#include <string>
#include <vector>

#include "problem_source.h"
#include "residual_families.h"

namespace ceres_cuda::detail {

constexpr int kMaxEBlockTangentSize = 4;
constexpr int kMaxFBlockTangentSize = 16;
constexpr int kMaxResidualBlockSize = 16;

struct SchurBlock {
  double* user = nullptr;                     // the user's values
  int size = 0;                               // ambient size
  int tangent_size = 0;                       // size in the linear system
  const ceres::Manifold* manifold = nullptr;  // null: Euclidean (Plus is x + delta)
  long offset = 0;                            // into the engine's state (all blocks' ambient values)
  long tangent_offset = 0;                    // into tangent vectors (variable blocks only)
};

struct SchurResidual {
  const ceres::CostFunction* cost;
  const ceres::LossFunction* loss;
  int size;         // number of residuals
  long first_param; // into SchurStructure::params: the cost function's parameter blocks, in order
  int num_params;
  int e_block;      // the e-block (index into SchurStructure::blocks), -1 when there is none

  // Left uninitialised: the analysis sets every field of its millions of residuals on all threads, whose
  // first touches of the fresh memory then fault in parallel (fresh_memory.h).
  SchurResidual() {}
};

// Blocks are numbered f-blocks first, then e-blocks, then constant ones; tangent vectors hold the
// f-blocks' values, then the e-blocks' (the reduced system's unknowns come first).
struct SchurStructure {
  std::vector<SchurBlock> blocks;
  int num_f_blocks = 0, num_e_blocks = 0;
  long f_tangent_size = 0, e_tangent_size = 0;  // values in the f- and e-parts of tangent vectors
  long state_size = 0;                          // ambient values of all blocks (constant ones included)
  std::vector<SchurResidual> residuals;         // at least one of their blocks varies; family after family
  std::vector<ResidualFamily> families;         // ranges of residuals (residual_families.h)
  std::vector<SchurResidual> fixed_residuals;   // every block constant: they add fixed cost only
  std::vector<int> params;                      // block indices, see SchurResidual::first_param

  // Ceres' Summary counts of the whole problem.
  int num_parameter_blocks = 0, num_parameters = 0, num_effective_parameters = 0, num_residuals = 0;
  int num_residual_blocks = 0;

  int first_e_block() const { return num_f_blocks; }
  int num_variable_blocks() const { return num_f_blocks + num_e_blocks; }
  bool is_variable(int block) const { return block < num_variable_blocks(); }
  bool is_e_block(int block) const { return block >= num_f_blocks && block < num_variable_blocks(); }
  long tangent_size() const { return f_tangent_size + e_tangent_size; }
  const int* params_of(const SchurResidual& r) const { return params.data() + r.first_param; }
};

// "" when the options ask for something ceres_cuda's minimizer does not do (other than the choice of
// linear solver), otherwise what. Shared by both analyses.
std::string unsupported_options(const ceres::Solver::Options& options);

// Whether any value of the block has a bound (ceres_cuda's minimizer has no bounds constraints).
bool has_bounds(const ceres::Problem& problem, double* block, int size);

// The sizes Ceres reports as the Schur structure ("row,e,f", detect_structure.cc): those of the
// residuals with an e-block, their e-blocks and their f-blocks; kDynamic where they vary.
struct SchurSizes {
  static constexpr int kDynamic = -1;
  int row = 0, e = 0, f = 0;
  std::string to_string() const;  // "2,3,9", "d" for kDynamic
  // The template specialization Ceres 2.1 picks for these sizes (GetBestSchurTemplateSpecialization),
  // which its Summary reports as schur_structure_used.
  SchurSizes specialization() const;
};
SchurSizes detect_schur_sizes(const SchurStructure& structure);

// "" when Ceres' ITERATIVE_SCHUR, DENSE_SCHUR or SPARSE_SCHUR would take the problem and it fits the
// bounds above; otherwise the reason, for the log and SolveDetails.
std::string analyze_schur_structure(const ceres::Solver::Options& options, ceres::Problem* problem,
                                    SchurStructure* structure);
// The same from any source of the problem (problem_source.h).
std::string analyze_schur_structure(const ceres::Solver::Options& options, const ProblemSource& problem,
                                    SchurStructure* structure);

}  // namespace ceres_cuda::detail
