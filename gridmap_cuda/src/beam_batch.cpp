#include "beam_batch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "gridmap_cuda/occupancy_grid.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda::detail {
namespace {

double logit(double p) { return std::log(p / (1.0 - p)); }

int32_t to_fixed(double log_odds) { return static_cast<int32_t>(std::llround(log_odds * kEvidenceScale)); }

void require_finite(double v, std::size_t scan, const char* what) {
  if (!std::isfinite(v))
    throw linalg_cuda::InvalidArgument("scan " + std::to_string(scan) + ": " + what + " is not finite");
}

}  // namespace

std::vector<EvidenceEntry> build_evidence_table(const SensorModel& model, double resolution, int* table_size) {
  model.validate();
  // The table has 2 (range_max / resolution)^2 entries: beyond 4096 cells of range that is gigabytes.
  if (!(model.range_max / resolution <= 4096.0))
    throw linalg_cuda::InvalidArgument("SensorModel: range_max / resolution = " +
                                       linalg_cuda::detail::readable(model.range_max / resolution) +
                                       " cells; at most 4096 are supported (coarser cells or a shorter range_max)");
  if (!((model.usable_range + model.wall_thickness) / resolution < kMaxCellsFromLaser))
    throw linalg_cuda::InvalidArgument("SensorModel: usable_range + wall_thickness spans more than 2^29 cells");
  *table_size = static_cast<int>(model.range_max / resolution);
  const int t = *table_size;
  if (t <= 0) return {};
  const std::size_t entries = 2 * static_cast<std::size_t>(t - 1) * (t - 1) + 1;
  std::vector<EvidenceEntry> table(entries);
  const double prior = logit(model.p_prior);
  for (std::size_t k = 0; k < entries; ++k) {
    // CARMEN's distance table: sqrt(x*x + y*y) * resolution for integer cell offsets.
    const double d = std::sqrt(static_cast<double>(k)) * resolution;
    EvidenceEntry& e = table[k];
    e.distance = d;
    if (d >= model.range_max) {
      e.free_increment = e.occupied_increment = kStop;
      continue;
    }
    auto evidence = [&](double p_f) {
      const double p = d < model.range_sure ? p_f : p_f + (d - model.range_sure) / model.range_max * (model.p_prior - p_f);
      return to_fixed(logit(p) - prior);
    };
    e.free_increment = evidence(model.p_emp);
    e.occupied_increment = evidence(model.p_occ);
  }
  return table;
}

EvidenceParams make_params(const GridSpec& spec, const SensorModel& model, int table_size,
                           const EvidenceEntry* entries) {
  EvidenceParams p;
  p.resolution = spec.resolution;
  p.wall_thickness = model.wall_thickness;
  p.usable_range = model.usable_range;
  p.table_size = table_size;
  p.bounds = map_bounds(spec);
  p.entries = entries;
  return p;
}

CellBounds map_bounds(const GridSpec& spec) {
  if (!spec.bounded()) return {-kTiledCellBound, -kTiledCellBound, kTiledCellBound, kTiledCellBound};
  return {0, 0, spec.width - 1, spec.height - 1};
}

std::size_t count_beams(const std::vector<LaserScan>& scans) {
  std::size_t total = 0;
  for (const LaserScan& scan : scans) total += scan.ranges.size();
  return total;
}

