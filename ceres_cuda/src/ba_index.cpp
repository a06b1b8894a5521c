#include "ba_index.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>

#include "fresh_memory.h"
#include "linalg_cuda/errors.h"
#include "phase_log.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

// v sized n and zero-filled, its memory faulted in on all threads first (fresh_memory.h).
void resize_fresh(std::vector<int>* v, int n) {
  reserve_fresh(v, static_cast<std::size_t>(n));
  v->resize(n);
}

// Sorts a point's residuals (a few, as a rule: insertion sort; std::sort for long runs).
void sort_run(int* begin, int* end) {
  if (end - begin > 32) return std::sort(begin, end);
  for (int* i = begin + 1; i < end; ++i)
    for (int* j = i; j > begin && j[-1] > j[0]; --j) std::swap(j[-1], j[0]);
}

// How far ahead the passes over residuals prefetch the per-point counter they will update (scattered
// over all points: a cache miss each, which the prefetches overlap).
constexpr int kAhead = 16;

// Without an ordering Ceres eliminates the stable independent set of the Hessian graph's variable
// blocks: blocks by degree (their distinct neighbours), ties in program order, each taken unless a
// neighbour was. It takes no camera exactly when every variable camera has a variable point before it
// in that order: the first camera it took would otherwise have no taken point beside it, and without
// a taken camera every point is taken. Returns the cameras with no such point. A camera's search
// mostly ends at its first point (a point has few views, a camera many).
long cameras_before_their_points(const BaIndex& x, const BaLayout& layout, const int* point_degree) {
  long cameras = 0;
#pragma omp parallel for schedule(static) reduction(+ : cameras)
  for (int c = 0; c < x.cameras; ++c) {
    const int begin = x.camera_start[c], end = x.camera_start[c + 1];
    int degree = 0;
    for (int i = begin; i < end; ++i) degree += x.point_of[i] >= 0 && (x.pair_repeat.empty() || x.pair_repeat[i] == 0);
    bool preceded = false;
    for (int i = begin; i < end && !preceded; ++i) {
      const int p = x.point_of[i];
      preceded = p >= 0 && (point_degree[p] < degree ||
                            (point_degree[p] == degree && layout.point_position[p] < layout.camera_position[c]));
    }
    cameras += preceded ? 0 : 1;
  }
  return cameras;
}

}  // namespace

// On all threads: at Final-13682's size there are 29 million residuals and 4.5 million points, and a
// serial pass over arrays that large was seconds.
BaIndex make_index(const BaLayout& layout) {
  const SetUpThreads threads(static_cast<long>(layout.residuals.size()));
  PhaseLog phase("index");
  BaIndex x;
  x.residuals = static_cast<int>(layout.residuals.size());
  x.cameras = layout.variable_cameras;
  x.points = layout.variable_points;
  x.camera_size = layout.camera_size;
  x.residual_size = layout.residual_size;
  std::vector<int>* per_residual[] = {&x.camera_of, &x.point_of, &x.camera_param, &x.point_param};
#pragma omp parallel for schedule(static, 1)  // each zero-fill on a thread of its own
  for (int k = 0; k < 4; ++k) resize_fresh(per_residual[k], x.residuals);
  // Residuals per point, counted with atomic increments (integers: the same whatever the order).
  const std::unique_ptr<std::atomic<int>[]> point_fill = uninitialised_array<std::atomic<int>>(x.points);
  long out_of_camera_order = 0;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int p = 0; p < x.points; ++p) point_fill[p].store(0, std::memory_order_relaxed);
#pragma omp for schedule(static)
    for (int i = 0; i < x.residuals; ++i) {
      const BaResidual& r = layout.residuals[i];
      x.camera_param[i] = r.camera;
      x.point_param[i] = r.point;
      x.camera_of[i] = layout.camera_is_variable(r.camera) ? r.camera : -1;
      x.point_of[i] = layout.point_is_variable(r.point) ? r.point : -1;
      if (i + kAhead < x.residuals) {
        const BaResidual& ahead = layout.residuals[i + kAhead];
        if (layout.point_is_variable(ahead.point)) __builtin_prefetch(&point_fill[ahead.point], 1);
      }
      if (x.point_of[i] >= 0) point_fill[x.point_of[i]].fetch_add(1, std::memory_order_relaxed);
    }
    // The engines rely on the layout's camera-major order: camera c's residuals are exactly
    // [camera_start[c], camera_start[c + 1]), and those of constant cameras (-1) come after them all.
