// bench_linalg: conjugate gradients on the GPU against the physical floor, a plain cuSPARSE+cuBLAS
// CG, our CPU reference and Eigen's CG on all cores, all in one run on one machine.
//
//   bench_linalg [--poisson3d N] [--dense N] [--reps R] [--json FILE] [--skip-cpu]
//
// Time per iteration is measured as (t(K2 iterations) - t(K1 iterations)) / (K2 - K1), so set-up,
// graph capture and the final read-back cancel out; each figure is the median of R repetitions.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <Eigen/IterativeLinearSolvers>

#include "bench_support.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/cuda_context.h"
#include "linalg_cuda/linalg_cuda.h"
#include "plain_cusparse_cg.h"

namespace {

using linalg_cuda::CgOptions;
using linalg_cuda::DeviceVector;

struct Row {
  std::string problem, implementation;
  double n = 0, nonzeros = 0;
  double us_per_iteration = 0;
  double floor_us = 0;        // bytes that must move / measured copy bandwidth (0: not given)
  double bandwidth_gbs = 0;   // bytes the iteration must move / time
  std::string note;
};



// Median over reps of the per-iteration time of run(k), which must run exactly k iterations.
double per_iteration(const std::function<void(int)>& run, int k1, int k2, int reps) {
  run(k1);  // warm-up: module load, handles, workspaces
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run(k1);
    const double t1 = bench::seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    run(k2);
    const double t2 = bench::seconds_since(t0);
    samples.push_back((t2 - t1) / (k2 - k1));
  }
  return bench::median(samples);
}

// Device-to-device copy bandwidth, counting bytes read plus bytes written.

// Bytes one CG iteration must move for a CSR matrix: the matrix once, plus the vector passes of
// a fully fused iteration: SpMV reads p and writes q (2); the update reads x, p, r, q and writes
// x, r (6); the direction reads z, p and writes p (3). Jacobi adds the inverse diagonal read and z
// written in the update (2).
double cg_iteration_bytes(double n, double nnz, bool jacobi) {
  const double matrix = nnz * (sizeof(double) + sizeof(int)) + (n + 1) * sizeof(int);
  return matrix + (11 + (jacobi ? 2 : 0)) * n * sizeof(double);
}

struct Bench {
  int reps = 5;
  bool skip_cpu = false;
  double bandwidth_gbs = 0;
  std::vector<Row> rows;

  void add(Row row, double bytes) {
    if (bytes > 0) {
      row.floor_us = bytes / (bandwidth_gbs * 1e9) * 1e6;
      row.bandwidth_gbs = bytes / (row.us_per_iteration * 1e-6) / 1e9;
    }
    rows.push_back(row);
    std::printf("  %-22s %-34s %10.2f us/iter\n", row.problem.c_str(), row.implementation.c_str(), row.us_per_iteration);
    std::fflush(stdout);
  }

