// The CPU reference of the evidence-grid update: CARMEN's per-beam loop over the shared per-cell
// rules (evidence_model.h), one beam after the other.
#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

#include <unistd.h>

#include "linalg_cuda/errors.h"
#include "mapper_backend.h"

namespace gridmap_cuda::detail {
namespace {

class CpuMapper final : public MapperBackend {
 public:
  CpuMapper(const GridSpec& spec, const SensorModel& model) : spec_(spec), model_(model) {
    table_ = build_evidence_table(model, spec.resolution, &table_size_);
    const std::size_t bytes = spec.cells() * (sizeof(std::int64_t) + sizeof(std::uint8_t));
    const std::size_t physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    if (bytes > physical)
      throw linalg_cuda::InvalidArgument("grid of " + std::to_string(spec.width) + " x " + std::to_string(spec.height) +
                                         " cells needs " + std::to_string(bytes >> 20) + " MiB; the machine has " +
                                         std::to_string(physical >> 20) + " MiB");
    try {
      evidence_.assign(spec.cells(), 0);
      known_.assign(spec.cells(), 0);
    } catch (const std::bad_alloc&) {
      throw linalg_cuda::InvalidArgument("grid of " + std::to_string(spec.width) + " x " +
                                         std::to_string(spec.height) + " cells does not fit in host memory (" +
                                         std::to_string(bytes >> 20) + " MiB needed)");
    }
  }

  void reset() override {
    std::fill(evidence_.begin(), evidence_.end(), 0);
    std::fill(known_.begin(), known_.end(), 0);
  }

  InsertResult insert(const std::vector<LaserScan>& scans, const std::vector<Pose2D>* poses,
                      bool reset_first) override {
    const BeamBatch batch = prepare_beams(scans, poses, spec_, model_);
    if (reset_first) reset();
    const EvidenceParams params = make_params(spec_, model_, table_size_, table_.data());
    InsertResult result;
    result.used_beams = batch.used_beams;
    CellBox& box = result.updated;
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const ScanGeometry& scan = batch.scans[s];
      for (int i = 0; i < scan.beams; ++i)
        result.cell_updates += for_each_beam_update(scan, i, scans[s].ranges[i], batch.beam_cos.data(),
                                                    batch.beam_sin.data(), params, 0, 1, [&](const CellUpdate& u) {
                                                      evidence_[u.index] += u.increment;
                                                      known_[u.index] = 1;
                                                      box.x0 = std::min(box.x0, u.x);
                                                      box.y0 = std::min(box.y0, u.y);
                                                      box.x1 = std::max(box.x1, u.x);
                                                      box.y1 = std::max(box.y1, u.y);
                                                    });
    }
    return result;
  }

  void values(const ValueCodec& codec, ValueKind kind, const CellBox& box, bool top_down,
              std::uint8_t* out) const override {
    const int w = box.x1 - box.x0 + 1, h = box.y1 - box.y0 + 1;
    const auto n = static_cast<std::int64_t>(box.cells());
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t cell = box_cell_index(box.x0, box.y0, w, h, top_down, spec_.width, k);
      out[k] = cell_value(kind, evidence_[cell], known_[cell] != 0, codec);
    }
  }

  void read(OccupancyGrid* grid) const override {
    grid->evidence = evidence_;
    grid->known = known_;
  }

 private:
  GridSpec spec_;
  SensorModel model_;
  int table_size_ = 0;
  std::vector<EvidenceEntry> table_;
  std::vector<std::int64_t> evidence_;
  std::vector<std::uint8_t> known_;
};

}  // namespace

std::unique_ptr<MapperBackend> make_cpu_mapper(const GridSpec& spec, const SensorModel& model) {
  return std::make_unique<CpuMapper>(spec, model);
}

}  // namespace gridmap_cuda::detail
