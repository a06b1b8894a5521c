// bench_gridmap: occupancy grid mapping of a whole CARMEN log on the GPU against the CPU reference
// and a transcription of CARMEN's own egrid.c (double probabilities), in one run on one machine.
//
//   bench_gridmap [--log FILE] [--reps R] [--json FILE] [--skip-carmen] [--sites]
//
// "map" = insert(all scans) + map(): host preparation, upload, kernel, download of the evidence and
// the known mask; the grid's allocation (GridMapper construction) is reported separately, as is a
// rebuild (reset + insert + map), the loop-closure case. "8-bit" rows download the nav_msgs values
// instead (GridMapper::occupancy_values, a byte a cell), and "per scan" rows replay the log scan by
// scan with insert_with_update (the changed region's values downloaded after each). "hit/miss" rows
// map the whole log with the hit/miss model instead of CARMEN's (8-bit map downloaded). "tiled" rows
// map on GridSpec::unbounded (64 x 64-cell tiles allocated as beams reach them) instead of the
// fitted dense grid.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "../tests/gridmap_cuda/carmen_transcription.h"
#include "gridmap_cuda/gridmap_cuda.h"
#include "bench_support.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/device_buffer.h"

namespace {

using gridmap_cuda::Backend;
using gridmap_cuda::GridSpec;
using gridmap_cuda::LaserScan;

struct Row {
  std::string problem, implementation;
  double resolution = 0, scans = 0, cells = 0, updates = 0;
  double ms = 0;
  double vs_gpu = 0;  // time / GPU time of the same problem
};

double median_seconds(const std::function<void()>& run, int reps) {
  run();  // warm-up
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    samples.push_back(bench::seconds_since(t0));
  }
  return bench::median(samples);
}

struct Bench {
  int reps = 10;
  bool skip_carmen = false;
  double bandwidth_gbs = 0;
  std::vector<Row> rows;

  // GPU, CPU reference (and CARMEN's transcription) on the first `count` scans at `resolution`.
  void problem(const std::string& name, const std::vector<LaserScan>& all, std::size_t count, double resolution,
               bool with_cpu, bool with_carmen, bool per_scan = false) {
    const std::vector<LaserScan> scans(all.begin(), all.begin() + std::min(count, all.size()));
    const GridSpec spec = gridmap_cuda::fit_grid(scans, resolution);
    Row base;
    base.problem = name;
    base.resolution = resolution;
    base.scans = static_cast<double>(scans.size());
    base.cells = static_cast<double>(spec.cells());

    gridmap_cuda::GridMapper gpu(spec, {}, Backend::Cuda);
    double gpu_seconds = median_seconds(
        [&] {
          gpu.reset();
          gpu.insert(scans);
          gridmap_cuda::OccupancyGrid map = gpu.map();
        },
        reps);
    base.updates = static_cast<double>(gpu.stats().cell_updates);
    add(base, "gpu rebuild (reset+insert+map)", gpu_seconds, gpu_seconds);
    {
      const double seconds = median_seconds(
          [&] {
            gridmap_cuda::GridMapper fresh(spec, {}, Backend::Cuda);
            fresh.insert(scans);
            gridmap_cuda::OccupancyGrid map = fresh.map();
          },
          reps);
      add(base, "gpu from scratch (+ grid alloc)", seconds, gpu_seconds);
    }
    {
      const double seconds = median_seconds(
          [&] {
            gpu.reset();
            gpu.insert(scans);
          },
          reps);
      add(base, "gpu reset+insert, no download", seconds, gpu_seconds);
    }
    {
      gridmap_cuda::OccupancyValues values;
      const double seconds = median_seconds(
          [&] {
            gpu.reset();
            gpu.insert(scans);
            gpu.occupancy_values(&values);
          },
          reps);
      add(base, "gpu rebuild, 8-bit map (+values)", seconds, gpu_seconds);
    }
    if (per_scan) {
      // Scan by scan on a fresh map, each update's region downloaded: the median and the 99th percentile.
      add_latencies(base, "gpu", per_scan_latencies(&gpu, scans), gpu_seconds);
      tiled(base, scans, spec, gpu_seconds);
      // The hit/miss model on the same grid: scan after scan, two launches each.
      const gridmap_cuda::HitMissModel hit_miss;
      gridmap_cuda::GridMapper gpu_hm(spec, hit_miss, Backend::Cuda);
      gridmap_cuda::OccupancyValues values;
      const double seconds = median_seconds(
          [&] {
            gpu_hm.reset();
            gpu_hm.insert(scans);
            gpu_hm.occupancy_values(&values);
          },
          reps);
      add(base, "gpu hit/miss model, 8-bit map", seconds, gpu_seconds);
      if (with_cpu) {
        gridmap_cuda::GridMapper cpu_hm(spec, hit_miss, Backend::Cpu);
        const double cpu_seconds = median_seconds(
            [&] {
              cpu_hm.reset();
              cpu_hm.insert(scans);
              cpu_hm.occupancy_values(&values);
            },
            1);
        add(base, "cpu hit/miss model, 1 thread", cpu_seconds, gpu_seconds);
      }
    }
    if (with_cpu) {
      gridmap_cuda::GridMapper cpu(spec, {}, Backend::Cpu);
      const double seconds = median_seconds(
          [&] {
            cpu.reset();
            cpu.insert(scans);
            gridmap_cuda::OccupancyGrid map = cpu.map();
          },
          std::min(reps, 2));
      add(base, "cpu reference, 1 thread", seconds, gpu_seconds);
    }
    if (with_carmen && !skip_carmen) {
      const double seconds = median_seconds(
          [&] {
            carmen::EvidenceGrid grid(spec);
            for (const LaserScan& scan : scans) carmen::update_grid(&grid, scan, {});
          },
          1);
      add(base, "CARMEN egrid.c transcribed, 1 thread", seconds, gpu_seconds);
    }
  }

