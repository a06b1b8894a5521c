#include "batch_nearest_neighbors.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include <cub/device/device_segmented_radix_sort.cuh>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_stream.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace ompl_cuda::detail {
namespace {

constexpr int kThreads = 256;
// Keys of at most this many (query, point) pairs live on the GPU at once; larger batches are split.
constexpr std::size_t kMaxPairsPerPass = std::size_t(1) << 25;

// (key, index) order: the smaller key, then the smaller index. A total order, so a reduction with it
// gives the same answer whatever order the pairs are combined in.
LINALG_HD bool precedes(double key_a, int index_a, double key_b, int index_b) {
  return key_a < key_b || (key_a == key_b && index_a < index_b);
}

// keys[q * n + i] = key(query q, point i), indices[q * n + i] = i.
__global__ void __launch_bounds__(kThreads) pair_keys_kernel(MetricView m, const double* __restrict__ points,
                                                               int n, const double* __restrict__ queries,
                                                               double* __restrict__ keys, int* __restrict__ indices) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const int q = blockIdx.y;
  const double* p = points + static_cast<std::size_t>(i) * m.dimension;
  const double* x = queries + static_cast<std::size_t>(q) * m.dimension;
  const std::size_t slot = static_cast<std::size_t>(q) * n + i;
  keys[slot] = metric_key(m, [p](int c) { return p[c]; }, [x](int c) { return x[c]; });
  indices[slot] = i;
}

// nearest[q] for query q: one block per query, each thread the best of its stride, then a block-wide
// minimum in (key, index) order.
__global__ void __launch_bounds__(kThreads) nearest_kernel(MetricView m, const double* __restrict__ points, int n,
                                                             const double* __restrict__ queries,
                                                             int* __restrict__ nearest) {
  const double* x = queries + static_cast<std::size_t>(blockIdx.x) * m.dimension;
  double best_key = INFINITY;
  int best = 0x7fffffff;
  for (int i = threadIdx.x; i < n; i += kThreads) {
    const double* p = points + static_cast<std::size_t>(i) * m.dimension;
    const double key = metric_key(m, [p](int c) { return p[c]; }, [x](int c) { return x[c]; });
    if (precedes(key, i, best_key, best)) {
      best_key = key;
      best = i;
    }
  }
  __shared__ double keys[kThreads];
  __shared__ int indices[kThreads];
  keys[threadIdx.x] = best_key;
  indices[threadIdx.x] = best;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const int other = threadIdx.x + stride;
      if (precedes(keys[other], indices[other], keys[threadIdx.x], indices[threadIdx.x])) {
        keys[threadIdx.x] = keys[other];
        indices[threadIdx.x] = indices[other];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) nearest[blockIdx.x] = indices[0];
}

// out[q * k + j] = sorted[q * n + j], j < k.
__global__ void first_k_kernel(const int* __restrict__ sorted, int n, int k, int queries, int* __restrict__ out) {
  const int t = blockIdx.x * kThreads + threadIdx.x;
  if (t >= queries * k) return;
  const int q = t / k, j = t % k;
  out[t] = sorted[static_cast<std::size_t>(q) * n + j];
}

}  // namespace

struct BatchNearestNeighbors::Device {
  linalg_cuda::DeviceBuffer points, weights, queries, keys, keys_sorted, indices, indices_sorted, offsets, scratch,
      results;
  linalg_cuda::CudaStream stream;  // its own: the planner may run on any thread
  std::size_t synced = 0;    // points already on the device
  std::size_t capacity = 0;  // points the device buffer holds
  MetricView view{};
};

BatchNearestNeighbors::BatchNearestNeighbors(MetricKind kind, int dimension, std::vector<double> weights,
                                             linalg_cuda::Backend backend)
    : weights_(std::move(weights)), backend_(linalg_cuda::resolve_backend(backend)) {
  if (dimension <= 0) throw linalg_cuda::InvalidArgument("BatchNearestNeighbors: dimension must be positive");
  if (kind == MetricKind::kSO2Sum && static_cast<int>(weights_.size()) != dimension)
    throw linalg_cuda::InvalidArgument("BatchNearestNeighbors: " + std::to_string(weights_.size()) +
                                       " weights for " + std::to_string(dimension) + " SO2 components");
  view_ = {kind, dimension, weights_.data()};
  if (backend_ != linalg_cuda::Backend::Cuda) return;
  device_ = std::make_unique<Device>();
  device_->view = view_;
  if (!weights_.empty()) {
    device_->weights.reserve(weights_.size() * sizeof(double));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_->weights.data(), weights_.data(), weights_.size() * sizeof(double),
                                      cudaMemcpyHostToDevice, device_->stream.get()));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(device_->stream.get()));
    device_->view.weights = device_->weights.as<double>();
  }
}

