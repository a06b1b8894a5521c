// gridmap_replay: a log replayed scan by scan, as a ROS node receives it, each scan inserted with
// GridMapper::insert_with_update and its changed region (an OccupancyGridUpdate's box and values)
// taken back; prints the update latency and writes the final map.
//
//   gridmap_replay --log ../shared/data/carmen/intel-corrected.log.gz --out intel
//   gridmap_replay                        # no log: a simulated robot in a generated floor plan
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command_line.h"
#include "map_model_choice.h"
#include "gridmap_cuda/gridmap_cuda.h"
#include "linalg_cuda/errors.h"

namespace {

const char* kUsage = R"(usage: gridmap_replay [--log FILE] [options]

Replays a CARMEN log (.log or .log.gz, FLASER or ROBOTLASER1 lines with corrected poses) scan by
scan into an occupancy grid map (CARMEN's evidence grid), the way a ROS node streams it: after each
scan the region it changed comes back with its nav_msgs/OccupancyGrid values. Prints the latency of
each update (insert + the region's values) as percentiles, then writes the map for ROS map_server and
as a PNG. The grid is fitted to the whole log first, unless --tiled.

  --log FILE          CARMEN log; without it a synthetic log (simulated robot, generated floor plan)
  --resolution R      cell size in metres                  (default 0.025)
  --backend B         cuda | cpu | auto                     (default auto)
  --model M           carmen | hit-miss: CARMEN's evidence grid, or the hit/miss model ROS users know
                      from Cartographer (hit 0.55, miss 0.49, clamped to [0.12, 0.97])  (default carmen)
  --tiled             no grid fitted in advance: the map grows in 64 x 64-cell tiles as the beams
                      reach them (GridSpec::unbounded), the way a robot exploring maps
  --out PREFIX        output files PREFIX.pgm, PREFIX.yaml, PREFIX.png (default replay)
  --scans N           scans of the synthetic log           (default 1000)
  --progress N        a line every N scans                  (default 500; 0: none)
  --help              this text
Exit status: 0 success, 2 bad usage or input, 3 failure while mapping or writing.
)";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("gridmap_replay", kUsage,
                                  {"--log", "--resolution", "--backend", "--model", "--out", "--scans", "--progress"},
                                  {"--tiled"});
  std::string log_path, out = "replay";
  double resolution = 0.025;
  int synthetic_scans = 1000, progress = 500;
  gridmap_cuda::Backend backend = gridmap_cuda::Backend::Auto;
  bool hit_miss = false, tiled = false;
  try {
    for (const auto& [flag, value] : cli.parse(argc, argv)) {
      if (flag == "--log") log_path = value;
      else if (flag == "--resolution") resolution = cli.number(flag, value, 1e-4, 100.0);
      else if (flag == "--backend") backend = linalg_cuda::parse_backend(value);
      else if (flag == "--model") hit_miss = examples::parse_map_model(value);
      else if (flag == "--out") out = value;
      else if (flag == "--tiled") tiled = true;
      else if (flag == "--scans") synthetic_scans = cli.integer(flag, value, 1, 10000000);
      else progress = cli.integer(flag, value, 0, 1 << 30);
    }
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }

  try {
    std::vector<gridmap_cuda::LaserScan> scans;
    if (log_path.empty()) {
      gridmap_cuda::SyntheticLogOptions options;
      options.scans = synthetic_scans;
      scans = gridmap_cuda::make_synthetic_log(options).scans;
      std::printf("%-16s synthetic: %zu scans (no --log given)\n", "input", scans.size());
    } else {
      scans = gridmap_cuda::read_carmen_log(log_path);
      std::printf("%-16s %s\n", "input", log_path.c_str());
    }
    if (scans.empty()) throw linalg_cuda::InvalidArgument("the log holds no laser scans (FLASER or ROBOTLASER1 lines)");
    const gridmap_cuda::GridSpec spec = tiled ? gridmap_cuda::GridSpec::unbounded(resolution)
                                              : examples::fit_grid_for(hit_miss, scans, resolution, 1.0);
    gridmap_cuda::GridMapper mapper = examples::make_mapper(hit_miss, spec, backend);
    if (tiled)
      std::printf("%-16s unbounded, 64 x 64-cell tiles at %.4g m, backend %s\n", "grid", spec.resolution,
                  linalg_cuda::to_string(mapper.backend()));
    else
      std::printf("%-16s %d x %d cells at %.4g m, backend %s\n", "grid", spec.width, spec.height, spec.resolution,
                  linalg_cuda::to_string(mapper.backend()));

    std::vector<double> latency;
    latency.reserve(scans.size());
    double region_bytes = 0;
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const auto t0 = std::chrono::steady_clock::now();
      const gridmap_cuda::MapUpdate update = mapper.insert_with_update(scans[s]);
      latency.push_back(seconds_since(t0));
      region_bytes += static_cast<double>(update.data.size());
      if (progress > 0 && (s + 1) % static_cast<std::size_t>(progress) == 0)
        std::printf("%-16s scan %zu of %zu: %.3f ms, region %d x %d at (%d, %d)%s\n", "progress", s + 1,
                    scans.size(), latency.back() * 1e3, update.width, update.height, update.x, update.y,
                    update.extent_grew ? ", the map grew" : "");
    }
    double total = 0;
    for (const double t : latency) total += t;
    std::printf("%-16s %zu scans in %.1f ms; per scan median %.3f ms, 99th percentile %.3f ms, max %.3f ms\n",
                "latency", scans.size(), total * 1e3, percentile(latency, 0.5) * 1e3, percentile(latency, 0.99) * 1e3,
                percentile(latency, 1.0) * 1e3);
    std::printf("%-16s %.0f bytes per update on average (the changed region's values)\n", "updates",
                region_bytes / static_cast<double>(scans.size()));
    if (tiled) {
      const gridmap_cuda::GridSpec extent = mapper.extent();
      std::printf("%-16s %d x %d cells; %zu tiles store %.1f%% of them\n", "map", extent.width, extent.height,
                  mapper.stored_cells() / 4096, 100.0 * static_cast<double>(mapper.stored_cells()) /
                                                    static_cast<double>(std::max<std::size_t>(1, extent.cells())));
    }
    gridmap_cuda::save_ros_map(mapper, out);
    gridmap_cuda::save_png(mapper, out + ".png");
    std::printf("%-16s %s.pgm %s.yaml %s.png\n", "wrote", out.c_str(), out.c_str(), out.c_str());
    return 0;
  } catch (const linalg_cuda::ParseError& e) {
    std::cerr << "gridmap_replay: " << e.what() << "\n";
    return 2;
  } catch (const linalg_cuda::InvalidArgument& e) {
    std::cerr << "gridmap_replay: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gridmap_replay: " << e.what() << "\n";
    return 3;
  }
}
