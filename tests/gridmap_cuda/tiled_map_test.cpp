// Tiled maps (GridSpec::unbounded) against dense maps cell for cell, CPU against GPU bit for bit, for
// both sensor models, whole logs and scan by scan; what they store and report; far scans and a device
// without room for the tiles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gridmap_cuda/carmen_log.h"
#include "gridmap_cuda/grid_mapper.h"
#include "gridmap_cuda/synthetic_log.h"
#include "linalg_cuda/errors.h"
#include "test_support.h"
#include "../../gridmap_cuda/src/beam_batch.h"
#include "../../gridmap_cuda/src/cell_layout.h"

namespace gridmap_cuda {
namespace {

namespace fs = std::filesystem;

enum class Model { Carmen, HitMiss };

struct Case {
  Backend backend;
  Model model;
};

GridMapper make_mapper(const GridSpec& spec, const Case& c) {
  if (c.model == Model::HitMiss) return GridMapper(spec, HitMissModel{}, c.backend);
  return GridMapper(spec, SensorModel{}, c.backend);
}

GridSpec fitted(const std::vector<LaserScan>& scans, double resolution, Model model) {
  return model == Model::HitMiss ? fit_grid(scans, resolution, HitMissModel{}) : fit_grid(scans, resolution);
}

std::vector<LaserScan> synthetic(int scans, unsigned seed, int rooms_x = 4, int rooms_y = 3) {
  SyntheticLogOptions options;
  options.scans = scans;
  options.seed = seed;
  options.rooms_x = rooms_x;
  options.rooms_y = rooms_y;
  return make_synthetic_log(options).scans;
}

// Where the extent `part` starts in the cells of `whole` (same resolution, origins a whole number of
// cells apart).
void offset_of(const GridSpec& part, const GridSpec& whole, long long* dx, long long* dy) {
  *dx = std::llround((part.origin_x - whole.origin_x) / whole.resolution);
  *dy = std::llround((part.origin_y - whole.origin_y) / whole.resolution);
}

// The tiled map holds exactly the dense map's cells: equal evidence and known flags wherever the
// dense grid lies, and no known cell beyond it.
void expect_same_cells(const OccupancyGrid& dense, const OccupancyGrid& tiled, const std::string& what) {
  ASSERT_EQ(dense.known_cells(), tiled.known_cells()) << what;
  long long dx, dy;
  offset_of(tiled.spec, dense.spec, &dx, &dy);
  std::size_t differing = 0;
  for (int y = 0; y < dense.spec.height; ++y)
    for (int x = 0; x < dense.spec.width; ++x) {
      const std::size_t d = dense.index(x, y);
      const long long tx = x - dx, ty = y - dy;
      const bool inside = tx >= 0 && ty >= 0 && tx < tiled.spec.width && ty < tiled.spec.height;
      if (!inside) {
        differing += dense.known[d] != 0;
        continue;
      }
      const std::size_t t = tiled.index(static_cast<int>(tx), static_cast<int>(ty));
      differing += dense.evidence[d] != tiled.evidence[t] || dense.known[d] != tiled.known[t];
    }
  EXPECT_EQ(differing, 0u) << what;
}

void expect_identical(const OccupancyGrid& a, const OccupancyGrid& b, const std::string& what) {
  EXPECT_EQ(a.spec.width, b.spec.width) << what;
  EXPECT_EQ(a.spec.height, b.spec.height) << what;
  EXPECT_EQ(a.spec.origin_x, b.spec.origin_x) << what;
  EXPECT_EQ(a.spec.origin_y, b.spec.origin_y) << what;
  EXPECT_TRUE(a.evidence == b.evidence) << what << ": evidence differs";
  EXPECT_TRUE(a.known == b.known) << what << ": known flags differ";
}

// Only tiles a beam reached are stored: every 64 x 64 block of the extent with a known cell is a
// tile, and there are no others.
void expect_only_seen_tiles(const GridMapper& mapper, const OccupancyGrid& map, const std::string& what) {
  const GridSpec& e = map.spec;
  ASSERT_EQ(e.width % 64, 0) << what;
  ASSERT_EQ(e.height % 64, 0) << what;
  std::size_t seen = 0;
  for (int by = 0; by < e.height; by += 64)
    for (int bx = 0; bx < e.width; bx += 64) {
      bool known = false;
      for (int y = by; y < by + 64 && !known; ++y)
        for (int x = bx; x < bx + 64 && !known; ++x) known = map.known[map.index(x, y)] != 0;
      seen += known;
    }
  EXPECT_EQ(mapper.stored_cells(), seen * 4096) << what;
}

// A cell's tile and place in it give the cell back, on both sides of 0 and far from it.
TEST(TileLayout, TileAndPlaceGiveTheCellBack) {
  for (const int base : {0, 64, -64, 1 << 20, -(1 << 20), detail::kTiledCellBound - 200, -detail::kTiledCellBound})
    for (int d = -130; d <= 130; ++d) {
      const int c = base + d;
      const int place = detail::cell_in_tile(c, c);
      ASSERT_EQ(detail::tile_coordinate(c) * detail::kTileSide + (place & (detail::kTileSide - 1)), c);
      ASSERT_EQ(detail::tile_coordinate(c) * detail::kTileSide + (place >> detail::kTileBits), c);
      const unsigned long long key = detail::tile_key(detail::tile_coordinate(c), -detail::tile_coordinate(c));
      ASSERT_EQ(detail::tile_key_x(key), detail::tile_coordinate(c));
      ASSERT_EQ(detail::tile_key_y(key), -detail::tile_coordinate(c));
      ASSERT_NE(key, detail::kEmptyTileKey);
    }
}

using TileSet = std::set<std::pair<int, int>>;

TileSet tiles_of_line(const detail::BresenhamLine& line, int count) {
  TileSet tiles;
  detail::for_each_tile_of_line(line, count, [&](int tx, int ty) { tiles.insert({tx, ty}); });
  return tiles;
}

// The tile walk that the GPU's request pass uses gives exactly the tiles of the line's cells, on
// random lines of every direction and length, around 0 and far from it.
TEST(TileWalk, GivesTheTilesOfEveryCellOfTheLine) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> offset(-700, 700), start(-200, 200);
  for (int trial = 0; trial < 3000; ++trial) {
    const int base = trial % 3 == 0 ? 0 : (trial % 3 == 1 ? 12345678 : -98765432);
    const int x1 = base + start(rng), y1 = -base + start(rng);
    const detail::BresenhamLine line(x1, y1, x1 + offset(rng), y1 + offset(rng));
    const int count = std::uniform_int_distribution<int>(0, line.steps())(rng);
    TileSet expected;
    for (int j = 0; j < count; ++j) {
      int x, y;
      line.cell(j, &x, &y);
      expected.insert({detail::tile_coordinate(x), detail::tile_coordinate(y)});
    }
    ASSERT_EQ(tiles_of_line(line, count), expected) << "trial " << trial;
  }
}

// Each model's line prefix names exactly the cells its update visits on a tiled map, so the request
// pass asks for every tile the update touches and no other.
TEST(TileWalk, CoversWhatEachModelUpdates) {
  std::vector<LaserScan> scans = synthetic(40, 23);
  for (std::size_t s = 0; s < scans.size(); ++s) {  // long and short beams, some no-return
    scans[s].laser_pose.x += 1e5 * static_cast<double>(s % 3);
    for (std::size_t i = 0; i < scans[s].ranges.size(); i += 7) scans[s].ranges[i] *= 1.0f + 0.5f * (i % 3);
  }
  const GridSpec spec = GridSpec::unbounded(0.025, -1.0, 3.0);
  const detail::BeamBatch batch = detail::prepare_beams(scans, nullptr, spec, 1e300);
  int table_size = 0;
  const SensorModel carmen;
  const std::vector<detail::EvidenceEntry> table = detail::build_evidence_table(carmen, spec.resolution, &table_size);
  const detail::EvidenceParams evidence = detail::make_params(spec, carmen, table_size, table.data());
  const detail::HitMissParams hit_miss = detail::make_hit_miss_params(spec, HitMissModel{});
  std::size_t beams = 0;
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const detail::ScanGeometry& scan = batch.scans[s];
    for (int i = 0; i < scan.beams; ++i, ++beams) {
      const float range = scans[s].ranges[i];
      TileSet visited;
      detail::for_each_beam_update(scan, i, range, batch.beam_cos.data(), batch.beam_sin.data(), evidence, 0, 1,
                                   [&](const detail::CellUpdate& u) {
                                     visited.insert({detail::tile_coordinate(u.x), detail::tile_coordinate(u.y)});
                                   });
      detail::BresenhamLine line(0, 0, 0, 0);
      int count = detail::beam_update_prefix(scan, i, range, batch.beam_cos.data(), batch.beam_sin.data(), evidence,
                                             &line);
      ASSERT_EQ(tiles_of_line(line, count), visited) << "CARMEN, scan " << s << ", beam " << i;
      visited.clear();
      detail::for_each_hit_miss_cell(scan, i, range, batch.beam_cos.data(), batch.beam_sin.data(), hit_miss, 0, 1,
                                     [&](int x, int y, bool) {
                                       visited.insert({detail::tile_coordinate(x), detail::tile_coordinate(y)});
                                     });
      count = detail::hit_miss_prefix(scan, i, range, batch.beam_cos.data(), batch.beam_sin.data(), hit_miss, &line);
      ASSERT_EQ(tiles_of_line(line, count), visited) << "hit/miss, scan " << s << ", beam " << i;
    }
  }
  EXPECT_GT(beams, 10000u);
}