  void sparse(const std::string& name, const linalg_cuda::CsrMatrix& a, int k1, int k2, int cpu_k1, int cpu_k2) {
    const double n = a.rows(), nnz = a.nonZeros();
    const linalg_cuda::DeviceCsrMatrix device_a(a);
    const Eigen::VectorXd host_b = Eigen::VectorXd::Ones(a.rows());
    const DeviceVector<double> b(host_b);
    DeviceVector<double> x(a.rows());
    const linalg_cuda::JacobiPreconditioner jacobi(device_a);
    auto row = [&](const std::string& impl) {
      Row r;
      r.problem = name;
      r.implementation = impl;
      r.n = n;
      r.nonzeros = nnz;
      return r;
    };

    for (const bool use_jacobi : {false, true}) {
      for (const bool graph : {true, false}) {
        CgOptions options;
        options.stop.relative_tolerance = 0.0;  // never converges: exactly max_iterations
        options.execution.check_every = 50;
        options.execution.use_cuda_graph = graph;
        linalg_cuda::ConjugateGradient solver(options);
        Row r = row(std::string("linalg_cuda cg") + (use_jacobi ? " +jacobi" : "") + (graph ? "" : " (no graph)"));
        r.us_per_iteration = 1e6 * per_iteration(
                                       [&](int k) {
                                         CgOptions o = options;
                                         o.stop.max_iterations = k;
                                         solver.set_options(o);
                                         x.fill(0.0);
                                         const auto s = solver.solve(device_a, b, x, use_jacobi ? &jacobi : nullptr);
                                         if (s.iterations != k)
                                           std::fprintf(stderr, "warning: %s stopped after %d of %d iterations: %s\n",
                                                        name.c_str(), s.iterations, k, s.message.c_str());
                                       },
                                       k1, k2, reps);
        add(r, cg_iteration_bytes(n, nnz, use_jacobi));
      }
    }
    {
      Row r = row("plain cuSPARSE+cuBLAS cg");
      r.us_per_iteration =
          1e6 * per_iteration([&](int k) { bench::plain_cusparse_cg(device_a, b, x, k); }, k1, k2, reps);
      add(r, cg_iteration_bytes(n, nnz, false));
    }
    {
      // SpMV alone through cuSPARSE (DeviceCsrMatrix::apply), for the matrix part of the floor.
      DeviceVector<double> y(a.rows());
      Row r = row("cuSPARSE SpMV alone");
      r.us_per_iteration = 1e6 * per_iteration(
                                     [&](int k) {
                                       for (int i = 0; i < k; ++i) device_a.apply(b, y);
                                       linalg_cuda::thread_context().synchronize();
                                     },
                                     k1, k2, reps);
      add(r, nnz * 12 + (n + 1) * 4 + 2 * n * 8);
    }
    if (skip_cpu) return;
    {
      Eigen::ConjugateGradient<linalg_cuda::CsrMatrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner> eigen;
      eigen.setTolerance(0.0);
      eigen.compute(a);
      Row r = row("Eigen CG, " + std::to_string(Eigen::nbThreads()) + " threads");
      r.us_per_iteration = 1e6 * per_iteration(
                                     [&](int k) {
                                       eigen.setMaxIterations(k);
                                       Eigen::VectorXd sol = eigen.solve(host_b);
                                     },
                                     cpu_k1, cpu_k2, std::min(reps, 3));
      add(r, cg_iteration_bytes(n, nnz, false));
    }
    {
      CgOptions options;
      options.stop.relative_tolerance = 0.0;
      Row r = row("linalg_cuda cpu::cg reference");
      r.us_per_iteration = 1e6 * per_iteration(
                                     [&](int k) {
                                       options.stop.max_iterations = k;
                                       Eigen::VectorXd xh = Eigen::VectorXd::Zero(a.rows());
                                       linalg_cuda::cpu::cg(a, host_b, xh, options);
                                     },
                                     cpu_k1, cpu_k2, std::min(reps, 3));
      add(r, cg_iteration_bytes(n, nnz, false));
    }
  }

  void dense(int n) {
    // Diagonally dominant symmetric matrix: SPD without an O(n^3) construction.
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Eigen::MatrixXd host(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) host(i, j) = host(j, i) = (i == j) ? n : uniform(rng);
    const linalg_cuda::DeviceMatrix a(host);
    const DeviceVector<double> b(Eigen::VectorXd::Ones(n));
    DeviceVector<double> x(n), y(n);
    const double matrix_bytes = double(n) * n * sizeof(double);
    Row r;
    r.problem = "dense " + std::to_string(n);
    r.n = n;
    r.nonzeros = double(n) * n;
    r.implementation = "DeviceMatrix gemv (cuBLAS)";
    r.us_per_iteration = 1e6 * per_iteration(
                                   [&](int k) {
                                     for (int i = 0; i < k; ++i) a.apply(b, y);
                                     linalg_cuda::thread_context().synchronize();
                                   },
                                   5, 55, reps);
    add(r, matrix_bytes + 2.0 * n * sizeof(double));
    CgOptions options;
    options.stop.relative_tolerance = 0.0;
    options.execution.check_every = 50;
    linalg_cuda::ConjugateGradient solver(options);
    r.implementation = "linalg_cuda cg on DeviceMatrix";
    r.us_per_iteration = 1e6 * per_iteration(
                                   [&](int k) {
                                     options.stop.max_iterations = k;
                                     solver.set_options(options);
                                     x.fill(0.0);
                                     solver.solve(a, b, x);
                                   },
                                   10, 60, reps);
    add(r, matrix_bytes + 12.0 * n * sizeof(double));
  }

