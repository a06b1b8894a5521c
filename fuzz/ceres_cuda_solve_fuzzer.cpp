// libFuzzer harness of ceres_cuda::Solve against ceres::Solve. The input describes a small problem of
// the shapes Ceres' Schur solvers take: e-blocks (points, 1 to 4 values) and f-blocks (poses,
// cameras, intrinsics: 1 to 16 values), some constant, some on manifolds; residual blocks of 1 to 16
// values on at most one e-block and up to three f-blocks, with analytic cost functions (linear maps
// of the blocks' values plus a sine, the library's reprojection errors) and losses; the solver's
// options; and, where the input asks for them, edge values (NaN, infinities, 1e300) and misuses (a
// residual on two e-blocks, bounds, orderings that leave out or invent blocks, oversized blocks).
// The format is read front to back (fuzz/ceres_cuda_solve_fuzzer_seeds.py documents and writes it);
// bytes past the end read as 0, so every input is a problem.
//
// Each problem is built twice from the same description and solved by ceres_cuda::Solve (here the
// CPU engines: no CUDA device) and by ceres::Solve with the same options, one thread each. Findings
// (the process aborts, so libFuzzer keeps the input):
// - anything thrown out of ceres_cuda::Solve, or an internal error that Solve caught and reported as
//   a FAILURE ("ceres_cuda: ..."): on a problem of a few dozen residuals nothing may fail inside;
// - a usable solution whose final cost is not finite or exceeds the initial cost, or with non-finite
//   parameter values where the initial ones were finite;
// - where the outcome does not depend on rounding: a failure before the first iteration (non-finite
//   parameters, an ordering Ceres refuses, a cost function failing at the initial point or in a
//   residual block of constant blocks) in one solver and not the other, or with another message
//   (Ceres' messages name blocks by address, which are left out of the comparison); the Summary's
//   counts of the problem and of the reduced program, the ordering and the Schur structure used,
//   when both solvers ran their minimizer;
// - on a well-posed problem, another termination type, another number of iterations, or a final
//   cost that differs by more than 1e-6 relative (only the final cost where a tolerance is 0: when an
//   exact zero holds is rounding's decision). Well-posed: no edge values or raw values over 1e4, no
//   cost function that fails, ceres_cuda ran its own engine and regularised no block, no PCG landed
//   on r'z = 0 (LandedOnZeroRz below), and, where the two disagree, the normal equations at the start
//   have a condition number under 1e8 and ceres::Solve agrees with itself ten times closer than that
//   with its residual blocks in the reverse order and from initial values moved by 2^-40: rounding
//   alone moves ill-conditioned solves (docs/ceres_cuda.md);
// - where the input asks for it, ceres_cuda::Solve on two threads not giving the same bits as on one.
// Inputs on which ceres::Solve would abort the program (ceres_aborts_on) are solved by ceres_cuda
// only. Not compared, as decided (docs/reliability.md): the e-blocks of the BAL engines where Ceres'
// independent set is not the points (they take the points and log it, Ceres' choice being 9-value
// e-blocks), and Ceres' program order where blocks are declared with AddParameterBlock in another
// order than the residual blocks meet them (ceres_cuda cannot see it; the harness declares them in
// that order).
// CERES_CUDA_SOLVE_FUZZER_PRINT=1 prints each problem and both summaries; CERES_CUDA_SOLVE_FUZZER_STATS=1
// prints at exit how many inputs reached each check.
#include <ceres/cost_function.h>
#include <ceres/crs_matrix.h>
#include <ceres/loss_function.h>
#include <ceres/manifold.h>
#include <ceres/ordered_groups.h>
#include <ceres/problem.h>
#include <ceres/product_manifold.h>
#include <ceres/solver.h>
#include <ceres/sphere_manifold.h>
#include <ceres/types.h>
#include <glog/logging.h>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cfloat>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "ceres_cuda/quaternion_snavely_reprojection_error.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "ceres_cuda/solve.h"
#include "fuzz_support.h"

namespace {

// ---------------------------------------------------------------------------------------------
// The problem description and its byte format.

// Reads the input front to back; past its end every byte reads as 0.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() {
    const unsigned low = byte(), high = byte();  // in this order: operands of | have none
    return static_cast<uint16_t>(low | high << 8);
  }
  double raw_double() {
    uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) bits |= static_cast<uint64_t>(byte()) << (8 * k);
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

enum class Manifold { None, Quaternion, EigenQuaternion, Subset, Sphere, Pose7, Scaled };
const char* const kManifoldNames[] = {"none", "Quaternion", "EigenQuaternion", "Subset", "Sphere", "Pose7", "Scaled"};

struct Block {
  bool e = false;  // meant as an e-block (a point): in group 0 of the ordering the description builds
  int size = 1;
  Manifold manifold = Manifold::None;
  int subset_index = 0;  // the value a SubsetManifold holds
  bool constant = false, bounded = false;
  std::vector<double> values;
};

enum class Cost { Smooth, Failing, Snavely, QuaternionSnavely };
const char* const kCostNames[] = {"smooth", "failing", "Snavely", "QuaternionSnavely"};
enum class Loss { None, Huber, Cauchy };
const char* const kLossNames[] = {"none", "Huber", "Cauchy"};

struct Residual {
  Cost cost = Cost::Smooth;
  int size = 1;
  std::vector<int> blocks;  // indices into Description::blocks, in the cost function's order
  Loss loss = Loss::None;
  double loss_scale = 1.0;
  uint16_t seed = 0;                   // Smooth, Failing: the coefficients
  double nonlinearity = 0.0;           // Smooth, Failing: the sine's weight
  double fail_above = 0.0;             // Failing: fails where the first block's first value exceeds it
  bool fail_with_nan = false;          // Failing: a NaN residual instead of returning false
  double observed_x = 0, observed_y = 0;  // Snavely, QuaternionSnavely
};