class TiledMap : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().backend == Backend::Cuda) REQUIRE_CUDA_DEVICE();
  }

  // Dense and tiled maps of `scans`, whole log, against each other.
  void expect_tiled_equals_dense(const std::vector<LaserScan>& scans, double resolution, const std::string& what) {
    const GridSpec spec = fitted(scans, resolution, GetParam().model);
    GridMapper dense = make_mapper(spec, GetParam());
    dense.insert(scans);
    GridMapper tiled = make_mapper(GridSpec::unbounded(resolution, spec.origin_x, spec.origin_y), GetParam());
    tiled.insert(scans);
    const OccupancyGrid tiled_map = tiled.map();
    expect_same_cells(dense.map(), tiled_map, what);
    expect_only_seen_tiles(tiled, tiled_map, what);
    // The 8-bit maps, made tile by tile where the map is, against the host's conversion of map().
    EXPECT_TRUE(tiled.occupancy_values().data == tiled_map.occupancy_values().data) << what;
    const std::vector<std::uint8_t> image = tiled.ros_image();
    const int w = tiled_map.spec.width, h = tiled_map.spec.height;
    ASSERT_EQ(image.size(), tiled_map.spec.cells()) << what;
    std::size_t differing = 0;
    for (int r = 0; r < h; ++r)
      for (int x = 0; x < w; ++x) {
        const std::size_t cell = tiled_map.index(x, h - 1 - r);
        const double p = tiled_map.known[cell] ? tiled_map.probability(cell) : 0.5;
        const std::uint8_t host = !tiled_map.known[cell] ? 205 : (p > 0.65 ? 0 : (p < 0.196 ? 254 : 205));
        differing += image[std::size_t(r) * w + x] != host;
      }
    EXPECT_EQ(differing, 0u) << what << ": map_server image";
    EXPECT_EQ(tiled.stats().cell_updates, dense.stats().cell_updates) << what;
  }
};

