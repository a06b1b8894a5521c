// ResidualEvaluation on CPU threads (residual_evaluation.h): ThreadedEvaluator into page-locked arrays,
// copied to the device's residual vector and Jacobian in one copy each.
#include <algorithm>

#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/device_buffer.h"
#include "residual_evaluation.h"

namespace ceres_cuda::detail {
namespace {

class HostResidualEvaluation final : public ResidualEvaluation {
 public:
  HostResidualEvaluation(ThreadedEvaluator* evaluator, cudaStream_t stream) : evaluator_(*evaluator), stream_(stream) {
    host_jacobian_.reserve(std::max<long>(1, evaluator_.num_jacobian_values()) * sizeof(double));
    host_f_.reserve(std::max<long>(1, evaluator_.num_f()) * sizeof(double));
  }

  int first() const override { return evaluator_.first(); }
  int num_residuals() const override { return evaluator_.last() - evaluator_.first(); }

  void start(const EvaluationPoint& at, double* f, double* jacobian) override {
    cost_ = 0.0;
    ok_ = true;
    copied_ = false;
    if (num_residuals() == 0) return;
    double* host_jacobian = jacobian != nullptr ? host_jacobian_.as<double>() : nullptr;
    ok_ = evaluator_.evaluate(at.host_state, host_f_.as<double>(), host_jacobian, &cost_);
    if (ok_ && jacobian != nullptr) {
      copy_to_device(jacobian + evaluator_.jacobian_offset(), host_jacobian, evaluator_.num_jacobian_values());
      copy_to_device(f + evaluator_.f_offset(), host_f_.as<double>(), evaluator_.num_f());
      copied_ = true;
    }
  }

  // Waits for the copies too, so that the next start() may refill the page-locked arrays.
  bool finish(double* cost) override {
    if (copied_) LINALG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    *cost = cost_;
    return ok_;
  }

 private:
  void copy_to_device(double* device, const double* host, long n) {
    if (n > 0) LINALG_CUDA_CHECK(cudaMemcpyAsync(device, host, n * sizeof(double), cudaMemcpyHostToDevice, stream_));
  }

  ThreadedEvaluator& evaluator_;
  cudaStream_t stream_;
  linalg_cuda::PinnedBuffer host_jacobian_, host_f_;
  double cost_ = 0.0;
  bool ok_ = true, copied_ = false;
};

}  // namespace

std::unique_ptr<ResidualEvaluation> make_host_residual_evaluation(ThreadedEvaluator* evaluator, cudaStream_t stream) {
  return std::make_unique<HostResidualEvaluation>(evaluator, stream);
}

}  // namespace ceres_cuda::detail