struct Description {
  // Options.
  ceres::LinearSolverType linear_solver = ceres::ITERATIVE_SCHUR;
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  enum class Ordering { None, EBlocksFirst, OneGroup, FromBytes } ordering = Ordering::None;
  bool declare_blocks = false;  // AddParameterBlock for every block before the residual blocks (see build)
  bool jacobi_scaling = true;
  bool check_threads = false;
  int max_num_iterations = 1;
  double function_tolerance = 1e-6, gradient_tolerance = 1e-10, parameter_tolerance = 1e-8;
  double initial_trust_region_radius = 1e4, eta = 0.1;
  int max_linear_solver_iterations = 500;
  bool zero_tolerance = false;  // a function, gradient or parameter tolerance of 0 (rounding decides it)
  double min_relative_decrease = 1e-3;
  int max_num_consecutive_invalid_steps = 5;
  bool use_nonmonotonic_steps = false;
  // Input classes.
  bool edge_values = false, raw_values = false, bad_input = false;
  bool unusual_values = false;  // an edge value, or a raw one beyond 1e4 in magnitude or not finite
  bool failing_costs = false;
  // The problem.
  std::vector<Block> blocks;
  std::vector<Residual> residuals;
  std::vector<int> groups;  // Ordering::FromBytes: a group per block; -1: left out; 3: also a foreign block
};

// Values: 0x00-0xEF a step of 1/16 in [-7.5, 7.4375]; 0xF0 a raw double (8 bytes, little-endian) where
// the input allows raw values; 0xF1-0xFF edge values where it allows those; otherwise the step value.
constexpr double kEdgeValues[] = {NAN,     INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, 1e300, -1e300, 1e150,
                                  DBL_MIN, 4.9e-324, 1e-310,    -0.0,    1e-8,     1e8,   -1e8};

double read_value(Reader& in, Description& d) {
  const uint8_t tag = in.byte();
  if (tag == 0xF0 && d.raw_values) {
    const double v = in.raw_double();
    if (!(std::fabs(v) <= 1e4)) d.unusual_values = true;
    return v;
  }
  if (tag > 0xF0 && d.edge_values) {
    d.unusual_values = true;
    return kEdgeValues[tag - 0xF1];
  }
  return (tag - 120) / 16.0;
}

bool plus_jacobian_is_finite(const Block& block);  // below, with the manifolds

// The default first; 0 is a test that only rounding can decide (an exact zero).
constexpr double kFunctionTolerances[] = {1e-6, 1e-2, 1e-9, 0.0};
constexpr double kGradientTolerances[] = {1e-10, 1e-3, 1e-8, 0.0};
constexpr double kParameterTolerances[] = {1e-8, 1e-3, 1e-10, 0.0};
constexpr double kInitialRadii[] = {1e4, 1e-2, 1e8, 1.0};
constexpr double kEtas[] = {0.1, 1e-3, 0.5, 1e-9};
constexpr int kMaxLinearIterations[] = {500, 1, 5, 50};
constexpr double kNonlinearities[] = {0.0, 0.05, 0.3, 1.0};

