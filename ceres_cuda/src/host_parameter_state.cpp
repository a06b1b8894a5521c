// ParameterState on the host (parameter_state.h): BlockState's x and candidate moved by the manifold
// objects, copied to the device for each evaluation through page-locked memory, with the step and the
// gradient brought back.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "device_state.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_stream.h"
#include "linalg_cuda/device_buffer.h"
#include "linalg_cuda/device_vector.h"
#include "parameter_state.h"

namespace ceres_cuda::detail {
namespace {

class HostParameterState final : public ParameterState {
 public:
  HostParameterState(const SchurStructure& structure, BlockState* host, ThreadedEvaluator* evaluator,
                     cudaStream_t stream)
      : host_(*host), evaluator_(*evaluator), stream_(stream), n_(structure.tangent_size()),
        state_size_(structure.state_size) {
    device_state_ = linalg_cuda::DeviceVector<double>(std::max<long>(1, state_size_));
    host_state_.reserve(std::max<long>(1, state_size_) * sizeof(double));
    host_delta_.reserve(std::max<long>(1, n_) * sizeof(double));
    host_gradient_.reserve(std::max<long>(1, n_) * sizeof(double));
  }

  bool at_x(EvaluationPoint* point) override {
    if (!evaluator_.update_plus_jacobians(host_.x())) return false;
    point->device_state = upload_state(host_.x());
    point->host_state = host_.x();
    const std::vector<double>& p = evaluator_.plus_jacobians();
    if (!p.empty()) {
      if (device_plus_jacobians_.size() < p.size()) device_plus_jacobians_ = linalg_cuda::DeviceVector<double>(p.size());
      LINALG_CUDA_CHECK(cudaMemcpyAsync(device_plus_jacobians_.data(), p.data(), p.size() * sizeof(double),
                                        cudaMemcpyHostToDevice, stream_));
    }
    point->plus_jacobians = p.empty() ? nullptr : device_plus_jacobians_.data();
    return true;
  }
  EvaluationPoint at_candidate() override { return {upload_state(host_.candidate()), host_.candidate(), nullptr}; }

  bool take_step(const double* delta) override {
    double* host = host_delta_.as<double>();
    download(host, delta, n_);
    bool finite = true;
    for (long i = 0; i < n_; ++i) finite = finite && std::isfinite(host[i]);
    return finite;
  }
  bool move_candidate() override { return host_.move_candidate(host_delta_.as<double>()); }

  bool gradient_norms(const double* gradient, double* norm, double* max_norm) override {
    download(host_gradient_.as<double>(), gradient, n_);
    return host_.projected_gradient_norms(host_gradient_.as<double>(), norm, max_norm);
  }
  double x_norm() override { return host_.x_norm(); }
  double step_norm() override { return host_.step_norm(); }
  void accept_candidate() override { host_.accept_candidate(); }
  void write_to_user() override { host_.write_to_user(); }
  bool on_device() const override { return false; }

 private:
  // Through host_state_, once the previous upload has left it (a candidate's upload may still run when
  // the next x is uploaded: nothing waits for the stream when only CPU threads evaluate).
  const double* upload_state(const double* values) {
    LINALG_CUDA_CHECK(cudaEventSynchronize(state_uploaded_.get()));
    std::memcpy(host_state_.data(), values, state_size_ * sizeof(double));
    LINALG_CUDA_CHECK(cudaMemcpyAsync(device_state_.data(), host_state_.data(), state_size_ * sizeof(double),
                                      cudaMemcpyHostToDevice, stream_));
    LINALG_CUDA_CHECK(cudaEventRecord(state_uploaded_.get(), stream_));
    return device_state_.data();
  }
  void download(double* host, const double* device, long n) {
    if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(host, device, n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  BlockState& host_;
  ThreadedEvaluator& evaluator_;
  cudaStream_t stream_;
  long n_ = 0, state_size_ = 0;
  linalg_cuda::DeviceVector<double> device_state_, device_plus_jacobians_;
  // The state's copy, the step and the gradient in page-locked memory: their copies wait for nothing
  // queued before them.
  linalg_cuda::PinnedBuffer host_state_, host_delta_, host_gradient_;
  linalg_cuda::CudaEvent state_uploaded_;
};

}  // namespace

std::unique_ptr<ParameterState> make_parameter_state(const SchurStructure& structure, BlockState* host,
                                                     ThreadedEvaluator* evaluator, bool on_device_possible,
                                                     cudaStream_t stream) {
  if (on_device_possible) {
    if (std::unique_ptr<DeviceState> device =
            DeviceState::make(structure, host, evaluator->plus_jacobian_offsets(), stream))
      return device;
  }
  return std::make_unique<HostParameterState>(structure, host, evaluator, stream);
}

}  // namespace ceres_cuda::detail
