// The CPU references of both sensor models over one map (dense or tiled): CARMEN's per-beam loop
// (evidence_model.h), one beam after the other, and the hit/miss model's two passes per scan
// (hit_miss_rules.h), one scan after the other.
#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include <unistd.h>

#include "linalg_cuda/errors.h"
#include "mapper_backend.h"
#include "tile_index.h"

namespace gridmap_cuda::detail {
namespace {

// The map (fixed-point log-odds and known mask, dense or in tiles) and what both models do with it
// but insert.
class CpuGridBackend : public MapperBackend {
 public:
  void reset() override {
    if (tiles_) {
      tiles_->clear();
      evidence_.clear();
      known_.clear();
      last_key_ = kEmptyTileKey;
      return;
    }
    std::fill(evidence_.begin(), evidence_.end(), 0);
    std::fill(known_.begin(), known_.end(), 0);
  }

  CellBox extent() const override { return tiles_ ? tiles_->box() : CellBox{0, 0, spec_.width - 1, spec_.height - 1}; }
  std::size_t stored_cells() const override { return evidence_.size(); }

  void read(OccupancyGrid* grid) const override {
    if (tiles_) {
      scatter_tile_cells(*tiles_, evidence_.data(), known_.data(), extent(), grid);
      return;
    }
    grid->evidence = evidence_;
    grid->known = known_;
  }

  void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
              std::uint8_t* out) const override {
    if (tiles_) {  // the listed tiles' values, then copied into the box
      const std::vector<int> slots = tiles_->overlapping(box);
      std::vector<std::uint8_t> tile_major(slots.size() * kTileCells);
      for (std::size_t t = 0; t < slots.size(); ++t)
        for (int c = 0; c < kTileCells; ++c) {
          const std::size_t cell = static_cast<std::size_t>(slots[t]) * kTileCells + c;
          tile_major[t * kTileCells + c] = cell_value(kind, evidence_[cell], known_[cell] != 0, codec);
        }
      scatter_tile_bytes(*tiles_, slots, tile_major.data(), box, top_down, cell_value(kind, 0, false, codec), out);
      return;
    }
    const int w = box.x1 - box.x0 + 1, h = box.y1 - box.y0 + 1;
    const auto n = static_cast<std::int64_t>(box.cells());
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t cell = box_cell_index(box.x0, box.y0, w, h, top_down, spec_.width, k);
      out[k] = cell_value(kind, evidence_[cell], known_[cell] != 0, codec);
    }
  }

 protected:
  // A dense map (and `extra_bytes_per_cell` more a cell) checked against the machine's memory first;
  // a tiled one, empty.
  CpuGridBackend(const GridSpec& spec, std::size_t extra_bytes_per_cell) : spec_(spec) {
    if (!spec.bounded()) {
      tiles_ = std::make_unique<TileIndex>();
      return;
    }
    const std::size_t bytes = spec.cells() * (sizeof(std::int64_t) + sizeof(std::uint8_t) + extra_bytes_per_cell);
    const std::size_t physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    const std::string grid = "grid of " + std::to_string(spec.width) + " x " + std::to_string(spec.height) + " cells";
    if (bytes > physical)
      throw linalg_cuda::InvalidArgument(grid + " needs " + std::to_string(bytes >> 20) + " MiB; the machine has " +
                                         std::to_string(physical >> 20) + " MiB");
    try {
      evidence_.assign(spec.cells(), 0);
      known_.assign(spec.cells(), 0);
    } catch (const std::bad_alloc&) {
      throw linalg_cuda::InvalidArgument(grid + " does not fit in host memory (" + std::to_string(bytes >> 20) +
                                         " MiB needed)");
    }
  }

  // Where cell (x, y) lives; a tiled map adds its tile when a beam first reaches it.
  std::int64_t cell(int x, int y) { return tiles_ ? tiled_cell(x, y) : DenseCells{spec_.width}.index(x, y); }

  // The map has grown (tiles added): arrays kept per cell follow evidence_.size().
  virtual void cells_grown() {}

  static void include(CellBox* box, int x, int y) {
    box->x0 = std::min(box->x0, x);
    box->y0 = std::min(box->y0, y);
    box->x1 = std::max(box->x1, x);
    box->y1 = std::max(box->y1, y);
  }

  GridSpec spec_;
  std::vector<std::int64_t> evidence_;
  std::vector<std::uint8_t> known_;