Description decode(const uint8_t* data, size_t size) {
  Reader in(data, size);
  Description d;
  const uint8_t solver = in.byte(), iterations = in.byte(), tolerances = in.byte(), flags = in.byte();
  d.edge_values = flags & 1;
  d.raw_values = flags & 2;
  d.bad_input = flags & 4;
  switch (solver & 3) {
    case 1: d.linear_solver = ceres::SPARSE_SCHUR; break;
    case 2: d.linear_solver = ceres::DENSE_SCHUR; break;
    case 3: d.linear_solver = d.bad_input ? ceres::DENSE_QR : ceres::ITERATIVE_SCHUR; break;
    default: d.linear_solver = ceres::ITERATIVE_SCHUR;
  }
  d.preconditioner = solver & 4 ? ceres::JACOBI : ceres::SCHUR_JACOBI;
  d.ordering = static_cast<Description::Ordering>((solver >> 3) & 3);
  d.declare_blocks = solver & 32;
  d.jacobi_scaling = !(solver & 64);
  d.check_threads = solver & 128;
  d.max_num_iterations = 1 + iterations % 16;
  d.function_tolerance = kFunctionTolerances[(iterations >> 4) & 3];
  d.gradient_tolerance = kGradientTolerances[iterations >> 6];
  d.parameter_tolerance = kParameterTolerances[tolerances & 3];
  d.zero_tolerance = d.function_tolerance == 0.0 || d.gradient_tolerance == 0.0 || d.parameter_tolerance == 0.0;
  d.initial_trust_region_radius = kInitialRadii[(tolerances >> 2) & 3];
  d.eta = kEtas[(tolerances >> 4) & 3];
  d.max_linear_solver_iterations = kMaxLinearIterations[tolerances >> 6];
  if (flags & 8) d.min_relative_decrease = 0.5;
  if (flags & 16) d.max_num_consecutive_invalid_steps = 1;
  if ((flags & 32) && d.bad_input) d.preconditioner = ceres::IDENTITY;
  d.use_nonmonotonic_steps = (flags & 64) && d.bad_input;

  const uint8_t counts = in.byte();
  const int num_e = 1 + (counts & 7), num_f = 1 + ((counts >> 3) & 7);
  const int num_residuals = 1 + in.byte() % 40;
  for (int b = 0; b < num_e + num_f; ++b) {
    Block block;
    block.e = b < num_e;
    const uint8_t kind = in.byte();
    if (block.e) {
      block.size = 1 + (kind & 3);
      const int manifold = (kind >> 2) & 3;
      block.manifold = manifold == 1 ? Manifold::Subset : manifold == 2 ? Manifold::Sphere : Manifold::None;
      block.constant = kind & 16;
      block.bounded = (kind & 32) && d.bad_input;
      block.subset_index = kind >> 6;
    } else {
      const uint8_t more = in.byte();
      block.size = 1 + (kind & 15);
      if ((more & 32) && d.bad_input) block.size += 16;  // beyond what ceres_cuda takes
      block.manifold = static_cast<Manifold>(std::min(more & 7, 6));
      if (block.manifold == Manifold::Quaternion || block.manifold == Manifold::EigenQuaternion) block.size = 4;
      if (block.manifold == Manifold::Pose7) block.size = 7;
      block.constant = more & 8;
      block.bounded = (more & 16) && d.bad_input;
      block.subset_index = (kind >> 4) + (more >> 6);
    }
    if ((block.manifold == Manifold::Subset || block.manifold == Manifold::Sphere) && block.size < 2)
      block.manifold = Manifold::None;
    block.subset_index %= block.size;
    block.values.resize(block.size);
    for (double& v : block.values) v = read_value(in, d);
    // Ceres aborts (CHECK) when a manifold's PlusJacobian at a block's values fails or is not finite
    // as the manifold is set: a problem Ceres' API does not let a user build. Such a block has none.
    if (!plus_jacobian_is_finite(block)) block.manifold = Manifold::None;
    d.blocks.push_back(std::move(block));
  }

  for (int r = 0; r < num_residuals; ++r) {
    Residual residual;
    const uint8_t kind = in.byte(), e_choice = in.byte(), shape = in.byte();
    residual.size = 1 + (kind & 15);
    const int cost_kind = kind >> 4;
    const int e = e_choice % (num_e + 1);  // num_e: none
    std::vector<int> f;
    for (int k = 0; k < (shape & 3); ++k) {
      const int index = num_e + in.byte() % num_f;
      if (std::find(f.begin(), f.end(), index) == f.end()) f.push_back(index);
    }
    if (e == num_e && f.empty()) f.push_back(num_e + e_choice % num_f);
    residual.loss = static_cast<Loss>(std::min((shape >> 2) & 3, 2));
    residual.loss_scale = 0.25 * (1 + (shape >> 4));
    auto size_of = [&](int b) { return d.blocks[b].size; };
    if (cost_kind == 12 && e < num_e && size_of(e) == 3 && !f.empty() && size_of(f[0]) == 9) {
      residual.cost = Cost::Snavely;
      residual.size = 2;
      residual.blocks = {f[0], e};
    } else if (cost_kind == 13 && e < num_e && size_of(e) == 3 && f.size() == 3 && size_of(f[0]) == 4 &&
               size_of(f[1]) == 3 && size_of(f[2]) == 3) {
      residual.cost = Cost::QuaternionSnavely;
      residual.size = 2;
      residual.blocks = {f[0], f[1], f[2], e};
    } else {
      residual.cost = cost_kind == 10 ? Cost::Failing : Cost::Smooth;
      residual.blocks = f;
      if (e < num_e) residual.blocks.insert(residual.blocks.begin() + (kind & 1 ? 0 : residual.blocks.size()), e);
      if (cost_kind == 11 && d.bad_input) {  // a second e-block: not an independent set
        const int other = in.byte() % num_e;
        if (std::find(residual.blocks.begin(), residual.blocks.end(), other) == residual.blocks.end())
          residual.blocks.push_back(other);
      }
      if (cost_kind == 14 && d.bad_input) residual.size += 16;  // beyond what ceres_cuda takes
    }
    if (residual.cost == Cost::Snavely || residual.cost == Cost::QuaternionSnavely) {
      residual.observed_x = read_value(in, d);
      residual.observed_y = read_value(in, d);
    } else {
      residual.seed = in.u16();
      const uint8_t shape2 = in.byte();
      residual.nonlinearity = kNonlinearities[shape2 & 3];
      if (residual.cost == Cost::Failing) {
        residual.fail_above = ((shape2 >> 3) - 16) / 4.0;
        residual.fail_with_nan = shape2 & 4;
        d.failing_costs = true;
      }
    }
    d.residuals.push_back(std::move(residual));
  }
  if (d.ordering == Description::Ordering::FromBytes) {
    for (std::size_t b = 0; b < d.blocks.size(); ++b) {
      const uint8_t g = in.byte();
      d.groups.push_back(d.bad_input && g >= 0xFE ? (g == 0xFF ? -1 : 3) : g % 3);
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Cost functions and a manifold.

// A deterministic stream of coefficients in [-1, 1] (splitmix64).
class Coefficients {
 public:
  explicit Coefficients(uint64_t seed) : state_(seed) {}
  double next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) / static_cast<double>(1ull << 52) - 1.0;
  }

 private:
  uint64_t state_;
};

// r = A z + c sin(B z) - t over the blocks' values z, with A, B and t from the seed: smooth, mildly
// nonlinear for small c, and its exact Jacobian A + c diag(cos(B z)) B. Where it is told to fail, it
// returns false (or a NaN residual) when the first block's first value exceeds a threshold.
class SmoothCost final : public ceres::CostFunction {
 public:
  SmoothCost(const Residual& r, const std::vector<int>& block_sizes)
      : nonlinearity_(r.nonlinearity), failing_(r.cost == Cost::Failing), fail_above_(r.fail_above),
        fail_with_nan_(r.fail_with_nan) {
    set_num_residuals(r.size);
    *mutable_parameter_block_sizes() = block_sizes;
    n_ = std::accumulate(block_sizes.begin(), block_sizes.end(), 0);
    Coefficients c(r.seed * 0x100000001ull + static_cast<uint64_t>(r.size) * 977 + static_cast<uint64_t>(n_));
    a_.resize(static_cast<std::size_t>(r.size) * n_);
    b_.resize(a_.size());
    t_.resize(r.size);
    for (double& v : a_) v = c.next();
    for (double& v : b_) v = c.next();
    for (double& v : t_) v = 2.0 * c.next();
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const std::vector<int32_t>& sizes = parameter_block_sizes();
    if (failing_ && parameters[0][0] > fail_above_) {
      if (!fail_with_nan_) return false;
    }
    const int m = num_residuals();
    for (int i = 0; i < m; ++i) {
      double linear = 0.0, inner = 0.0;
      int j = 0;
      for (std::size_t k = 0; k < sizes.size(); ++k)
        for (int l = 0; l < sizes[k]; ++l, ++j) {
          linear += a_[i * n_ + j] * parameters[k][l];
          inner += b_[i * n_ + j] * parameters[k][l];
        }
      residuals[i] = linear + nonlinearity_ * std::sin(inner) - t_[i];
      if (!jacobians) continue;
      const double slope = nonlinearity_ * std::cos(inner);
      j = 0;
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        for (int l = 0; l < sizes[k]; ++l, ++j)
          if (jacobians[k]) jacobians[k][i * sizes[k] + l] = a_[i * n_ + j] + slope * b_[i * n_ + j];
      }
    }
    if (failing_ && fail_with_nan_ && parameters[0][0] > fail_above_) residuals[0] = NAN;
    return true;
  }

 private:
  double nonlinearity_;
  bool failing_;
  double fail_above_;
  bool fail_with_nan_;
  int n_ = 0;
  std::vector<double> a_, b_, t_;
};

