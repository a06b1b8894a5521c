#include "gridmap_cuda/grid_mapper.h"

#include <cmath>
#include <string>

#include "linalg_cuda/errors.h"

#include "mapper_backend.h"

namespace gridmap_cuda {

GridMapper::GridMapper(const GridSpec& spec, const SensorModel& model, Backend backend)
    : spec_(spec), model_(model), backend_(linalg_cuda::resolve_backend(backend)) {
  spec_.validate();
  model_.validate();
  impl_ = backend_ == Backend::Cuda ? detail::make_cuda_mapper(spec_, model_) : detail::make_cpu_mapper(spec_, model_);
}

GridMapper::~GridMapper() = default;
GridMapper::GridMapper(GridMapper&&) noexcept = default;
GridMapper& GridMapper::operator=(GridMapper&&) noexcept = default;

void GridMapper::insert_batch(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                              bool reset_first) {
  const detail::InsertResult result = impl_->insert(scans, poses, reset_first);
  if (reset_first) stats_ = {};
  stats_.scans += scans.size();
  stats_.beams += detail::count_beams(scans);
  stats_.used_beams += result.used_beams;
  stats_.cell_updates += result.cell_updates;
}

void GridMapper::insert(const LaserScan& scan) {
  // A one-element batch; the vector copy is one scan's ranges, small next to the transfer.
  insert_batch(std::vector<LaserScan>{scan}, nullptr, false);
}

void GridMapper::insert(const std::vector<LaserScan>& scans) { insert_batch(scans, nullptr, false); }

void GridMapper::rebuild(const std::vector<LaserScan>& scans, const std::vector<Pose2D>& new_poses) {
  // The backend validates everything before it clears the map: a bad input leaves the old map.
  insert_batch(scans, &new_poses, true);
}

void GridMapper::reset() {
  impl_->reset();
  stats_ = {};
}

OccupancyGrid GridMapper::map() const {
  OccupancyGrid grid;
  grid.spec = spec_;
  grid.prior_log_odds = std::log(model_.p_prior / (1.0 - model_.p_prior));
  impl_->read(&grid);
  return grid;
}

}  // namespace gridmap_cuda
