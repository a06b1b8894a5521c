// kernel_timeline: a CUPTI injection library that records every kernel's start and end on the GPU,
// including the kernels a CUDA graph launches, and prints where the GPU's time went when the program
// exits. It exists because the GPU machine has no Nsight Systems: Nsight Compute times each kernel
// alone (and cannot see into graphs), which says nothing about how kernels run back to back.
//
//   CUDA_INJECTION64_PATH=/path/libkernel_timeline.so bench_ceres --only Venice --skip-ceres
//
// The driver loads the library and calls InitializeInjection() before the program's first CUDA call.
// Environment:
//   KERNEL_TIMELINE_CSV=FILE     also write one line per kernel: name,start_ns,end_ns,stream,graph
//   KERNEL_TIMELINE_AFTER=NAME   count only kernels from the first launch of a kernel whose name
//                                contains NAME (e.g. skip a program's warm-up)
//   KERNEL_TIMELINE_API=1        also record the CUDA runtime calls (host time per function: what the
//                                host spends allocating, copying through pageable memory, waiting) and
//                                the copies (count, bytes and GPU time per direction and memory kind)
// The summary goes to stderr: per kernel name the launches, the total and mean time on the GPU, and
// the mean idle gap before its launches (the time since the previous kernel ended, on any stream);
// then the span from the first kernel to the last, the time some kernel ran, and the idle rest.
#include <cupti.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct KernelRecord {
  std::string name;
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t stream;
  uint32_t graph;
};

// A runtime call (host time) or a copy (GPU time), summed by name at exit.
struct Totals {
  size_t count = 0;
  double ns = 0, max_ns = 0;
  uint64_t bytes = 0;
  void add(uint64_t start, uint64_t end, uint64_t n_bytes = 0) {
    ++count;
    const double d = static_cast<double>(end - start);
    ns += d;
    max_ns = std::max(max_ns, d);
    bytes += n_bytes;
  }
};

std::mutex records_mutex;
std::vector<KernelRecord> records;  // NOLINT: filled by CUPTI's buffer callback, read at exit
std::map<std::string, Totals> api_totals, copy_totals;  // NOLINT: likewise
constexpr size_t kBufferBytes = 8u << 20;

// "void ceres_cuda::(anonymous namespace)::camera_pass<...>(...)" -> "ceres_cuda::camera_pass".
std::string short_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  for (const char* noise : {"(anonymous namespace)::", "void "}) {
    for (size_t at; (at = name.find(noise)) != std::string::npos;) name.erase(at, std::strlen(noise));
  }
  const size_t cut = name.find_first_of("<(");
  return cut == std::string::npos ? name : name.substr(0, cut);
}

const char* memory_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "other";
  }
}

// "HtoD pageable->device": the direction and where each side lives (pageable copies are staged).
std::string copy_name(const CUpti_ActivityMemcpy6& copy) {
  const char* direction = copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? "HtoD"
                          : copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? "DtoH"
                          : copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ? "DtoD"
                                                                             : "other";
  return std::string(direction) + " " + memory_kind(copy.srcKind) + "->" + memory_kind(copy.dstKind);
}

void print_totals(const char* title, const std::map<std::string, Totals>& totals) {
  if (totals.empty()) return;
  std::vector<std::pair<std::string, Totals>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::fprintf(stderr, "\n%-60s %9s %11s %10s %10s %12s\n", title, "count", "total ms", "mean us", "max us", "MB");
  for (const auto& [name, t] : rows)
    std::fprintf(stderr, "%-60.60s %9zu %11.3f %10.2f %10.2f %12.3f\n", name.c_str(), t.count, t.ns * 1e-6,
                 t.ns * 1e-3 / static_cast<double>(t.count), t.max_ns * 1e-3, static_cast<double>(t.bytes) * 1e-6);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  std::vector<KernelRecord> kernels;
  std::lock_guard<std::mutex> lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      kernels.push_back({short_name(kernel->name), kernel->start, kernel->end, kernel->streamId, kernel->graphId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto* call = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, call->cbid, &name) != CUPTI_SUCCESS || !name) name = "?";
      api_totals[name].add(call->start, call->end);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      copy_totals[copy_name(*copy)].add(copy->start, copy->end, copy->bytes);
    }
  }
  std::free(buffer);
  records.insert(records.end(), kernels.begin(), kernels.end());
}