// R^n with Plus(x, delta) = x + delta / 2: a user's manifold whose PlusJacobian is not the identity.
class ScaledManifold final : public ceres::Manifold {
 public:
  explicit ScaledManifold(int size) : size_(size) {}
  int AmbientSize() const override { return size_; }
  int TangentSize() const override { return size_; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    for (int i = 0; i < size_; ++i) x_plus_delta[i] = x[i] + 0.5 * delta[i];
    return true;
  }
  bool PlusJacobian(const double*, double* jacobian) const override {
    for (int i = 0; i < size_ * size_; ++i) jacobian[i] = i % (size_ + 1) == 0 ? 0.5 : 0.0;
    return true;
  }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    for (int i = 0; i < size_; ++i) y_minus_x[i] = 2.0 * (y[i] - x[i]);
    return true;
  }
  bool MinusJacobian(const double*, double* jacobian) const override {
    for (int i = 0; i < size_ * size_; ++i) jacobian[i] = i % (size_ + 1) == 0 ? 2.0 : 0.0;
    return true;
  }

 private:
  int size_;
};

ceres::Manifold* make_manifold(const Block& b) {
  switch (b.manifold) {
    case Manifold::None: return nullptr;
    case Manifold::Quaternion: return new ceres::QuaternionManifold;
    case Manifold::EigenQuaternion: return new ceres::EigenQuaternionManifold;
    case Manifold::Subset: return new ceres::SubsetManifold(b.size, {b.subset_index});
    case Manifold::Sphere: return new ceres::SphereManifold<ceres::DYNAMIC>(b.size);
    case Manifold::Pose7: return new ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<3>>;
    case Manifold::Scaled: return new ScaledManifold(b.size);
  }
  return nullptr;
}

bool plus_jacobian_is_finite(const Block& block) {
  const std::unique_ptr<ceres::Manifold> manifold(make_manifold(block));
  if (!manifold) return true;
  std::vector<double> jacobian(static_cast<std::size_t>(manifold->AmbientSize()) * manifold->TangentSize());
  if (!manifold->PlusJacobian(block.values.data(), jacobian.data())) return false;
  return std::all_of(jacobian.begin(), jacobian.end(), [](double v) { return std::isfinite(v); });
}