  void print_table() const {
    std::printf("\n%-20s %-34s %10s %10s %8s %10s %10s\n", "problem", "implementation", "us/iter", "floor us",
                "x floor", "GB/s", "vs ours");
    for (const Row& r : rows) {
      double ours = 0;
      for (const Row& o : rows)
        if (o.problem == r.problem && o.implementation == "linalg_cuda cg") ours = o.us_per_iteration;
      std::printf("%-20s %-34s %10.2f %10.2f %8.2f %10.1f %10s\n", r.problem.c_str(), r.implementation.c_str(),
                  r.us_per_iteration, r.floor_us, r.floor_us > 0 ? r.us_per_iteration / r.floor_us : 0.0,
                  r.bandwidth_gbs,
                  ours > 0 ? (std::to_string(r.us_per_iteration / ours).substr(0, 6) + "x").c_str() : "-");
    }
  }

  void write_json(const std::string& path, const cudaDeviceProp& props) const {
    std::ofstream out(path);
    out.precision(12);
    out << "{\n  \"device\": \"" << props.name << "\",\n  \"copy_bandwidth_gbs\": " << bandwidth_gbs
        << ",\n  \"cpu_threads\": " << omp_get_max_threads() << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << "    {\"problem\": \"" << r.problem << "\", \"implementation\": \"" << r.implementation
          << "\", \"n\": " << r.n << ", \"nonzeros\": " << r.nonzeros << ", \"us_per_iteration\": " << r.us_per_iteration
          << ", \"floor_us\": " << r.floor_us << ", \"bandwidth_gbs\": " << r.bandwidth_gbs << "}"
          << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
  }
};

const char* kUsage = R"(usage: bench_linalg [--poisson3d N] [--dense N] [--reps R] [--json FILE] [--skip-cpu]
  --poisson3d N   size of the large 3-D Poisson problem (default 128: 2.1 M rows, 14.6 M nonzeros)
  --dense N       size of the dense CG problem through DeviceMatrix (default 8192; 0 skips)
  --reps R        repetitions per figure, the median is reported (default 5)
  --json FILE     also write the rows as JSON
  --skip-cpu      skip Eigen and the CPU reference (they take a while on the large problem)
)";

}  // namespace

int main(int argc, char** argv) {
  int poisson_n = 128, dense_n = 8192;
  std::string json;
  Bench bench;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "bench_linalg: missing value after " << flag << "\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (flag == "--poisson3d") poisson_n = std::atoi(value());
    else if (flag == "--dense") dense_n = std::atoi(value());
    else if (flag == "--reps") bench.reps = std::max(1, std::atoi(value()));
    else if (flag == "--json") json = value();
    else if (flag == "--skip-cpu") bench.skip_cpu = true;
    else {
      std::cerr << "bench_linalg: unknown option " << flag << "\n" << kUsage;
      return 2;
    }
  }
  if (!linalg_cuda::cuda_device_available()) {
    std::cerr << "bench_linalg: no CUDA device; this benchmark compares GPU against CPU and needs one\n";
    return 1;
  }
  const cudaDeviceProp& props = linalg_cuda::thread_context().device_properties();
  bench.bandwidth_gbs = bench::copy_bandwidth_gbs();
  std::printf("device %s, %d SMs; device-to-device copy %.0f GB/s (read + write); %d CPU threads\n", props.name,
              props.multiProcessorCount, bench.bandwidth_gbs, omp_get_max_threads());

  bench.sparse("poisson3d " + std::to_string(poisson_n), linalg_cuda::poisson3d(poisson_n), 50, 450, 3, 13);
  bench.sparse("poisson2d 100 (1e4)", linalg_cuda::poisson2d(100), 100, 2100, 100, 600);
  bench.sparse("poisson2d 316 (1e5)", linalg_cuda::poisson2d(316), 100, 2100, 20, 120);
  if (dense_n > 0) bench.dense(dense_n);

  bench.print_table();
  if (!json.empty()) bench.write_json(json, props);
  return 0;
}
