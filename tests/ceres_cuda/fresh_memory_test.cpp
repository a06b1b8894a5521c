// The host-memory advice of the set-up (fresh_memory.h, SolveOptions::advise_huge_pages): off unless a
// running Solve asks for it, counted across Solves, and never a change to what the memory holds or to
// a solve's result.
#include <cstdint>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/solve.h"
#include "fresh_memory.h"

namespace {

using ceres_cuda::detail::huge_page_advice_requests;
using ceres_cuda::detail::HugePageAdviceScope;

TEST(FreshMemory, AdviceIsOffUnlessAScopeAsksForIt) {
  EXPECT_EQ(huge_page_advice_requests().load(), 0);
  {
    const HugePageAdviceScope not_wanted(false);
    EXPECT_EQ(huge_page_advice_requests().load(), 0);
    const HugePageAdviceScope first(true);
    EXPECT_EQ(huge_page_advice_requests().load(), 1);
    {
      const HugePageAdviceScope second(true);
      EXPECT_EQ(huge_page_advice_requests().load(), 2);
    }
    EXPECT_EQ(huge_page_advice_requests().load(), 1);
  }
  EXPECT_EQ(huge_page_advice_requests().load(), 0);
}

// Arrays large enough to be advised (and faulted in on all threads) hold what is written to them,
// with and without the advice.
TEST(FreshMemory, AdvisedArraysHoldTheirValues) {
  for (const bool advise : {false, true}) {
    const HugePageAdviceScope scope(advise);
    const std::size_t n = (std::size_t{24} << 20) / sizeof(std::int32_t) + 12345;  // 24 MiB and a ragged end
    std::vector<std::int32_t> v;
    ceres_cuda::detail::reserve_fresh(&v, n);
    ASSERT_GE(v.capacity(), n);
    v.resize(n);
    EXPECT_EQ(std::accumulate(v.begin(), v.end(), std::int64_t{0}), 0) << advise;  // zero-filled
    std::iota(v.begin(), v.end(), 0);
    EXPECT_EQ(v[n - 1], static_cast<std::int32_t>(n - 1)) << advise;
    const auto a = ceres_cuda::detail::uninitialised_array<std::int32_t>(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::int32_t>(n - i);
    EXPECT_EQ(a[0], static_cast<std::int32_t>(n)) << advise;
    EXPECT_EQ(a[n - 1], 1) << advise;
  }
}

// The option changes paging only: the same solve, bit for bit.
TEST(FreshMemory, SolveWithTheAdviceGivesTheSameResult) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 8;
  o.num_points = 300;
  o.seed = 5;
  const ceres_cuda::BALProblem bal = ceres_cuda::make_synthetic_bal(o);
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::ITERATIVE_SCHUR;
  options.preconditioner_type = ceres::SCHUR_JACOBI;
  options.max_num_iterations = 10;
  double final_cost[2];
  for (const bool advise : {false, true}) {
    ceres_cuda::BALProblem copy = bal;
    auto problem = ba_test::make_problem(copy, false, nullptr);
    ceres_cuda::SolveOptions solve_options;
    solve_options.backend = ceres_cuda::Backend::Cpu;
    solve_options.advise_huge_pages = advise;
    ceres::Solver::Summary summary;
    ceres_cuda::SolveDetails details;
    ceres_cuda::Solve(options, problem.get(), &summary, solve_options, &details);
    ASSERT_EQ(details.path, ceres_cuda::SolveDetails::Path::Cpu) << details.fallback_reason;
    ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
    final_cost[advise] = summary.final_cost;
    EXPECT_EQ(huge_page_advice_requests().load(), 0);  // the Solve's scope ended with it
  }
  EXPECT_EQ(final_cost[0], final_cost[1]);
}

}  // namespace