ceres::LossFunction* make_loss(const Residual& r) {
  switch (r.loss) {
    case Loss::None: return nullptr;
    case Loss::Huber: return new ceres::HuberLoss(r.loss_scale);
    case Loss::Cauchy: return new ceres::CauchyLoss(r.loss_scale);
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Building and solving.

// Where a block outside every problem points: an ordering that names it is refused.
double foreign_block[16];

enum class Order { AsGiven, Reversed };

// One copy of the described problem with its own parameter values and options.
struct Built {
  std::vector<std::vector<double>> values;  // per block, declared before the problem that points into it
  std::vector<bool> in_problem;
  std::unique_ptr<ceres::Problem> problem = std::make_unique<ceres::Problem>();
  ceres::Solver::Options options;
};

// Parameter blocks declared with AddParameterBlock (Description::declare_blocks, and every probe) are
// declared in the order in which the residual blocks as given meet them, then those no residual
// uses: Ceres' program order, and with it its choice of e-blocks, is then what it is without the
// declarations, the order ceres_cuda reads from the problem (Ceres' API does not tell the order of
// AddParameterBlock calls). `order` changes the order of the residual blocks only, so that a probe
// solves the same program with its sums in another order.
void build(const Description& d, Order order, int num_threads, Built* out) {
  Built& g = *out;
  const int B = static_cast<int>(d.blocks.size());
  g.values.resize(B);
  g.in_problem.assign(B, false);
  for (int b = 0; b < B; ++b) g.values[b] = d.blocks[b].values;
  ceres::Problem& problem = *g.problem;
  auto declare = [&](int b) {
    if (g.in_problem[b]) return;
    g.in_problem[b] = true;
    problem.AddParameterBlock(g.values[b].data(), d.blocks[b].size, make_manifold(d.blocks[b]));
  };
  if (d.declare_blocks || order != Order::AsGiven) {
    for (const Residual& r : d.residuals)
      for (int b : r.blocks) declare(b);
    if (d.declare_blocks)
      for (int b = 0; b < B; ++b) declare(b);
  }
  std::vector<int> residual_order(d.residuals.size());
  std::iota(residual_order.begin(), residual_order.end(), 0);
  if (order == Order::Reversed) std::reverse(residual_order.begin(), residual_order.end());
  for (int index : residual_order) {
    const Residual& r = d.residuals[index];
    std::vector<double*> blocks;
    std::vector<int> sizes;
    for (int b : r.blocks) {
      blocks.push_back(g.values[b].data());
      sizes.push_back(d.blocks[b].size);
    }
    ceres::CostFunction* cost = nullptr;
    if (r.cost == Cost::Snavely)
      cost = ceres_cuda::SnavelyReprojectionError::Create(r.observed_x, r.observed_y);
    else if (r.cost == Cost::QuaternionSnavely)
      cost = ceres_cuda::QuaternionSnavelyReprojectionError::Create(r.observed_x, r.observed_y);
    else
      cost = new SmoothCost(r, sizes);
    problem.AddResidualBlock(cost, make_loss(r), blocks);
    for (int b : r.blocks) g.in_problem[b] = true;
  }
  for (int b = 0; b < B; ++b) {
    if (!g.in_problem[b]) continue;
    const Block& block = d.blocks[b];
    double* values = g.values[b].data();
    if (!d.declare_blocks && order == Order::AsGiven && block.manifold != Manifold::None)
      problem.SetManifold(values, make_manifold(block));
    if (block.constant) problem.SetParameterBlockConstant(values);
    if (block.bounded) {
      problem.SetParameterLowerBound(values, 0, block.values[0] - 1.0);
      problem.SetParameterUpperBound(values, 0, block.values[0] + 1.0);
    }
  }

  ceres::Solver::Options& o = g.options;
  o.linear_solver_type = d.linear_solver;
  o.preconditioner_type = d.preconditioner;
  o.max_num_iterations = d.max_num_iterations;
  o.function_tolerance = d.function_tolerance;
  o.gradient_tolerance = d.gradient_tolerance;
  o.parameter_tolerance = d.parameter_tolerance;
  o.initial_trust_region_radius = d.initial_trust_region_radius;
  o.eta = d.eta;
  o.max_linear_solver_iterations = d.max_linear_solver_iterations;
  o.min_relative_decrease = d.min_relative_decrease;
  o.max_num_consecutive_invalid_steps = d.max_num_consecutive_invalid_steps;
  o.use_nonmonotonic_steps = d.use_nonmonotonic_steps;
  o.jacobi_scaling = d.jacobi_scaling;
  o.num_threads = num_threads;
  o.logging_type = ceres::SILENT;
  using Ordering = Description::Ordering;
  if (d.ordering == Ordering::None) return;
  o.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (int b = 0; b < B; ++b) {
    if (!g.in_problem[b]) continue;
    int group = d.ordering == Ordering::OneGroup ? 0 : d.ordering == Ordering::EBlocksFirst ? (d.blocks[b].e ? 0 : 1)
                                                                                          : d.groups[b];
    if (group == 3) {
      o.linear_solver_ordering->AddElementToGroup(foreign_block, 0);
      group = 1;
    }
    if (group >= 0) o.linear_solver_ordering->AddElementToGroup(g.values[b].data(), group);
  }
}

// Whether ceres::Solve would abort the program (a CHECK in ParameterBlockOrdering::MinNonZeroGroup)
// on this copy's ordering: one without elements, or, with a Schur solver, one whose every element is
// a block Ceres' reduced program drops (constant, or in no residual block) while some block varies.
// ceres::Solve is not run on those; ceres_cuda::Solve must still end without a crash.
bool ceres_aborts_on(const Description& d, const Built& g) {
  const ceres::ParameterBlockOrdering* ordering = g.options.linear_solver_ordering.get();
  if (!ordering) return false;
  if (ordering->NumElements() == 0) return true;
  if (d.linear_solver != ceres::DENSE_SCHUR && d.linear_solver != ceres::SPARSE_SCHUR &&
      d.linear_solver != ceres::ITERATIVE_SCHUR)
    return false;
  std::vector<bool> kept(d.blocks.size(), false);
  bool any_kept = false;
  for (const Residual& r : d.residuals)
    for (int b : r.blocks)
      if (!d.blocks[b].constant) kept[b] = any_kept = true;
  if (!any_kept || ordering->IsMember(foreign_block)) return false;
  for (std::size_t b = 0; b < d.blocks.size(); ++b)
    if (kept[b] && ordering->IsMember(const_cast<double*>(g.values[b].data()))) return false;
  return true;
}

struct CudaSolve {
  ceres::Solver::Summary summary;
  ceres_cuda::SolveDetails details;
};

void solve_with_ceres_cuda(Built& g, CudaSolve* out) {
  try {
    ceres_cuda::Solve(g.options, g.problem.get(), &out->summary, ceres_cuda::SolveOptions{}, &out->details);
  } catch (const std::exception& e) {
    fuzz::finding(std::string("ceres_cuda::Solve threw: ") + e.what());
  } catch (...) {
    fuzz::finding("ceres_cuda::Solve threw something that is not a std::exception");
  }
}

// ---------------------------------------------------------------------------------------------
// Reports.

std::string describe(const Description& d) {
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line,
                "options: %s %s, ordering %d, declare_blocks %d, jacobi_scaling %d, max_num_iterations %d, "
                "function/gradient/parameter tolerance %g/%g/%g, initial radius %g, eta %g, max PCG %d, "
                "min_relative_decrease %g, max invalid steps %d, nonmonotonic %d, threads check %d\n"
                "input: edge values %d, raw values %d, bad input %d, unusual values %d, failing costs %d\n",
                ceres::LinearSolverTypeToString(d.linear_solver), ceres::PreconditionerTypeToString(d.preconditioner),
                static_cast<int>(d.ordering), d.declare_blocks, d.jacobi_scaling, d.max_num_iterations,
                d.function_tolerance, d.gradient_tolerance, d.parameter_tolerance, d.initial_trust_region_radius,
                d.eta, d.max_linear_solver_iterations, d.min_relative_decrease, d.max_num_consecutive_invalid_steps,
                d.use_nonmonotonic_steps, d.check_threads, d.edge_values, d.raw_values, d.bad_input,
                d.unusual_values, d.failing_costs);
  s += line;
  for (std::size_t b = 0; b < d.blocks.size(); ++b) {
    const Block& k = d.blocks[b];
    std::snprintf(line, sizeof line, "block %zu: %s, size %d, manifold %s (%d)%s%s%s, values", b,
                  k.e ? "e" : "f", k.size, kManifoldNames[static_cast<int>(k.manifold)], k.subset_index,
                  k.constant ? ", constant" : "", k.bounded ? ", bounded" : "",
                  d.groups.empty() ? "" : (", group " + std::to_string(d.groups[b])).c_str());
    s += line;
    for (double v : k.values) {
      std::snprintf(line, sizeof line, " %.17g", v);
      s += line;
    }
    s += "\n";
  }
  for (std::size_t r = 0; r < d.residuals.size(); ++r) {
    const Residual& x = d.residuals[r];
    std::snprintf(line, sizeof line,
                  "residual %zu: %s, size %d, loss %s(%g), seed %u, nonlinearity %g, fail above %g%s, "
                  "observed %.17g %.17g, blocks",
                  r, kCostNames[static_cast<int>(x.cost)], x.size, kLossNames[static_cast<int>(x.loss)], x.loss_scale,
                  x.seed, x.nonlinearity, x.fail_above, x.fail_with_nan ? " (NaN)" : "", x.observed_x, x.observed_y);
    s += line;
    for (int b : x.blocks) s += " " + std::to_string(b);
    s += "\n";
  }
  return s;
}

std::string brief(const ceres::Solver::Summary& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%s after %zu iterations, cost %.17g -> %.17g, ordering used",
                ceres::TerminationTypeToString(s.termination_type), s.iterations.size(), s.initial_cost,
                s.final_cost);
  std::string text = line;
  for (int g : s.linear_solver_ordering_used) text += " " + std::to_string(g);
  text += ", schur " + s.schur_structure_used + "\n  " + s.message + "\n  iterations:";
  for (const ceres::IterationSummary& it : s.iterations) {
    std::snprintf(line, sizeof line, " [%.17g %s %d]", it.cost, it.step_is_successful ? "ok" : "rejected",
                  it.linear_solver_iterations);
    text += line;
  }
  return text;
}