BeamBatch prepare_beams(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses, const GridSpec& spec,
                        double usable_range, float* ranges_out) {
  if (poses && poses->size() != scans.size())
    throw linalg_cuda::InvalidArgument("rebuild: " + std::to_string(poses->size()) + " poses for " +
                                       std::to_string(scans.size()) + " scans");
  BeamBatch batch;
  batch.scans.reserve(scans.size());
  std::map<std::tuple<double, double, std::size_t>, int> tables;  // (start, step, beams) -> offset
  std::int64_t total = 0;
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const LaserScan& scan = scans[s];
    const Pose2D& pose = poses ? (*poses)[s] : scan.laser_pose;
    require_finite(pose.x, s, "laser x");
    require_finite(pose.y, s, "laser y");
    require_finite(pose.theta, s, "laser theta");
    require_finite(scan.start_angle, s, "start angle");
    require_finite(scan.angular_resolution, s, "angular resolution");
    const auto key = std::make_tuple(scan.start_angle, scan.angular_resolution, scan.ranges.size());
    auto [it, inserted] = tables.emplace(key, static_cast<int>(batch.beam_cos.size()));
    if (inserted) {
      for (std::size_t i = 0; i < scan.ranges.size(); ++i) {
        const double angle = scan.start_angle + static_cast<double>(i) * scan.angular_resolution;
        if (!std::isfinite(angle) || std::fabs(angle) > 1e6)
          throw linalg_cuda::InvalidArgument("scan " + std::to_string(s) + ": beam " + std::to_string(i) +
                                             " has an absurd angle (start_angle + i * angular_resolution)");
        batch.beam_cos.push_back(std::cos(angle));
        batch.beam_sin.push_back(std::sin(angle));
      }
    }
    ScanGeometry g;
    g.laser_x = (pose.x - spec.origin_x) / spec.resolution;
    g.laser_y = (pose.y - spec.origin_y) / spec.resolution;
    if (!(std::fabs(g.laser_x) < kMaxCellsFromLaser && std::fabs(g.laser_y) < kMaxCellsFromLaser))
      throw linalg_cuda::InvalidArgument("scan " + std::to_string(s) + ": laser pose is absurdly far from the grid");
    g.cos_theta = std::cos(pose.theta);
    g.sin_theta = std::sin(pose.theta);
    g.laser_cell_x = static_cast<int>(std::floor(g.laser_x));
    g.laser_cell_y = static_cast<int>(std::floor(g.laser_y));
    g.first_beam = static_cast<int>(total);
    g.beams = static_cast<int>(scan.ranges.size());
    g.direction_table = it->second;
    batch.scans.push_back(g);
    total += static_cast<std::int64_t>(scan.ranges.size());
    if (static_cast<std::size_t>(total) > kMaxBeamsPerInsert)
      throw linalg_cuda::InvalidArgument("more than " + std::to_string(kMaxBeamsPerInsert) +
                                         " beams in one insert; insert the scans in parts");
  }
  batch.total_beams = static_cast<int>(total);

  // The readings: one branch-free pass per scan (it vectorises) that counts the usable beams, copies
  // them when asked, and notes whether any is bad. The copy for the GPU is spread over the cores;
  // the CPU reference stays on one thread. The error names the first bad reading of the first bad scan.
  const long count = static_cast<long>(scans.size());
  long first_bad_scan = count;
  std::uint64_t used_total = 0;
#pragma omp parallel for schedule(static) reduction(+ : used_total) reduction(min : first_bad_scan) if (ranges_out != nullptr && batch.total_beams > (1 << 16))
  for (long s = 0; s < count; ++s) {
    const float* ranges = scans[s].ranges.data();
    const std::size_t n = scans[s].ranges.size();
    std::uint64_t used = 0;
    bool bad = false;
    for (std::size_t i = 0; i < n; ++i) {
      const float r = ranges[i];
      bad |= !(r >= 0.0f && r <= std::numeric_limits<float>::max());
      used += static_cast<double>(r) < usable_range;  // as beam_is_used and hit_miss_line decide
    }
    if (ranges_out) std::copy_n(ranges, n, ranges_out + batch.scans[s].first_beam);
    used_total += used;
    if (bad) first_bad_scan = std::min(first_bad_scan, s);
  }
  if (first_bad_scan < count) {
    const std::vector<float>& ranges = scans[first_bad_scan].ranges;
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (!(ranges[i] >= 0.0f && ranges[i] <= std::numeric_limits<float>::max()))
        throw linalg_cuda::InvalidArgument("scan " + std::to_string(first_bad_scan) + ", beam " + std::to_string(i) +
                                           ": range " + linalg_cuda::detail::readable(ranges[i]) +
                                           " is not a finite non-negative distance");
  }
  batch.used_beams = used_total;
  return batch;
}

}  // namespace gridmap_cuda::detail
