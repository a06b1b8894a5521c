#include "gridmap_cuda/grid_mapper.h"

#include <cmath>
#include <string>

#include <unistd.h>

#include "linalg_cuda/errors.h"

#include "mapper_backend.h"

namespace gridmap_cuda {

GridMapper::GridMapper(const GridSpec& spec, const SensorModel& model, Backend backend)
    : spec_(spec), model_(model), backend_(linalg_cuda::resolve_backend(backend)) {
  spec_.validate();
  model_.validate();
  impl_ = backend_ == Backend::Cuda ? detail::make_cuda_mapper(spec_, model_) : detail::make_cpu_mapper(spec_, model_);
  percent_codec_ = std::make_unique<const detail::ValueCodec>(detail::make_value_codec(prior_log_odds()));
}

GridMapper::GridMapper(const GridSpec& spec, const HitMissModel& model, Backend backend, HitMissChoice)
    : spec_(spec), hit_miss_(model), backend_(linalg_cuda::resolve_backend(backend)) {
  spec_.validate();
  model.validate();
  impl_ = backend_ == Backend::Cuda ? detail::make_cuda_mapper(spec_, model) : detail::make_cpu_mapper(spec_, model);
  percent_codec_ = std::make_unique<const detail::ValueCodec>(detail::make_value_codec(prior_log_odds()));
}

GridMapper::~GridMapper() = default;
GridMapper::GridMapper(GridMapper&&) noexcept = default;
GridMapper& GridMapper::operator=(GridMapper&&) noexcept = default;

std::array<int, 4> GridMapper::insert_batch(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                                            bool reset_first) {
  const detail::InsertResult result = impl_->insert(scans, poses, reset_first);
  if (reset_first) stats_ = {};
  stats_.scans += scans.size();
  stats_.beams += detail::count_beams(scans);
  stats_.used_beams += result.used_beams;
  stats_.cell_updates += result.cell_updates;
  return {result.updated.x0, result.updated.y0, result.updated.x1, result.updated.y1};
}

void GridMapper::insert(const LaserScan& scan) {
  // A one-element batch; the vector copy is one scan's ranges, small next to the transfer.
  insert_batch(std::vector<LaserScan>{scan}, nullptr, false);
}

MapUpdate GridMapper::insert_with_update(const LaserScan& scan) {
  const detail::CellBox before = impl_->extent();
  const std::array<int, 4> b = insert_batch(std::vector<LaserScan>{scan}, nullptr, false);
  const detail::CellBox box{b[0], b[1], b[2], b[3]}, extent = impl_->extent();
  MapUpdate update;
  update.extent_grew = extent.x0 != before.x0 || extent.y0 != before.y0 || extent.x1 != before.x1 ||
                       extent.y1 != before.y1;
  if (box.empty()) return update;
  update.x = box.x0 - extent.x0;
  update.y = box.y0 - extent.y0;
  update.width = box.x1 - box.x0 + 1;
  update.height = box.y1 - box.y0 + 1;
  update.data.resize(box.cells());
  impl_->values(*percent_codec_, detail::ValueKind::OccupancyPercent, box, false,
                reinterpret_cast<std::uint8_t*>(update.data.data()));
  return update;
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

double GridMapper::prior_log_odds() const {
  return hit_miss_ ? 0.0 : std::log(model_.p_prior / (1.0 - model_.p_prior));  // the hit/miss model's prior is 0.5
}

GridSpec GridMapper::extent() const {
  if (spec_.bounded()) return spec_;
  const detail::CellBox box = impl_->extent();
  GridSpec extent = spec_;
  if (box.empty()) return extent;
  extent.origin_x = spec_.origin_x + box.x0 * spec_.resolution;
  extent.origin_y = spec_.origin_y + box.y0 * spec_.resolution;
  extent.width = box.x1 - box.x0 + 1;
  extent.height = box.y1 - box.y0 + 1;
  return extent;
}

std::size_t GridMapper::stored_cells() const { return impl_->stored_cells(); }

namespace {

// The extent's box, after checking that `bytes_per_cell` a cell of it fit in the host's memory.
detail::CellBox readable_extent(const detail::MapperBackend& impl, std::size_t bytes_per_cell, const char* what) {
  const detail::CellBox box = impl.extent();
  const std::size_t physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (!box.empty() && box.cells() > physical / bytes_per_cell)
    throw linalg_cuda::InvalidArgument(std::string(what) + ": the map spans " + std::to_string(box.x1 - box.x0 + 1) +
                                       " x " + std::to_string(box.y1 - box.y0 + 1) + " cells, " +
                                       std::to_string(box.cells() * bytes_per_cell >> 20) +
                                       " MiB on the host; the machine has " + std::to_string(physical >> 20) +
                                       " MiB");
  return box;
}

}  // namespace

OccupancyGrid GridMapper::map() const {
  readable_extent(*impl_, sizeof(std::int64_t) + 1, "GridMapper::map");
  OccupancyGrid grid;
  grid.spec = extent();
  grid.prior_log_odds = prior_log_odds();
  impl_->read(&grid);
  return grid;
}

OccupancyValues GridMapper::occupancy_values() const {
  OccupancyValues values;
  occupancy_values(&values);
  return values;
}

void GridMapper::occupancy_values(OccupancyValues* values) const {
  const detail::CellBox box = readable_extent(*impl_, 1, "GridMapper::occupancy_values");
  values->spec = extent();
  values->data.resize(box.cells());
  impl_->values(*percent_codec_, detail::ValueKind::OccupancyPercent, box, false,
                reinterpret_cast<std::uint8_t*>(values->data.data()));
}

std::vector<std::uint8_t> GridMapper::ros_image(const RosMapOptions& options) const {
  const detail::ValueCodec codec = detail::make_value_codec(prior_log_odds(), options);
  const detail::CellBox box = readable_extent(*impl_, 1, "GridMapper::ros_image");
  std::vector<std::uint8_t> image(box.cells());
  impl_->values(codec, detail::ValueKind::RosTrinary, box, true, image.data());
  return image;
}

}  // namespace gridmap_cuda