const Description* current = nullptr;  // for the finding's report
const ceres::Solver::Summary* current_ours = nullptr;
const ceres::Solver::Summary* current_ceres = nullptr;

[[noreturn]] void finding(const std::string& what) {
  std::string report = what + "\n";
  if (current) report += describe(*current);
  if (current_ours) report += "ceres_cuda: " + brief(*current_ours) + "\n";
  if (current_ceres) report += "ceres:      " + brief(*current_ceres) + "\n";
  fuzz::finding(report);
}

// Counts of what each input reached, printed at exit with CERES_CUDA_SOLVE_FUZZER_STATS=1.
struct Stats {
  long inputs = 0, ceres_aborts = 0, fallback = 0, failed_before_iterating = 0, bal_engine_other_e_blocks = 0,
       compared_counts = 0, landed_on_zero_rz = 0, well_posed = 0, probed = 0, ill_posed_by_probe = 0,
       threads_checked = 0;
  ~Stats() {
    if (!std::getenv("CERES_CUDA_SOLVE_FUZZER_STATS")) return;
    std::fprintf(stderr,
                 "ceres_cuda_solve_fuzzer: %ld inputs: %ld that ceres::Solve aborts on, %ld handed to ceres::Solve, "
                 "%ld failed before iterating, %ld on the BAL engine with other e-blocks, %ld with counts "
                 "compared, %ld with a PCG on r'z = 0, %ld well-posed (termination, iterations and final cost "
                 "compared), %ld of them probed, %ld of those ill-posed, %ld checked on two threads\n",
                 inputs, ceres_aborts, fallback, failed_before_iterating, bal_engine_other_e_blocks, compared_counts,
                 landed_on_zero_rz, well_posed, probed, ill_posed_by_probe, threads_checked);
  }
} stats;

// ---------------------------------------------------------------------------------------------
// Comparisons.

// Ceres' messages name parameter blocks by address ("0x6030001a0bf0"), which differ between copies.
std::string without_addresses(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    const auto hex = [&](std::size_t k) {
      return k < message.size() && std::isxdigit(static_cast<unsigned char>(message[k]));
    };
    if (message.compare(i, 2, "0x") == 0 && hex(i + 2)) {
      out += "0x...";
      i += 2;
      while (hex(i + 1)) ++i;
      continue;
    }
    out += message[i];
  }
  return out;
}

bool failed_before_iterating(const ceres::Solver::Summary& s) {
  return s.termination_type == ceres::FAILURE && s.iterations.empty();
}

// Whether a block of the problem (one that a residual block uses or that was declared) holds a NaN or
// an infinity: both solvers then fail before they start, naming the first such block.
bool any_non_finite_value(const Description& d, const Built& g) {
  for (std::size_t b = 0; b < d.blocks.size(); ++b)
    if (g.in_problem[b])
      for (double v : d.blocks[b].values)
        if (!std::isfinite(v)) return true;
  return false;
}

void compare_counts(const ceres::Solver::Summary& ours, const ceres::Solver::Summary& ceres) {
  struct Field {
    const char* name;
    long a, b;
  };
  const Field fields[] = {
      {"num_parameter_blocks", ours.num_parameter_blocks, ceres.num_parameter_blocks},
      {"num_parameters", ours.num_parameters, ceres.num_parameters},
      {"num_effective_parameters", ours.num_effective_parameters, ceres.num_effective_parameters},
      {"num_residual_blocks", ours.num_residual_blocks, ceres.num_residual_blocks},
      {"num_residuals", ours.num_residuals, ceres.num_residuals},
      {"num_parameter_blocks_reduced", ours.num_parameter_blocks_reduced, ceres.num_parameter_blocks_reduced},
      {"num_parameters_reduced", ours.num_parameters_reduced, ceres.num_parameters_reduced},
      {"num_effective_parameters_reduced", ours.num_effective_parameters_reduced,
       ceres.num_effective_parameters_reduced},
      {"num_residual_blocks_reduced", ours.num_residual_blocks_reduced, ceres.num_residual_blocks_reduced},
      {"num_residuals_reduced", ours.num_residuals_reduced, ceres.num_residuals_reduced},
      {"linear_solver_type_used", ours.linear_solver_type_used, ceres.linear_solver_type_used},
      {"preconditioner_type_used", ours.preconditioner_type_used, ceres.preconditioner_type_used},
  };
  for (const Field& f : fields)
    if (f.a != f.b)
      finding(std::string("Summary::") + f.name + " differs: ceres_cuda " + std::to_string(f.a) + ", ceres " +
              std::to_string(f.b));
  if (ours.linear_solver_ordering_used != ceres.linear_solver_ordering_used)
    finding("Summary::linear_solver_ordering_used differs");
  if (ours.schur_structure_given != ceres.schur_structure_given ||
      ours.schur_structure_used != ceres.schur_structure_used)
    finding("Summary::schur_structure_given/used differ: ceres_cuda " + ours.schur_structure_given + " / " +
            ours.schur_structure_used + ", ceres " + ceres.schur_structure_given + " / " + ceres.schur_structure_used);
}