TEST_P(TiledMap, EqualsTheDenseMapOnSyntheticLogs) {
  expect_tiled_equals_dense(synthetic(150, 3), 0.05, "small plan at 0.05 m");
  // 12 x 8 rooms of 6 m at 0.0125 m: about 5,000 tiles, past the first table's rehash.
  expect_tiled_equals_dense(synthetic(120, 5, 12, 8), 0.0125, "large plan at 0.0125 m");
}

TEST_P(TiledMap, EqualsTheDenseMapOnEveryCarmenLog) {
  const fs::path dir = test_support::data_dir() / "carmen";
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().string().find(".log") == std::string::npos) continue;
    expect_tiled_equals_dense(read_carmen_log(entry.path().string()), 0.1, entry.path().filename().string());
    ++logs;
  }
  EXPECT_GE(logs, 5);
}

// Cells on both sides of the origin against the models' rules applied cell by cell into a std::map
// (no layout, no tiles): the tiled map holds exactly those cells, with those values.
TEST_P(TiledMap, EqualsTheRulesAppliedCellByCellAroundTheOrigin) {
  const std::vector<LaserScan> scans = synthetic(60, 29);
  double mid_x = 0, mid_y = 0;
  for (const LaserScan& scan : scans) {
    mid_x += scan.laser_pose.x / static_cast<double>(scans.size());
    mid_y += scan.laser_pose.y / static_cast<double>(scans.size());
  }
  const GridSpec spec = GridSpec::unbounded(0.05, mid_x, mid_y);
  const detail::BeamBatch batch = detail::prepare_beams(scans, nullptr, spec, 1e300);
  std::map<std::pair<int, int>, std::int64_t> expected;
  if (GetParam().model == Model::Carmen) {
    int table_size = 0;
    const std::vector<detail::EvidenceEntry> table =
        detail::build_evidence_table(SensorModel{}, spec.resolution, &table_size);
    const detail::EvidenceParams p = detail::make_params(spec, SensorModel{}, table_size, table.data());
    for (std::size_t s = 0; s < scans.size(); ++s)
      for (int i = 0; i < batch.scans[s].beams; ++i)
        detail::for_each_beam_update(batch.scans[s], i, scans[s].ranges[i], batch.beam_cos.data(),
                                     batch.beam_sin.data(), p, 0, 1,
                                     [&](const detail::CellUpdate& u) { expected[{u.x, u.y}] += u.increment; });
  } else {
    const detail::HitMissParams p = detail::make_hit_miss_params(spec, HitMissModel{});
    for (std::size_t s = 0; s < scans.size(); ++s) {
      std::map<std::pair<int, int>, unsigned> hit;  // this scan's cells: 1 if any beam ends there
      for (int i = 0; i < batch.scans[s].beams; ++i)
        detail::for_each_hit_miss_cell(batch.scans[s], i, scans[s].ranges[i], batch.beam_cos.data(),
                                       batch.beam_sin.data(), p, 0, 1,
                                       [&](int x, int y, bool h) { hit[{x, y}] |= h ? 1u : 0u; });
      for (const auto& [cell, mark] : hit) expected[cell] = detail::hit_miss_update(expected[cell], mark, p);
    }
  }
  GridMapper mapper = make_mapper(spec, GetParam());
  mapper.insert(scans);
  const OccupancyGrid map = mapper.map();
  long long dx, dy;
  offset_of(map.spec, spec, &dx, &dy);
  ASSERT_LT(dx, 0);  // cells of both signs
  ASSERT_LT(dy, 0);
  std::size_t differing = 0;
  for (const auto& [cell, evidence] : expected) {
    const long long x = cell.first - dx, y = cell.second - dy;
    ASSERT_TRUE(x >= 0 && y >= 0 && x < map.spec.width && y < map.spec.height);
    const std::size_t i = map.index(static_cast<int>(x), static_cast<int>(y));
    differing += !map.known[i] || map.evidence[i] != evidence;
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(map.known_cells(), expected.size());
}

// Scan by scan (each insert adding tiles) equals the whole log; rebuild equals a fresh map; reset
// forgets the tiles.
TEST_P(TiledMap, ScanByScanRebuildAndResetEqualTheWholeLog) {
  const std::vector<LaserScan> scans = synthetic(80, 7, 6, 4);
  const GridSpec spec = GridSpec::unbounded(0.025, -3.0, 2.0);
  GridMapper whole = make_mapper(spec, GetParam());
  whole.insert(scans);
  GridMapper streamed = make_mapper(spec, GetParam());
  for (const LaserScan& scan : scans) streamed.insert(scan);
  expect_identical(whole.map(), streamed.map(), "one by one");
  EXPECT_EQ(whole.stored_cells(), streamed.stored_cells());

  std::vector<Pose2D> poses;
  for (const LaserScan& scan : scans)
    poses.push_back({scan.laser_pose.x + 0.3, scan.laser_pose.y - 0.2, scan.laser_pose.theta});
  std::vector<LaserScan> moved = scans;
  for (std::size_t s = 0; s < moved.size(); ++s) moved[s].laser_pose = poses[s];
  GridMapper fresh = make_mapper(spec, GetParam());
  fresh.insert(moved);
  streamed.rebuild(scans, poses);
  expect_identical(fresh.map(), streamed.map(), "rebuilt");
  EXPECT_EQ(fresh.stored_cells(), streamed.stored_cells());

  streamed.reset();
  EXPECT_EQ(streamed.stored_cells(), 0u);
  EXPECT_EQ(streamed.extent().cells(), 0u);
  EXPECT_EQ(streamed.map().known_cells(), 0u);
  streamed.insert(scans);
  expect_identical(whole.map(), streamed.map(), "after reset");
}

// Each update's box, counted from the extent, holds every cell the scan changed, with the map's
// values; extent_grew says when the extent changed.
TEST_P(TiledMap, UpdatesAreCountedFromTheExtent) {
  const std::vector<LaserScan> scans = synthetic(30, 11, 6, 4);
  GridMapper mapper = make_mapper(GridSpec::unbounded(0.05), GetParam());
  OccupancyGrid before = mapper.map();
  int grew = 0;
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const GridSpec extent_before = mapper.extent();
    const MapUpdate update = mapper.insert_with_update(scans[s]);
    const OccupancyGrid after = mapper.map();
    const bool extent_changed = after.spec.width != extent_before.width || after.spec.height != extent_before.height ||
                                after.spec.origin_x != extent_before.origin_x ||
                                after.spec.origin_y != extent_before.origin_y;
    EXPECT_EQ(update.extent_grew, extent_changed) << "scan " << s;
    grew += update.extent_grew;
    long long dx = 0, dy = 0;
    if (before.spec.cells() > 0) offset_of(before.spec, after.spec, &dx, &dy);
    const OccupancyValues values = after.occupancy_values();
    std::size_t outside = 0, differing = 0;
    for (int y = 0; y < after.spec.height; ++y)
      for (int x = 0; x < after.spec.width; ++x) {
        const std::size_t cell = after.index(x, y);
        const long long bx = x - dx, by = y - dy;
        const bool was = bx >= 0 && by >= 0 && bx < before.spec.width && by < before.spec.height;
        const std::size_t old = was ? before.index(static_cast<int>(bx), static_cast<int>(by)) : 0;
        const bool changed =
            was ? after.evidence[cell] != before.evidence[old] || after.known[cell] != before.known[old]
                : after.known[cell] != 0;
        if (changed) outside += !update.contains(x, y);
        if (update.contains(x, y))
          differing += update.data[std::size_t(y - update.y) * update.width + (x - update.x)] != values.data[cell];
      }
    EXPECT_EQ(outside, 0u) << "scan " << s << ": changed cells outside the update";
    EXPECT_EQ(differing, 0u) << "scan " << s << ": the update's values are not the map's";
    before = after;
  }
  EXPECT_GT(grew, 1);
}