  // The same map on tiles: rebuilt (the pool kept), from scratch (tiles allocated), scan by scan.
  void tiled(const Row& base, const std::vector<LaserScan>& scans, const GridSpec& spec, double gpu_seconds) {
    const GridSpec unbounded = GridSpec::unbounded(spec.resolution, spec.origin_x, spec.origin_y);
    gridmap_cuda::GridMapper gpu(unbounded, {}, Backend::Cuda);
    gridmap_cuda::OccupancyValues values;
    const double rebuild = median_seconds(
        [&] {
          gpu.reset();
          gpu.insert(scans);
          gpu.occupancy_values(&values);
        },
        reps);
    add(base, "gpu tiled rebuild, 8-bit map", rebuild, gpu_seconds);
    std::printf("  tiles store %.1f M of the extent's %.1f M cells (the fitted grid: %.1f M)\n",
                gpu.stored_cells() / 1e6, gpu.extent().cells() / 1e6, spec.cells() / 1e6);
    const double scratch = median_seconds(
        [&] {
          gridmap_cuda::GridMapper fresh(unbounded, {}, Backend::Cuda);
          fresh.insert(scans);
          fresh.occupancy_values(&values);
        },
        reps);
    add(base, "gpu tiled from scratch, 8-bit map", scratch, gpu_seconds);
    add_latencies(base, "gpu tiled", per_scan_latencies(&gpu, scans), gpu_seconds);
  }

  // insert_with_update(scan) for each scan in turn on the emptied map: each one's seconds, sorted.
  static std::vector<double> per_scan_latencies(gridmap_cuda::GridMapper* mapper, const std::vector<LaserScan>& scans) {
    mapper->reset();
    std::vector<double> latencies;
    for (const LaserScan& scan : scans) {
      const auto t0 = std::chrono::steady_clock::now();
      const gridmap_cuda::MapUpdate update = mapper->insert_with_update(scan);
      latencies.push_back(bench::seconds_since(t0));
    }
    std::sort(latencies.begin(), latencies.end());
    return latencies;
  }

  void add_latencies(const Row& base, const std::string& what, const std::vector<double>& sorted, double gpu_seconds) {
    add(base, what + " per scan + update, median", sorted[sorted.size() / 2], gpu_seconds);
    add(base, what + " per scan + update, 99th pct", sorted[sorted.size() * 99 / 100], gpu_seconds);
  }

  void add(const Row& base, const std::string& implementation, double seconds, double gpu_seconds) {
    Row r = base;
    r.implementation = implementation;
    r.ms = seconds * 1e3;
    r.vs_gpu = seconds / gpu_seconds;
    rows.push_back(r);
    std::printf("  %-26s %-7g %-38s %10.2f ms\n", r.problem.c_str(), r.resolution, r.implementation.c_str(), r.ms);
    std::fflush(stdout);
  }