// Whether `other` ends as `reference` does: same termination, same number of iterations (unless
// cost_only), final costs within `relative`.
bool same_outcome(const ceres::Solver::Summary& reference, const ceres::Solver::Summary& other, double relative,
                  bool cost_only) {
  if (!cost_only && other.termination_type != reference.termination_type) return false;
  if (!cost_only && other.iterations.size() != reference.iterations.size()) return false;
  const double tolerance = relative * std::fabs(reference.final_cost) + 1e-14 * std::fabs(reference.initial_cost);
  return std::fabs(other.final_cost - reference.final_cost) <= tolerance;
}

constexpr double kRelativeCost = 1e-6;

// The condition number of J'J at the initial values: J over the tangent spaces of the blocks that
// vary, its columns scaled as Ceres scales them (jacobi_scaling), the losses applied. Infinite where
// J has fewer rows than columns or is singular. Ill-conditioned normal equations make the Schur
// complement cancel (S = F'F - F'E V^-1 E'F), and rounding alone then moves the steps.
double initial_condition_number(const Description& d) {
  Built g;
  build(d, Order::AsGiven, 1, &g);
  ceres::Problem::EvaluateOptions options;
  for (std::size_t b = 0; b < d.blocks.size(); ++b)
    if (g.in_problem[b] && !d.blocks[b].constant) options.parameter_blocks.push_back(g.values[b].data());
  ceres::CRSMatrix crs;
  double cost = 0.0;
  if (options.parameter_blocks.empty() || !g.problem->Evaluate(options, &cost, nullptr, nullptr, &crs))
    return INFINITY;
  if (crs.num_rows < crs.num_cols) return INFINITY;
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
  for (int row = 0; row < crs.num_rows; ++row)
    for (int k = crs.rows[row]; k < crs.rows[row + 1]; ++k) j(row, crs.cols[k]) = crs.values[k];
  if (!j.allFinite()) return INFINITY;
  if (d.jacobi_scaling)
    for (Eigen::Index c = 0; c < j.cols(); ++c) j.col(c) /= 1.0 + j.col(c).norm();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(j.transpose() * j, Eigen::EigenvaluesOnly);
  const double smallest = eigen.eigenvalues().minCoeff(), largest = eigen.eigenvalues().maxCoeff();
  return smallest > 0.0 ? largest / smallest : INFINITY;
}

// Normal equations better conditioned than this leave rounding errors of 1e-16 below 1e-8.
constexpr double kMaxConditionNumber = 1e8;

// Whether rounding cannot decide the comparison: ceres::Solve agrees with `reference` ten times
// closer than ceres_cuda must on the problem with its residual blocks in the reverse order (its sums
// in another order) and from initial values moved by 2^-40 relative (about 1e-12, ten thousand times
// a rounding error: a solve that moves by less than 1e-7 from that moves by far less from rounding).
bool ceres_agrees_with_itself(const Description& d, const ceres::Solver::Summary& reference) {
  for (const bool perturbed : {false, true}) {
    Built probe;
    build(d, perturbed ? Order::AsGiven : Order::Reversed, 1, &probe);
    if (perturbed)
      for (std::vector<double>& block : probe.values)
        for (double& v : block) v += std::ldexp(std::max(std::fabs(v), 1.0), -40);
    ceres::Solver::Summary s;
    ceres::Solve(probe.options, probe.problem.get(), &s);
    if (s.linear_solver_ordering_used != reference.linear_solver_ordering_used) return false;
    if (!same_outcome(reference, s, 0.1 * kRelativeCost, d.zero_tolerance)) return false;
  }
  return true;
}

bool same_bits(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].size() != b[k].size() || std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(double)) != 0)
      return false;
  return true;
}

bool print_each = false;