// A scan 1e6 m away adds its own tiles, not a grid spanning the distance; the map then spans
// 4e7 x 1e3 cells, too many to copy, and map() says so instead of trying.
TEST_P(TiledMap, AFarScanAddsTilesNotAGrid) {
  const std::vector<LaserScan> scans = synthetic(3, 13);
  GridMapper mapper = make_mapper(GridSpec::unbounded(0.025), GetParam());
  mapper.insert(scans[0]);
  const std::size_t near = mapper.stored_cells();
  EXPECT_GT(near, 0u);
  LaserScan far = scans[1];
  far.laser_pose.x += 1e6;
  const MapUpdate update = mapper.insert_with_update(far);
  EXPECT_TRUE(update.extent_grew);
  EXPECT_FALSE(update.empty());
  EXPECT_EQ(update.data.size(), std::size_t(update.width) * update.height);
  EXPECT_LT(mapper.stored_cells(), 3 * near) << "the far scan's tiles only";
  EXPECT_GT(mapper.extent().width, 39'000'000);
  EXPECT_THROW(mapper.map(), linalg_cuda::InvalidArgument);
}

TEST_P(TiledMap, BadInputLeavesTheMapAsItWas) {
  const std::vector<LaserScan> scans = synthetic(10, 17);
  GridMapper mapper = make_mapper(GridSpec::unbounded(0.05), GetParam());
  mapper.insert(scans[0]);
  const OccupancyGrid map = mapper.map();
  const std::size_t stored = mapper.stored_cells();
  std::vector<LaserScan> bad = scans;
  bad[5].laser_pose.y = std::nan("");
  EXPECT_THROW(mapper.insert(bad), linalg_cuda::InvalidArgument);
  bad = scans;
  bad[7].ranges[3] = -1.0f;
  EXPECT_THROW(mapper.insert(bad), linalg_cuda::InvalidArgument);
  expect_identical(map, mapper.map(), "after the rejected inserts");
  EXPECT_EQ(mapper.stored_cells(), stored);
  EXPECT_THROW(GridMapper(GridSpec{0.05, 0.0, 0.0, 0, 10}, {}, GetParam().backend), linalg_cuda::InvalidArgument);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.backend == Backend::Cpu ? "Cpu" : "Cuda") +
         (info.param.model == Model::Carmen ? "Carmen" : "HitMiss");
}