#pragma omp for schedule(static) reduction(+ : out_of_camera_order)
    for (int i = 1; i < x.residuals; ++i) {
      const int before = x.camera_of[i - 1], here = x.camera_of[i];
      out_of_camera_order += here >= 0 && (before < 0 || before > here);
    }
  }
  if (out_of_camera_order > 0) throw linalg_cuda::InvalidArgument("ceres_cuda: residuals are not in camera order");
  phase("camera and point of each residual");

  // Cameras: their runs, found by binary search in the ordered residuals.
  auto camera_key = [&](int i) { return x.camera_of[i] >= 0 ? x.camera_of[i] : INT_MAX; };
  x.camera_start.resize(x.cameras + 1);
#pragma omp parallel for schedule(static)
  for (int c = 0; c <= x.cameras; ++c) {
    int low = 0, high = x.residuals;  // the first residual of a camera >= c
    while (low < high) {
      const int middle = low + (high - low) / 2;
      if (camera_key(middle) < c) low = middle + 1;
      else high = middle;
    }
    x.camera_start[c] = low;
  }
  resize_fresh(&x.camera_residuals, x.camera_start[x.cameras]);
#pragma omp parallel for schedule(static)
  for (int t = 0; t < static_cast<int>(x.camera_residuals.size()); ++t) x.camera_residuals[t] = t;

  phase("residuals by camera");

  // Points: each residual takes the next place of its point's run (atomically), then each run is
  // sorted, which gives the increasing order a serial pass would.
  x.point_start.resize(x.points + 1);
  for (int p = 0; p < x.points; ++p) x.point_start[p + 1] = x.point_start[p] + point_fill[p].load(std::memory_order_relaxed);
  resize_fresh(&x.point_residuals, x.point_start[x.points]);
  // Each point's distinct variable cameras, for the check of Ceres' e-blocks below.
  const bool check_ceres_e_blocks = !layout.point_position.empty();
  const std::unique_ptr<int[]> point_degree = uninitialised_array<int>(check_ceres_e_blocks ? x.points : 0);
  long repeats = 0;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int p = 0; p < x.points; ++p) point_fill[p].store(x.point_start[p], std::memory_order_relaxed);
#pragma omp for schedule(static)
    for (int i = 0; i < x.residuals; ++i) {
      if (i + kAhead < x.residuals && x.point_of[i + kAhead] >= 0) __builtin_prefetch(&point_fill[x.point_of[i + kAhead]], 1);
      if (const int p = x.point_of[i]; p >= 0) x.point_residuals[point_fill[p].fetch_add(1, std::memory_order_relaxed)] = i;
    }
    // Repeated pairs: in a point's run, the residuals of one camera are neighbours (camera-major order).
#pragma omp for schedule(static) reduction(+ : repeats)
    for (int p = 0; p < x.points; ++p) {
      int* run = x.point_residuals.data() + x.point_start[p];
      const int n = x.point_start[p + 1] - x.point_start[p];
      sort_run(run, run + n);
      int same_camera = 0, constant_camera = n > 0 && x.camera_of[run[0]] < 0;
      for (int k = 1; k < n; ++k) {
        same_camera += x.camera_of[run[k]] >= 0 && x.camera_of[run[k]] == x.camera_of[run[k - 1]];
        constant_camera += x.camera_of[run[k]] < 0;
      }
      repeats += same_camera;
      if (check_ceres_e_blocks) point_degree[p] = n - same_camera - constant_camera;
    }
  }
  phase("residuals by point");
  // Residual blocks that repeat a (variable camera, variable point) pair: rare, so found first and
  // recorded in a second pass.
  if (repeats > 0) {
    x.pair_next.assign(x.residuals, -1);
    x.pair_repeat.assign(x.residuals, 0);
#pragma omp parallel for schedule(static)
    for (int p = 0; p < x.points; ++p)
      for (int k = x.point_start[p] + 1; k < x.point_start[p + 1]; ++k) {
        const int previous = x.point_residuals[k - 1], here = x.point_residuals[k];
        if (x.camera_of[here] >= 0 && x.camera_of[here] == x.camera_of[previous]) {
          x.pair_next[previous] = here;
          x.pair_repeat[here] = 1;
        }
      }
  }
  phase("repeated pairs");
  if (check_ceres_e_blocks) {
    x.cameras_ceres_eliminates = cameras_before_their_points(x, layout, point_degree.get());
    phase("Ceres' e-blocks checked");
  }
  return x;
}

}  // namespace ceres_cuda::detail