// Ceres' CG fails a step whose iteration lands on r'z = 0 (r = 0 exactly: a reduced system of one
// value, or a preconditioner that inverts it), and ceres_cuda fails it the same way; both log it
// (LevenbergMarquardtStrategy's "Linear solver failure" warning). Whether an iteration lands there or
// a rounding error away is decided by the last bit of sums that the two solvers form in different
// orders: a solve where either logged it is not compared.
class LandedOnZeroRz final : public google::LogSink {
 public:
  void send(google::LogSeverity, const char*, const char*, int, const google::LogMessageTime&, const char* message,
            size_t length) override {
    if (std::string(message, length).find("rho = r'z = 0.000000e+00") != std::string::npos) seen = true;
  }
  bool seen = false;
} landed_on_zero_rz;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  print_each = std::getenv("CERES_CUDA_SOLVE_FUZZER_PRINT") != nullptr;
  // LLVM's OpenMP keeps a parallel region's threads spinning 200 ms after it; the solves' regions last
  // microseconds, and the spinning takes the cores from the next input (and from whatever else runs).
  setenv("KMP_BLOCKTIME", "0", 0);
  // Warnings reach landed_on_zero_rz, and stderr only with CERES_CUDA_SOLVE_FUZZER_PRINT (ceres_cuda
  // logs one for every problem it hands to ceres::Solve); no log files.
  google::InitGoogleLogging("ceres_cuda_solve_fuzzer");
  for (google::LogSeverity s : {google::GLOG_INFO, google::GLOG_WARNING, google::GLOG_ERROR, google::GLOG_FATAL})
    google::SetLogDestination(s, "");
  FLAGS_logtostderr = false;
  FLAGS_minloglevel = google::GLOG_WARNING;
  FLAGS_stderrthreshold = print_each ? google::GLOG_WARNING : google::GLOG_FATAL;
  google::AddLogSink(&landed_on_zero_rz);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Description d = decode(data, size);
  current = &d;
  current_ours = current_ceres = nullptr;
  ++stats.inputs;

  Built ours_problem, ceres_problem;
  build(d, Order::AsGiven, 1, &ours_problem);
  build(d, Order::AsGiven, 1, &ceres_problem);
  CudaSolve ours;
  landed_on_zero_rz.seen = false;
  solve_with_ceres_cuda(ours_problem, &ours);
  current_ours = &ours.summary;
  const bool fallback = ours.details.path == ceres_cuda::SolveDetails::Path::CeresFallback;
  if (!fallback && ours.summary.message.rfind("ceres_cuda: ", 0) == 0)
    finding("ceres_cuda::Solve failed inside: " + ours.summary.message);
  if (ceres_aborts_on(d, ceres_problem)) {
    ++stats.ceres_aborts;
    if (print_each)
      std::fprintf(stderr, "%sceres_cuda (%s): %s\nceres::Solve would abort\n", describe(d).c_str(),
                   ceres_cuda::to_string(ours.details.path), brief(ours.summary).c_str());
    current = nullptr;
    return 0;
  }
  ceres::Solver::Summary reference;
  ceres::Solve(ceres_problem.options, ceres_problem.problem.get(), &reference);
  current_ceres = &reference;
  const bool landed_on_zero = landed_on_zero_rz.seen;
  stats.landed_on_zero_rz += landed_on_zero;
  if (print_each)
    std::fprintf(stderr, "%sceres_cuda (%s): %s\nceres:      %s\n", describe(d).c_str(),
                 ceres_cuda::to_string(ours.details.path), brief(ours.summary).c_str(), brief(reference).c_str());

  const ceres::Solver::Summary& s = ours.summary;
  stats.fallback += fallback;

  // A usable solution: a finite cost no higher than the initial one, finite values where they were.
  if (!fallback && s.IsSolutionUsable()) {
    if (!std::isfinite(s.final_cost) || !(s.final_cost <= s.initial_cost))
      finding("a usable solution whose final cost is not finite or exceeds the initial cost");
    if (!any_non_finite_value(d, ceres_problem))
      for (std::size_t b = 0; b < d.blocks.size(); ++b)
        for (double v : ours_problem.values[b])
          if (ours_problem.in_problem[b] && !std::isfinite(v))
            finding("a usable solution with a non-finite parameter value");
  }

  // Failures before the first iteration do not depend on rounding (unless edge values make the
  // initial cost overflow in one order of summation and not in the other).
  const bool ours_failed = failed_before_iterating(s), ceres_failed = failed_before_iterating(reference);
  stats.failed_before_iterating += ceres_failed;
  if (!d.unusual_values || any_non_finite_value(d, ceres_problem)) {
    if (ours_failed != ceres_failed) finding("one solver failed before its first iteration and the other did not");
    if (ours_failed && without_addresses(s.message) != without_addresses(reference.message))
      finding("failed before its first iteration with another message");
  }
  // The BAL engines (SnavelyReprojectionError everywhere) eliminate the 3-value blocks where no
  // ordering is given, also where Ceres' independent set takes a camera that has fewer neighbours
  // than its points (Solve logs it). Such a solve is another linear system: not compared.
  const bool bal_engine = ours.details.path == ceres_cuda::SolveDetails::Path::FastGpu ||
                          ours.details.engine.rfind("cpu reference,", 0) == 0;
  const bool other_e_blocks = bal_engine && d.ordering == Description::Ordering::None &&
                              (s.linear_solver_ordering_used != reference.linear_solver_ordering_used ||
                               s.schur_structure_given != reference.schur_structure_given);
  stats.bal_engine_other_e_blocks += other_e_blocks;
  if (!s.iterations.empty() && !reference.iterations.empty() && !fallback && !other_e_blocks) {
    ++stats.compared_counts;
    compare_counts(s, reference);
  }

  // Well-posed problems: the same termination, iterations and final cost.
  if (!fallback && !d.unusual_values && !d.failing_costs && !ceres_failed && reference.IsSolutionUsable() &&
      !landed_on_zero && !other_e_blocks && ours.details.singular_point_blocks == 0 &&
      ours.details.singular_camera_blocks == 0) {
    ++stats.well_posed;
    if (!same_outcome(reference, s, kRelativeCost, d.zero_tolerance)) {
      ++stats.probed;
      const double condition = initial_condition_number(d);
      if (condition <= kMaxConditionNumber && ceres_agrees_with_itself(d, reference))
        finding("ceres_cuda::Solve ends otherwise than ceres::Solve on a well-posed problem (condition number of "
                "J'J " + std::to_string(condition) + ")");
      ++stats.ill_posed_by_probe;
    }
  }

  // Determinism: the same bits on two threads.
  if (d.check_threads && !fallback) {
    ++stats.threads_checked;
    Built again;
    build(d, Order::AsGiven, 2, &again);
    CudaSolve two;
    solve_with_ceres_cuda(again, &two);
    bool same = two.summary.termination_type == s.termination_type &&
                two.summary.iterations.size() == s.iterations.size() && same_bits(again.values, ours_problem.values);
    for (std::size_t k = 0; same && k < s.iterations.size(); ++k)
      same = std::memcmp(&two.summary.iterations[k].cost, &s.iterations[k].cost, sizeof(double)) == 0;
    if (!same) finding("ceres_cuda::Solve gives other bits on two threads than on one");
  }
  current = nullptr;
  current_ours = current_ceres = nullptr;
  return 0;
}
