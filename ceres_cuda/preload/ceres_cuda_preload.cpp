// libceres_cuda_preload.so: routes an unchanged program's ceres::Solve through ceres_cuda::Solve.
//
//   LD_PRELOAD=/usr/local/lib/libceres_cuda_preload.so ./my_bundle_adjuster ...
//
// The library defines ceres::Solve and ceres::Solver::Solve with the system libceres' signatures, so
// the dynamic linker binds a program's calls (and libceres' own call from one to the other) here
// first. Each solve goes to ceres_cuda::Solve, which hands the problems it does not take to the real
// ceres::Solve; that call, and any other made while a routed solve runs on the thread, goes to
// libceres through dlsym(RTLD_NEXT). Environment:
//   CERES_CUDA_SOLVER=auto|gpu|cpu|ceres  the engine (auto: the GPU when there is one; ceres: every
//                                         solve to libceres untouched)          (default auto)
//   CERES_CUDA_REPORT=1                   one line per solve on stderr: which path ran, iterations,
//                                         costs, time
// The reason a problem goes to libceres is written once per distinct reason. A program that links
// Ceres statically (Debian's colmap does) has no ceres::Solve to interpose, and runs as before.
#include <dlfcn.h>

#include <ceres/problem.h>
#include <ceres/solver.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "ceres_cuda/solve.h"

namespace {

using SolveFunction = void (*)(const ceres::Solver::Options&, ceres::Problem*, ceres::Solver::Summary*);
using SolverSolveFunction = void (*)(ceres::Solver*, const ceres::Solver::Options&, ceres::Problem*,
                                     ceres::Solver::Summary*);

// Mangled names of the two entry points, as libceres exports them.
constexpr const char* kSolve = "_ZN5ceres5SolveERKNS_6Solver7OptionsEPNS_7ProblemEPNS0_7SummaryE";
constexpr const char* kSolverSolve = "_ZN5ceres6Solver5SolveERKNS0_7OptionsEPNS_7ProblemEPNS0_7SummaryE";

enum class Choice { Auto, Gpu, Cpu, Ceres };

struct Settings {
  Choice choice = Choice::Auto;
  bool report = false;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    if (const char* solver = std::getenv("CERES_CUDA_SOLVER")) {
      const std::string value = solver;
      if (value == "gpu")
        out.choice = Choice::Gpu;
      else if (value == "cpu")
        out.choice = Choice::Cpu;
      else if (value == "ceres")
        out.choice = Choice::Ceres;
      else if (value != "auto" && !value.empty())
        std::fprintf(stderr,
                     "ceres_cuda_preload: CERES_CUDA_SOLVER='%s' is none of auto, gpu, cpu, ceres; using auto\n",
                     solver);
    }
    const char* report = std::getenv("CERES_CUDA_REPORT");
    out.report = report != nullptr && *report != '\0' && std::strcmp(report, "0") != 0;
    return out;
  }();
  return s;
}

template <typename Function>
Function real(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "ceres_cuda_preload: no %s after this library (%s); is libceres loaded?\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Function>(symbol);
}

// True while this thread runs a routed solve: ceres_cuda's own call to ceres::Solve (its fallback)
// then reaches libceres rather than coming back here.
thread_local bool routing = false;

void report_fallback_once(const std::string& reason) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  const std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(reason).second)
    std::fprintf(stderr, "ceres_cuda_preload: ceres::Solve solves this problem (said once per reason): %s\n",
                 reason.c_str());
}

// Sets `routing` for the scope's lifetime, whatever way it ends.
struct RoutingScope {
  RoutingScope() { routing = true; }
  ~RoutingScope() { routing = false; }
};

void route(const ceres::Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary) {
  static std::atomic<int> count{0};
  const auto start = std::chrono::steady_clock::now();
  ceres_cuda::SolveOptions solve_options;
  solve_options.backend = settings().choice == Choice::Gpu   ? ceres_cuda::Backend::Cuda
                          : settings().choice == Choice::Cpu ? ceres_cuda::Backend::Cpu
                                                             : ceres_cuda::Backend::Auto;
  solve_options.log_fallback = false;
  ceres_cuda::SolveDetails details;
  {
    const RoutingScope scope;
    ceres_cuda::Solve(options, problem, summary, solve_options, &details);
  }
  if (!details.fallback_reason.empty()) report_fallback_once(details.fallback_reason);
  if (settings().report) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr,
                 "ceres_cuda_preload: solve %d: %s, %zu iterations, cost %.6e -> %.6e, %s, %.3f s (set-up %.3f s)\n",
                 ++count, ceres_cuda::to_string(details.path), summary->iterations.size(), summary->initial_cost,
                 summary->final_cost, ceres::TerminationTypeToString(summary->termination_type), seconds,
                 details.analysis_seconds + details.setup_seconds);
  }
}

}  // namespace

namespace ceres {

void Solve(const Solver::Options& options, Problem* problem, Solver::Summary* summary) {
  static const SolveFunction next = real<SolveFunction>(kSolve);
  if (routing || settings().choice == Choice::Ceres) return next(options, problem, summary);
  route(options, problem, summary);
}

void Solver::Solve(const Solver::Options& options, Problem* problem, Solver::Summary* summary) {
  static const SolverSolveFunction next = real<SolverSolveFunction>(kSolverSolve);
  if (routing || settings().choice == Choice::Ceres) return next(this, options, problem, summary);
  route(options, problem, summary);
}

}  // namespace ceres