BatchNearestNeighbors::~BatchNearestNeighbors() = default;

void BatchNearestNeighbors::add(const double* point) { points_.insert(points_.end(), point, point + view_.dimension); }

void BatchNearestNeighbors::clear() {
  points_.clear();
  if (device_) device_->synced = 0;
}

void BatchNearestNeighbors::sync_device() {
  Device& dev = *device_;
  const std::size_t n = size(), row = view_.dimension * sizeof(double);
  const cudaStream_t stream = device_->stream.get();
  if (n > dev.capacity) {  // grow (geometrically) and send everything again: reserve() keeps nothing
    dev.capacity = std::max<std::size_t>({n, 2 * dev.capacity, 1024});
    dev.points.reserve(dev.capacity * row);
    dev.synced = 0;
  }
  if (dev.synced < n)
    LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.points.as<unsigned char>() + dev.synced * row,
                                      points_.data() + dev.synced * view_.dimension, (n - dev.synced) * row,
                                      cudaMemcpyHostToDevice, stream));
  dev.synced = n;
}

void BatchNearestNeighbors::nearest(const double* queries, std::size_t count, std::vector<int>& nearest) {
  const std::size_t n = size();
  if (n == 0) throw linalg_cuda::InvalidArgument("BatchNearestNeighbors::nearest: no points stored");
  nearest.resize(count);
  if (count == 0) return;
  const int d = view_.dimension;
  if (backend_ != linalg_cuda::Backend::Cuda) {
    const long queries_count = static_cast<long>(count);
#pragma omp parallel for schedule(static) if (count * n > 100000)
    for (long q = 0; q < queries_count; ++q) {
      const double* x = queries + q * d;
      double best_key = INFINITY;
      int best = 0x7fffffff;
      for (std::size_t i = 0; i < n; ++i) {
        const double* p = points_.data() + i * d;
        const double key = metric_key(view_, [p](int c) { return p[c]; }, [x](int c) { return x[c]; });
        if (precedes(key, static_cast<int>(i), best_key, best)) {
          best_key = key;
          best = static_cast<int>(i);
        }
      }
      nearest[q] = best;
    }
    return;
  }
  sync_device();
  Device& dev = *device_;
  const cudaStream_t stream = device_->stream.get();
  dev.queries.reserve(count * d * sizeof(double));
  dev.results.reserve(count * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.queries.data(), queries, count * d * sizeof(double), cudaMemcpyHostToDevice,
                                    stream));
  nearest_kernel<<<static_cast<unsigned>(count), kThreads, 0, stream>>>(
      dev.view, dev.points.as<double>(), static_cast<int>(n), dev.queries.as<double>(), dev.results.as<int>());
  LINALG_CUDA_CHECK_LAUNCH();
  LINALG_CUDA_CHECK(cudaMemcpyAsync(nearest.data(), dev.results.data(), count * sizeof(int), cudaMemcpyDeviceToHost,
                                    stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void BatchNearestNeighbors::nearest_k_cpu(const double* queries, std::size_t count, int k, int* neighbours) const {
  const std::size_t n = size();
  const int d = view_.dimension;
  const long queries_count = static_cast<long>(count);
#pragma omp parallel if (count * n > 100000)
  {
    std::vector<std::pair<double, int>> ranked(n);
#pragma omp for schedule(static)
    for (long q = 0; q < queries_count; ++q) {
      const double* x = queries + q * d;
      for (std::size_t i = 0; i < n; ++i) {
        const double* p = points_.data() + i * d;
        ranked[i] = {metric_key(view_, [p](int c) { return p[c]; }, [x](int c) { return x[c]; }), static_cast<int>(i)};
      }
      std::partial_sort(ranked.begin(), ranked.begin() + k, ranked.end());  // pairs: key, then index
      for (int j = 0; j < k; ++j) neighbours[q * k + j] = ranked[j].second;
    }
  }
}

int BatchNearestNeighbors::nearest_k(const double* queries, std::size_t count, int k, std::vector<int>& neighbours) {
  const std::size_t n = size();
  if (k <= 0) throw linalg_cuda::InvalidArgument("BatchNearestNeighbors::nearest_k: k must be positive");
  k = static_cast<int>(std::min<std::size_t>(k, n));
  neighbours.resize(count * k);
  if (count == 0 || k == 0) return k;
  if (backend_ != linalg_cuda::Backend::Cuda) {
    nearest_k_cpu(queries, count, k, neighbours.data());
    return k;
  }
  if (n > static_cast<std::size_t>(INT32_MAX) / 2)
    throw linalg_cuda::InvalidArgument("BatchNearestNeighbors: more than 2^30 points");
  sync_device();
  Device& dev = *device_;
  const int d = view_.dimension;
  const cudaStream_t stream = device_->stream.get();
  // Queries per pass: as many as keep the keys of the pass under kMaxPairsPerPass (at least one).
  const std::size_t per_pass = std::max<std::size_t>(1, std::min(count, kMaxPairsPerPass / n));
  const std::size_t pairs = per_pass * n;
  dev.queries.reserve(count * d * sizeof(double));
  dev.keys.reserve(pairs * sizeof(double));
  dev.keys_sorted.reserve(pairs * sizeof(double));
  dev.indices.reserve(pairs * sizeof(int));
  dev.indices_sorted.reserve(pairs * sizeof(int));
  dev.offsets.reserve((per_pass + 1) * sizeof(int));
  dev.results.reserve(count * k * sizeof(int));
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.queries.data(), queries, count * d * sizeof(double), cudaMemcpyHostToDevice,
                                    stream));
  std::vector<int> offsets(per_pass + 1);
  for (std::size_t q = 0; q <= per_pass; ++q) offsets[q] = static_cast<int>(q * n);  // n * per_pass < 2^31
  LINALG_CUDA_CHECK(cudaMemcpyAsync(dev.offsets.data(), offsets.data(), offsets.size() * sizeof(int),
                                    cudaMemcpyHostToDevice, stream));
  std::size_t scratch_bytes = 0;
  LINALG_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, scratch_bytes, dev.keys.as<double>(), dev.keys_sorted.as<double>(), dev.indices.as<int>(),
      dev.indices_sorted.as<int>(), static_cast<int>(pairs), static_cast<int>(per_pass), dev.offsets.as<int>(),
      dev.offsets.as<int>() + 1, 0, 64, stream));
  dev.scratch.reserve(scratch_bytes);
  for (std::size_t first = 0; first < count; first += per_pass) {
    const int queries_now = static_cast<int>(std::min(per_pass, count - first));
    const dim3 grid(linalg_cuda::detail::blocks_covering(n, kThreads), static_cast<unsigned>(queries_now));
    pair_keys_kernel<<<grid, kThreads, 0, stream>>>(dev.view, dev.points.as<double>(), static_cast<int>(n),
                                                    dev.queries.as<double>() + first * d, dev.keys.as<double>(),
                                                    dev.indices.as<int>());
    LINALG_CUDA_CHECK_LAUNCH();
    std::size_t bytes = dev.scratch.capacity();
    // Stable: equal keys keep their index order, as the CPU's (key, index) sort ranks them.
    LINALG_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
        dev.scratch.data(), bytes, dev.keys.as<double>(), dev.keys_sorted.as<double>(), dev.indices.as<int>(),
        dev.indices_sorted.as<int>(), static_cast<int>(queries_now * n), queries_now, dev.offsets.as<int>(),
        dev.offsets.as<int>() + 1, 0, 64, stream));
    first_k_kernel<<<linalg_cuda::detail::blocks_covering(std::size_t(queries_now) * k, kThreads), kThreads, 0, stream>>>(
        dev.indices_sorted.as<int>(), static_cast<int>(n), k, queries_now, dev.results.as<int>() + first * k);
    LINALG_CUDA_CHECK_LAUNCH();
  }
  LINALG_CUDA_CHECK(cudaMemcpyAsync(neighbours.data(), dev.results.data(), count * k * sizeof(int),
                                    cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  return k;
}

}  // namespace ompl_cuda::detail