INSTANTIATE_TEST_SUITE_P(Backends, TiledMap,
                         ::testing::Values(Case{Backend::Cpu, Model::Carmen}, Case{Backend::Cpu, Model::HitMiss},
                                           Case{Backend::Cuda, Model::Carmen}, Case{Backend::Cuda, Model::HitMiss}),
                         case_name);

// Scans 500 m apart reading 90% of each model's range on every beam: over 10,000 new tiles in one
// insert (60 scans of CARMEN's 10 m rays at 0.0125 m, 40 of the hit/miss model's 30 m at 0.025 m),
// past the request pass's first scratch set and the first tables.
struct Scattered {
  GridSpec spec;
  std::vector<LaserScan> scans;
};

Scattered scattered_scans(Model model) {
  const bool carmen = model == Model::Carmen;
  Scattered scattered{GridSpec::unbounded(carmen ? 0.0125 : 0.025), synthetic(carmen ? 60 : 40, 19)};
  for (std::size_t s = 0; s < scattered.scans.size(); ++s) {
    scattered.scans[s].laser_pose.x += 500.0 * static_cast<double>(s);
    for (float& r : scattered.scans[s].ranges) r = carmen ? 9.0f : 27.0f;
  }
  return scattered;
}

class TiledGpuMap : public ::testing::TestWithParam<Model> {
 protected:
  void SetUp() override { REQUIRE_CUDA_DEVICE(); }
};