struct NameTotals {
  size_t launches = 0;
  double busy_ns = 0;
  double gap_before_ns = 0;
};

void report() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(records_mutex);
  std::sort(records.begin(), records.end(),
            [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  if (const char* after = std::getenv("KERNEL_TIMELINE_AFTER")) {
    const auto first = std::find_if(records.begin(), records.end(),
                                    [&](const KernelRecord& r) { return r.name.find(after) != std::string::npos; });
    records.erase(records.begin(), first);
  }
  if (const char* csv_path = std::getenv("KERNEL_TIMELINE_CSV")) {
    if (FILE* csv = std::fopen(csv_path, "w")) {
      std::fprintf(csv, "name,start_ns,end_ns,stream,graph\n");
      for (const KernelRecord& r : records) {
        std::fprintf(csv, "%s,%llu,%llu,%u,%u\n", r.name.c_str(), static_cast<unsigned long long>(r.start_ns),
                     static_cast<unsigned long long>(r.end_ns), r.stream, r.graph);
      }
      std::fclose(csv);
    } else {
      std::fprintf(stderr, "kernel_timeline: cannot write %s\n", csv_path);
    }
  }
  print_totals("runtime call (host time)", api_totals);
  print_totals("copy (GPU time)", copy_totals);
  if (records.empty()) {
    std::fprintf(stderr, "kernel_timeline: no kernels recorded\n");
    return;
  }
  std::map<std::string, NameTotals> by_name;
  double busy_ns = 0;
  uint64_t busy_until = records.front().start_ns;
  for (const KernelRecord& r : records) {
    NameTotals& totals = by_name[r.name];
    ++totals.launches;
    totals.busy_ns += static_cast<double>(r.end_ns - r.start_ns);
    if (r.start_ns > busy_until) totals.gap_before_ns += static_cast<double>(r.start_ns - busy_until);
    // The union of the kernels' intervals: overlapping kernels count once.
    const uint64_t from = std::max(r.start_ns, busy_until);
    if (r.end_ns > from) busy_ns += static_cast<double>(r.end_ns - from);
    busy_until = std::max(busy_until, r.end_ns);
  }
  std::vector<std::pair<std::string, NameTotals>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.busy_ns > b.second.busy_ns; });
  std::fprintf(stderr, "\nkernel_timeline: %zu kernel launches\n", records.size());
  std::fprintf(stderr, "%-60s %9s %11s %10s %12s\n", "kernel", "launches", "total ms", "mean us", "gap before us");
  for (const auto& [name, totals] : rows) {
    std::fprintf(stderr, "%-60.60s %9zu %11.3f %10.2f %12.2f\n", name.c_str(), totals.launches, totals.busy_ns * 1e-6,
                 totals.busy_ns * 1e-3 / static_cast<double>(totals.launches),
                 totals.gap_before_ns * 1e-3 / static_cast<double>(totals.launches));
  }
  const double span_ns = static_cast<double>(busy_until - records.front().start_ns);
  std::fprintf(stderr, "span %.3f ms: kernels running %.3f ms, GPU idle %.3f ms\n", span_ns * 1e-6, busy_ns * 1e-6,
               (span_ns - busy_ns) * 1e-6);
}

void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  std::fprintf(stderr, "kernel_timeline: %s failed: %s\n", what, message ? message : "unknown error");
}

}  // namespace

extern "C" int InitializeInjection() {
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)");
  if (const char* api = std::getenv("KERNEL_TIMELINE_API"); api && std::strcmp(api, "0") != 0) {
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(RUNTIME)");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(MEMCPY)");
  }
  // report() runs after the CUDA runtime's own exit handlers (it is registered before them), when the
  // final flush no longer delivers: buffers flushed as the program runs lose at most the last 20 ms.
  check(cuptiActivityFlushPeriod(20), "cuptiActivityFlushPeriod");
  std::atexit(report);
  return 1;
}
