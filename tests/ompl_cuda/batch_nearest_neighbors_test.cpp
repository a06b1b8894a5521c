// BatchNearestNeighbors (BatchedRRTstar's graph search): the CPU reference against OMPL's own
// distance() of the same spaces, and the GPU against the CPU, identical neighbour lists on random
// points with ties, growing point sets and batches split over several passes.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>

#include "batch_nearest_neighbors.h"
#include "linalg_cuda/errors.h"
#include "test_support.h"

namespace {

namespace ob = ompl::base;
using linalg_cuda::Backend;
using ompl_cuda::detail::BatchNearestNeighbors;
using ompl_cuda::detail::MetricKind;

std::vector<double> random_points(std::size_t count, int d, double low, double high, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  std::vector<double> v(count * d);
  for (double& x : v) x = u(rng);
  return v;
}

// An OMPL space of dimension d for the metric, and a state of it holding values.
struct OmplSpace {
  ob::StateSpacePtr space;
  ob::State* a;
  ob::State* b;
  OmplSpace(MetricKind kind, int d, const std::vector<double>& weights) {
    if (kind == MetricKind::kEuclidean) {
      space = std::make_shared<ob::RealVectorStateSpace>(d);
    } else {
      auto compound = std::make_shared<ob::CompoundStateSpace>();
      for (int i = 0; i < d; ++i) compound->addSubspace(std::make_shared<ob::SO2StateSpace>(), weights[i]);
      space = compound;
    }
    a = space->allocState();
    b = space->allocState();
  }
  ~OmplSpace() {
    space->freeState(a);
    space->freeState(b);
  }
  void set(ob::State* s, const double* x) const {
    if (auto* real = dynamic_cast<ob::RealVectorStateSpace*>(space.get())) {
      std::copy_n(x, real->getDimension(), s->as<ob::RealVectorStateSpace::StateType>()->values);
      return;
    }
    auto* c = s->as<ob::CompoundState>();
    for (unsigned i = 0; i < space->as<ob::CompoundStateSpace>()->getSubspaceCount(); ++i)
      c->as<ob::SO2StateSpace::StateType>(i)->value = x[i];
  }
  double distance(const double* x, const double* y) const {
    set(a, x);
    set(b, y);
    return space->distance(a, b);
  }
};

// The CPU search returns, for every query, k points whose OMPL distances are the k smallest, closest
// first.
void expect_matches_ompl(MetricKind kind, const std::vector<double>& weights, double low, double high) {
  const int d = 9;
  const std::size_t n = 1500, queries = 40;
  const std::vector<double> points = random_points(n, d, low, high, 3);
  const std::vector<double> q = random_points(queries, d, low, high, 4);
  BatchNearestNeighbors nn(kind, d, weights, Backend::Cpu);
  for (std::size_t i = 0; i < n; ++i) nn.add(points.data() + i * d);
  const OmplSpace ompl(kind, d, weights);
  std::vector<int> nearest, near;
  nn.nearest(q.data(), queries, nearest);
  for (int k : {1, 7, 40}) {
    ASSERT_EQ(nn.nearest_k(q.data(), queries, k, near), k);
    for (std::size_t i = 0; i < queries; ++i) {
      std::vector<double> all(n);
      for (std::size_t p = 0; p < n; ++p) all[p] = ompl.distance(q.data() + i * d, points.data() + p * d);
      std::vector<double> sorted = all;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(all[nearest[i]], sorted[0]);
      for (int j = 0; j < k; ++j) EXPECT_NEAR(all[near[i * k + j]], sorted[j], 1e-12) << "query " << i << " rank " << j;
    }
  }
}

TEST(BatchNearestNeighbors, CpuRanksAsOmplsEuclideanDistance) {
  expect_matches_ompl(MetricKind::kEuclidean, {}, -M_PI, M_PI);
}

TEST(BatchNearestNeighbors, CpuRanksAsOmplsSO2CompoundDistance) {
  expect_matches_ompl(MetricKind::kSO2Sum, {1.0, 0.5, 2.0, 1.0, 1.0, 3.0, 0.25, 1.0, 1.0}, -M_PI, M_PI * 0.999999);
}

TEST(BatchNearestNeighbors, KBeyondThePointCountAndBadInput) {
  BatchNearestNeighbors nn(MetricKind::kEuclidean, 2, {}, Backend::Cpu);
  std::vector<int> out;
  const double q[2] = {0.0, 0.0};
  EXPECT_THROW(nn.nearest(q, 1, out), linalg_cuda::InvalidArgument);
  EXPECT_EQ(nn.nearest_k(q, 1, 3, out), 0);
  const double p0[2] = {1.0, 0.0}, p1[2] = {0.5, 0.0};
  nn.add(p0);
  nn.add(p1);
  ASSERT_EQ(nn.nearest_k(q, 1, 5, out), 2);
  EXPECT_EQ(out, (std::vector<int>{1, 0}));
  EXPECT_THROW(nn.nearest_k(q, 1, 0, out), linalg_cuda::InvalidArgument);
  EXPECT_THROW(BatchNearestNeighbors(MetricKind::kSO2Sum, 3, {1.0}, Backend::Cpu), linalg_cuda::InvalidArgument);
  EXPECT_THROW(BatchNearestNeighbors(MetricKind::kEuclidean, 0, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
}

// GPU = CPU, list for list, while the point set grows between queries (the device copy is extended
// and reallocated), with duplicated points (ties ranked by index).
void expect_gpu_equals_cpu(MetricKind kind, const std::vector<double>& weights, std::size_t total, std::size_t queries,
                           int k) {
  const int d = 9;
  std::vector<double> points = random_points(total, d, -M_PI, M_PI, 5);
  for (std::size_t i = 0; i < total / 10; ++i)  // every tenth point repeats an earlier one
    std::copy_n(points.data() + (i * 7 % (total / 2)) * d, d, points.data() + (total / 2 + i * 5) * d);
  std::vector<double> q = random_points(queries, d, -M_PI, M_PI, 6);
  std::copy_n(points.data(), d, q.data());  // a query on a stored point: key 0
  BatchNearestNeighbors cpu(kind, d, weights, Backend::Cpu), gpu(kind, d, weights, Backend::Cuda);
  std::size_t stored = 0;
  for (std::size_t target : {std::size_t(1), std::size_t(700), total / 3, total}) {
    for (; stored < target; ++stored) {
      cpu.add(points.data() + stored * d);
      gpu.add(points.data() + stored * d);
    }
    std::vector<int> a, b;
    cpu.nearest(q.data(), queries, a);
    gpu.nearest(q.data(), queries, b);
    ASSERT_EQ(a, b) << "nearest, " << stored << " points";
    const int ka = cpu.nearest_k(q.data(), queries, k, a), kb = gpu.nearest_k(q.data(), queries, k, b);
    ASSERT_EQ(ka, kb);
    ASSERT_EQ(a, b) << "nearest_k, " << stored << " points";
  }
}

TEST(BatchNearestNeighborsGpu, EqualsCpuEuclidean) {
  REQUIRE_CUDA_DEVICE();
  expect_gpu_equals_cpu(MetricKind::kEuclidean, {}, 60000, 256, 40);
}

TEST(BatchNearestNeighborsGpu, EqualsCpuSO2Compound) {
  REQUIRE_CUDA_DEVICE();
  expect_gpu_equals_cpu(MetricKind::kSO2Sum, {1.0, 0.5, 2.0, 1.0, 1.0, 3.0, 0.25, 1.0, 1.0}, 20000, 100, 25);
}

TEST(BatchNearestNeighborsGpu, EqualsCpuWhenTheBatchNeedsSeveralPasses) {
  REQUIRE_CUDA_DEVICE();
  expect_gpu_equals_cpu(MetricKind::kEuclidean, {}, 300000, 150, 12);  // 4.5e7 pairs: two passes
}

}  // namespace