TEST_P(TiledGpuMap, BitIdenticalToCpuWithManyTilesAtOnce) {
  const Scattered scattered = scattered_scans(GetParam());
  const std::vector<LaserScan>& scans = scattered.scans;
  const GridSpec& spec = scattered.spec;
  GridMapper gpu = make_mapper(spec, {Backend::Cuda, GetParam()});
  GridMapper cpu = make_mapper(spec, {Backend::Cpu, GetParam()});
  gpu.insert(scans);
  cpu.insert(scans);
  EXPECT_GT(gpu.stored_cells(), 10000u * 4096u);
  EXPECT_EQ(gpu.stored_cells(), cpu.stored_cells());
  EXPECT_EQ(gpu.stats().cell_updates, cpu.stats().cell_updates);
  // The extent spans 20 to 30 km: compare region by region through the updates of a second pass instead of
  // map() (too large): each scan's box and values.
  GridMapper gpu_streamed = make_mapper(spec, {Backend::Cuda, GetParam()});
  GridMapper cpu_streamed = make_mapper(spec, {Backend::Cpu, GetParam()});
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const MapUpdate g = gpu_streamed.insert_with_update(scans[s]), c = cpu_streamed.insert_with_update(scans[s]);
    ASSERT_EQ(g.x, c.x) << "scan " << s;
    ASSERT_EQ(g.y, c.y) << "scan " << s;
    ASSERT_EQ(g.width, c.width) << "scan " << s;
    ASSERT_EQ(g.height, c.height) << "scan " << s;
    EXPECT_EQ(g.extent_grew, c.extent_grew) << "scan " << s;
    EXPECT_TRUE(g.data == c.data) << "scan " << s;
  }
  EXPECT_EQ(gpu_streamed.stored_cells(), gpu.stored_cells());
}

