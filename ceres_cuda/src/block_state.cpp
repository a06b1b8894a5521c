#include "block_state.h"

#include <algorithm>
#include <cmath>

#include "guarded_call.h"

namespace ceres_cuda::detail {

BlockState::BlockState(const SchurStructure& structure, int threads) : s_(structure), threads_(threads) {
  x_.resize(structure.state_size);
  for (const SchurBlock& block : structure.blocks) std::copy(block.user, block.user + block.size, x_.begin() + block.offset);
  candidate_ = x_;
  variable_values_ = structure.num_variable_blocks() == static_cast<int>(structure.blocks.size())
                         ? structure.state_size
                         : structure.blocks[structure.num_variable_blocks()].offset;
}

bool BlockState::plus(const double* x, const double* delta, double* out) const {
  int failed = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : failed)
  for (int b = 0; b < s_.num_variable_blocks(); ++b) {
    const SchurBlock& block = s_.blocks[b];
    const double* xb = x + block.offset;
    const double* db = delta + block.tangent_offset;
    double* ob = out + block.offset;
    if (block.manifold != nullptr) {
      failed += guarded_call([&] { return block.manifold->Plus(xb, db, ob); }) ? 0 : 1;
    } else {
      for (int k = 0; k < block.size; ++k) ob[k] = xb[k] + db[k];
    }
  }
  return failed == 0;
}

bool BlockState::move_candidate(const double* delta) { return plus(x_.data(), delta, candidate_.data()); }

void BlockState::difference_norms(const std::vector<double>& a, const std::vector<double>& b, double* norm,
                                  double* max_norm) const {
  double sum = 0.0, largest = 0.0;
  for (long k = 0; k < variable_values_; ++k) {
    const double d = a[k] - b[k];
    sum += d * d;
    largest = std::max(largest, std::fabs(d));
  }
  *norm = std::sqrt(sum);
  *max_norm = largest;
}

double BlockState::x_norm() const {
  double sum = 0.0;
  for (long k = 0; k < variable_values_; ++k) sum += x_[k] * x_[k];
  return std::sqrt(sum);
}

double BlockState::step_norm() const {
  double norm = 0.0, unused = 0.0;
  difference_norms(x_, candidate_, &norm, &unused);
  return norm;
}

bool BlockState::projected_gradient_norms(const double* gradient, double* norm, double* max_norm) const {
  minus_gradient_.resize(s_.tangent_size());
  for (std::size_t k = 0; k < minus_gradient_.size(); ++k) minus_gradient_[k] = -gradient[k];
  moved_ = x_;  // the constant blocks' values too, which Plus leaves alone
  if (!plus(x_.data(), minus_gradient_.data(), moved_.data())) return false;
  difference_norms(x_, moved_, norm, max_norm);
  return true;
}

void BlockState::write_to_user() const {
  for (int b = 0; b < s_.num_variable_blocks(); ++b) {
    const SchurBlock& block = s_.blocks[b];
    std::copy(x_.begin() + block.offset, x_.begin() + block.offset + block.size, block.user);
  }
}

}  // namespace ceres_cuda::detail