 private:
  std::int64_t tiled_cell(int x, int y) {
    const unsigned long long key = tile_key(tile_coordinate(x), tile_coordinate(y));
    if (key != last_key_) {
      int slot = tiles_->find(key);
      if (slot < 0) {
        slot = tiles_->tiles();
        tiles_->add(key);
        evidence_.resize(evidence_.size() + kTileCells, 0);
        known_.resize(known_.size() + kTileCells, 0);
        cells_grown();
      }
      last_key_ = key;
      last_base_ = static_cast<std::int64_t>(slot) * kTileCells;
    }
    return last_base_ + cell_in_tile(x, y);
  }

  std::unique_ptr<TileIndex> tiles_;  // null for a dense map
  unsigned long long last_key_ = kEmptyTileKey;
  std::int64_t last_base_ = 0;
};

class CpuEvidenceMapper final : public CpuGridBackend {
 public:
  CpuEvidenceMapper(const GridSpec& spec, const SensorModel& model) : CpuGridBackend(spec, 0), model_(model) {
    table_ = build_evidence_table(model, spec.resolution, &table_size_);
  }

  InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                      bool reset_first) override {
    const BeamBatch batch = prepare_beams(scans, poses, spec_, model_.usable_range);
    if (reset_first) reset();
    const EvidenceParams params = make_params(spec_, model_, table_size_, table_.data());
    InsertResult result;
    result.used_beams = batch.used_beams;
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const ScanGeometry& scan = batch.scans[s];
      for (int i = 0; i < scan.beams; ++i)
        result.cell_updates += for_each_beam_update(scan, i, scans[s].ranges[i], batch.beam_cos.data(),
                                                    batch.beam_sin.data(), params, 0, 1, [&](const CellUpdate& u) {
                                                      const std::int64_t index = cell(u.x, u.y);
                                                      evidence_[index] += u.increment;
                                                      known_[index] = 1;
                                                      include(&result.updated, u.x, u.y);
                                                    });
    }
    return result;
  }

 private:
  SensorModel model_;
  int table_size_ = 0;
  std::vector<EvidenceEntry> table_;
};

class CpuHitMissMapper final : public CpuGridBackend {
 public:
  CpuHitMissMapper(const GridSpec& spec, const HitMissModel& model)
      : CpuGridBackend(spec, sizeof(unsigned)), model_(model), params_(make_hit_miss_params(spec, model)) {
    marks_.assign(spec.cells(), 0);
  }

  void cells_grown() override { marks_.resize(evidence_.size(), 0u); }

  InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                      bool reset_first) override {
    const BeamBatch batch = prepare_beams(scans, poses, spec_, model_.max_range);
    if (reset_first) reset();
    InsertResult result;
    result.used_beams = batch.used_beams;
    std::vector<std::int64_t> listed;
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const unsigned stamp = next_stamp(), first_mark = 2 * stamp;
      const ScanGeometry& scan = batch.scans[s];
      listed.clear();
      for (int i = 0; i < scan.beams; ++i)
        result.cell_updates += for_each_hit_miss_cell(
            scan, i, scans[s].ranges[i], batch.beam_cos.data(), batch.beam_sin.data(), params_, 0, 1,
            [&](int x, int y, bool hit) {
              const std::int64_t index = cell(x, y);
              if (marks_[index] < first_mark) listed.push_back(index);
              marks_[index] = std::max(marks_[index], first_mark + (hit ? 1u : 0u));
              include(&result.updated, x, y);
            });
      for (const std::int64_t index : listed) {
        evidence_[index] = hit_miss_update(evidence_[index], marks_[index], params_);
        known_[index] = 1;
      }
    }
    return result;
  }

 private:
  // The next scan's stamp; past the marks' range the marks are cleared and the stamps restart.
  unsigned next_stamp() {
    if (stamp_ == kMaxHitMissStamp) {
      std::fill(marks_.begin(), marks_.end(), 0u);
      stamp_ = 0;
    }
    return ++stamp_;
  }

  HitMissModel model_;
  HitMissParams params_;
  std::vector<unsigned> marks_;
  unsigned stamp_ = 0;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const SensorModel& model) {
  return std::make_unique<CpuEvidenceMapper>(spec, model);
}

std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const HitMissModel& model) {
  return std::make_unique<CpuHitMissMapper>(spec, model);
}

}  // namespace gridmap_cuda::detail