// Scan by scan on every shared log: each update (box and values) and the final map equal the CPU's.
TEST_P(TiledGpuMap, ScanByScanEqualsTheCpuOnEveryCarmenLog) {
  const fs::path dir = test_support::data_dir() / "carmen";
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().string().find(".log") == std::string::npos) continue;
    std::vector<LaserScan> scans = read_carmen_log(entry.path().string());
    scans.resize(std::min<std::size_t>(scans.size(), 400));
    const GridSpec spec = GridSpec::unbounded(0.05, scans[0].laser_pose.x, scans[0].laser_pose.y);
    GridMapper gpu = make_mapper(spec, {Backend::Cuda, GetParam()});
    GridMapper cpu = make_mapper(spec, {Backend::Cpu, GetParam()});
    std::size_t differing = 0;
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const MapUpdate g = gpu.insert_with_update(scans[s]), c = cpu.insert_with_update(scans[s]);
      differing += g.x != c.x || g.y != c.y || g.width != c.width || g.height != c.height ||
                   g.extent_grew != c.extent_grew || g.data != c.data;
    }
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(differing, 0u) << name << ": updates differ";
    expect_identical(gpu.map(), cpu.map(), name);
    ++logs;
  }
  EXPECT_GE(logs, 5);
}

// A device without room for the tiles: a clear error naming the tiled map, the map as it was, and the
// mapper working again once there is room.
TEST_P(TiledGpuMap, ADeviceTooSmallForTheTilesSaysSo) {
  const Scattered scattered = scattered_scans(GetParam());
  const std::vector<LaserScan>& scans = scattered.scans;
  GridMapper mapper = make_mapper(scattered.spec, {Backend::Cuda, GetParam()});
  mapper.insert(scans[0]);
  const std::size_t stored = mapper.stored_cells();
  std::size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  void* hog = nullptr;
  const std::size_t leave = 32u << 20;  // far less than the other scans' tiles (over 500 MB)
  ASSERT_GT(free_bytes, leave);
  ASSERT_EQ(cudaMalloc(&hog, free_bytes - leave), cudaSuccess);
  const OccupancyGrid before = mapper.map();
  try {
    mapper.insert(scans);
    ADD_FAILURE() << "the tiles fitted in " << (leave >> 20) << " MiB";
  } catch (const linalg_cuda::DeviceMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("tiled map of"), std::string::npos) << e.what();
  }
  EXPECT_EQ(mapper.stored_cells(), stored);
  expect_identical(before, mapper.map(), "after the failed insert");
  // A rebuild clears the map before it learns what it needs: the old tiles come back.
  std::vector<Pose2D> poses;
  for (const LaserScan& scan : scans) poses.push_back(scan.laser_pose);
  EXPECT_THROW(mapper.rebuild(scans, poses), linalg_cuda::DeviceMemoryError);
  EXPECT_EQ(mapper.stored_cells(), stored);
  expect_identical(before, mapper.map(), "after the failed rebuild");
  ASSERT_EQ(cudaFree(hog), cudaSuccess);
  mapper.insert(std::vector<LaserScan>(scans.begin() + 1, scans.end()));
  GridMapper cpu = make_mapper(scattered.spec, {Backend::Cpu, GetParam()});
  cpu.insert(scans);
  EXPECT_EQ(mapper.stored_cells(), cpu.stored_cells());
  EXPECT_EQ(mapper.stats().cell_updates, cpu.stats().cell_updates);
}

INSTANTIATE_TEST_SUITE_P(Models, TiledGpuMap, ::testing::Values(Model::Carmen, Model::HitMiss),
                         [](const ::testing::TestParamInfo<Model>& info) {
                           return std::string(info.param == Model::Carmen ? "Carmen" : "HitMiss");
                         });

}  // namespace
}  // namespace gridmap_cuda