  void print_table() const {
    // A cell update reads and writes its 8-byte evidence and writes its known byte: 17 bytes.
    std::printf("\n%-26s %7s %6s %11s %11s %-38s %10s %9s %10s %8s\n", "problem", "res m", "scans", "cells",
                "updates", "implementation", "ms", "x gpu", "Gupd/s", "%bw");
    for (const Row& r : rows) {
      const double rate = r.updates / (r.ms * 1e-3);
      std::printf("%-26s %7g %6.0f %11.0f %11.0f %-38s %10.2f %9.2f %10.3f %8.1f\n", r.problem.c_str(), r.resolution,
                  r.scans, r.cells, r.updates, r.implementation.c_str(), r.ms, r.vs_gpu, rate / 1e9,
                  100.0 * rate * 17 / (bandwidth_gbs * 1e9));
    }
  }

  void write_json(const std::string& path, const cudaDeviceProp& props) const {
    std::ofstream out(path);
    out.precision(12);
    out << "{\n  \"device\": \"" << props.name << "\",\n  \"copy_bandwidth_gbs\": " << bandwidth_gbs
        << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << "    {\"problem\": \"" << r.problem << "\", \"implementation\": \"" << r.implementation
          << "\", \"resolution\": " << r.resolution << ", \"scans\": " << r.scans << ", \"cells\": " << r.cells
          << ", \"cell_updates\": " << r.updates << ", \"ms\": " << r.ms << ", \"time_vs_gpu\": " << r.vs_gpu << "}"
          << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
  }
};

const char* kUsage = R"(usage: bench_gridmap [--log FILE] [--reps R] [--json FILE] [--skip-carmen] [--sites]
  --log FILE      CARMEN log to map (default $CUDA_SOLVERS_DATA or ../shared/data: carmen/freiburg-079-corrected.log.gz)
  --reps R        repetitions of each GPU figure, the median is reported (default 10)
  --json FILE     also write the rows as JSON
  --skip-carmen   leave out the (slow) transcription of CARMEN's egrid.c
  --sites         also map synthetic outdoor sites: 250 x 200 m (2,000 scans) at 0.025 and 0.0125 m,
                  1 x 1 km (8,000 scans) at 0.05 m
)";

// A site of rooms_x x rooms_y rooms of 25 m, toured by `scans` scans.
std::vector<LaserScan> synthetic_site(int rooms_x, int rooms_y, int scans) {
  gridmap_cuda::SyntheticLogOptions options;
  options.rooms_x = rooms_x;
  options.rooms_y = rooms_y;
  options.room_size = 25.0;
  options.door_width = 3.0;
  options.scans = scans;
  return gridmap_cuda::make_synthetic_log(options).scans;
}

}  // namespace

int main(int argc, char** argv) {
  const char* data = std::getenv("CUDA_SOLVERS_DATA");
  std::string log = std::string(data ? data : "../shared/data") + "/carmen/freiburg-079-corrected.log.gz";
  std::string json;
  bool sites = false;
  Bench bench;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "bench_gridmap: missing value after " << flag << "\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (flag == "--log") log = value();
    else if (flag == "--reps") bench.reps = std::max(1, std::atoi(value()));
    else if (flag == "--json") json = value();
    else if (flag == "--skip-carmen") bench.skip_carmen = true;
    else if (flag == "--sites") sites = true;
    else {
      std::cerr << "bench_gridmap: unknown option " << flag << "\n" << kUsage;
      return 2;
    }
  }
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_gridmap: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  try {
    const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
    bench.bandwidth_gbs = bench::copy_bandwidth_gbs();
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<LaserScan> scans = gridmap_cuda::read_carmen_log(log);
    std::printf("device %s; copy bandwidth %.0f GB/s; %s: %zu scans read in %.0f ms\n", props.name,
                bench.bandwidth_gbs, log.c_str(), scans.size(), bench::seconds_since(t0) * 1e3);
    const std::string name = log.substr(log.find_last_of('/') + 1);
    bench.problem(name, scans, scans.size(), 0.025, true, true, true);
    for (const std::size_t count : {500, 1000, 2000})
      if (count < scans.size()) bench.problem(name + " first " + std::to_string(count), scans, count, 0.025, true, false);
    for (const double resolution : {0.1, 0.05, 0.0125}) bench.problem(name, scans, scans.size(), resolution, true, false);
    if (sites) {
      const std::vector<LaserScan> site = synthetic_site(10, 8, 2000);
      bench.problem("synthetic site 250 x 200 m", site, site.size(), 0.025, true, false, true);
      bench.problem("synthetic site 250 x 200 m", site, site.size(), 0.0125, false, false);
      const std::vector<LaserScan> large = synthetic_site(40, 40, 8000);
      bench.problem("synthetic site 1 x 1 km", large, large.size(), 0.05, false, false, true);
    }
    bench.print_table();
    if (!json.empty()) bench.write_json(json, props);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_gridmap: " << e.what() << "\n";
    return 1;
  }
}
