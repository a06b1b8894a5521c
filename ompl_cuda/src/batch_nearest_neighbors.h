#pragma once
// Exact nearest neighbours for a whole batch of queries at once, by brute force: BatchedRRTstar's
// graph search. OMPL's GNAT answers one query at a time through a virtual distance per pair and took
// 80% of the batched planner's time; here every (query, point) key of a batch is one pass over the
// stored points, on the GPU (one launch for the keys, a segmented radix sort for the k smallest) or on
// all CPU cores (the reference). Both rank by (key, index): the same neighbours, in the same order.
//
// Points are appended (the tree only grows) and kept on the host; the GPU copy is brought up to date
// at the next query. Device memory grows with the tree and the batch, and is reused across calls; the
// stream is the search's own, made once.
#include <cstddef>
#include <memory>
#include <vector>

#include "linalg_cuda/backend.h"
#include "state_metric.h"

namespace ompl_cuda::detail {

class BatchNearestNeighbors {
 public:
  // `weights` per component for MetricKind::kSO2Sum (ignored for kEuclidean). Backend::Cuda without a
  // device throws linalg_cuda::Error.
  BatchNearestNeighbors(MetricKind kind, int dimension, std::vector<double> weights, linalg_cuda::Backend backend);
  ~BatchNearestNeighbors();
  BatchNearestNeighbors(const BatchNearestNeighbors&) = delete;
  BatchNearestNeighbors& operator=(const BatchNearestNeighbors&) = delete;

  linalg_cuda::Backend backend() const { return backend_; }
  int dimension() const { return view_.dimension; }
  std::size_t size() const { return points_.size() / view_.dimension; }
  // Appends one point (dimension() values); its index is size() before the call.
  void add(const double* point);
  void clear();

  // nearest[i] = index of the stored point closest to query i (queries[i * dimension() + c]); the
  // smallest index among equals. Requires size() > 0.
  void nearest(const double* queries, std::size_t count, std::vector<int>& nearest);
  // neighbours[i * k' + j] = the j-th closest stored point to query i, k' = min(k, size()) (returned),
  // ordered by key, then index.
  int nearest_k(const double* queries, std::size_t count, int k, std::vector<int>& neighbours);

 private:
  void nearest_k_cpu(const double* queries, std::size_t count, int k, int* neighbours) const;
  struct Device;
  void sync_device();

  MetricView view_{};
  std::vector<double> weights_;
  std::vector<double> points_;  // point-major: point i at i * dimension
  linalg_cuda::Backend backend_;
  std::unique_ptr<Device> device_;
};

}  // namespace ompl_cuda::detail
