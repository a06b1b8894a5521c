#pragma once
// Host-side preparation shared by both backends: per-scan geometry, the beam-angle tables and the
// sensor-model table, computed once on the CPU so that the CPU and GPU update loops read the very
// same numbers (see evidence_model.h).
#include <cstdint>
#include <vector>

#include "evidence_model.h"
#include "hit_miss_rules.h"
#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/hit_miss_model.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/sensor_model.h"

namespace gridmap_cuda::detail {

// Beyond these the integer cell arithmetic could overflow; inputs that would need them are rejected.
constexpr std::size_t kMaxBeamsPerInsert = (std::size_t(1) << 31) - (std::size_t(1) << 20);
constexpr double kMaxCellsFromLaser = 536870912.0;  // 2^29: |laser cell| and a beam's reach in cells

struct BeamBatch {
  std::vector<ScanGeometry> scans;
  std::vector<double> beam_cos, beam_sin;  // direction tables, one per distinct scan geometry
  int total_beams = 0;
  std::uint64_t used_beams = 0;  // beams below the usable range
};

// Geometry of `scans` on `spec`, with the laser poses replaced by `poses` when given (rebuild after a
// loop closure). Validates the input: throws linalg_cuda::InvalidArgument naming the scan (and beam)
// for a non-finite pose or geometry, or a NaN, infinite or negative range; and when poses has a
// different length than scans. When ranges_out is given, every scan's ranges are copied there in
// order (total_beams floats) in the same pass that checks them.
// Readings at or beyond usable_range are not counted as used.
BeamBatch prepare_beams(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses, const GridSpec& spec,
                        double usable_range, float* ranges_out = nullptr);

// The cells a map of this spec holds: its grid, or for an unbounded spec every cell a beam can reach.
CellBounds map_bounds(const GridSpec& spec);

// Readings in all scans: the size ranges_out must have.
std::size_t count_beams(const std::vector<LaserScan>& scans);

// The sensor model tabulated per squared cell distance (EvidenceEntry), and the table size
// (int)(range_max / resolution) that bounds |dx| and |dy|.
std::vector<EvidenceEntry> build_evidence_table(const SensorModel& model, double resolution, int* table_size);

EvidenceParams make_params(const GridSpec& spec, const SensorModel& model, int table_size,
                           const EvidenceEntry* entries);

// The hit/miss model's fixed-point increments and clamp on this grid; validates the model.
HitMissParams make_hit_miss_params(const GridSpec& spec, const HitMissModel& model);

}  // namespace gridmap_cuda::detail
