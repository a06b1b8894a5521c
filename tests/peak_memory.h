#pragma once
// The peak memory a call takes, for tests of what reading a file costs.
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace test_support {

// How much the process's peak resident memory grows while `work` runs, in bytes, or -1 where it
// cannot be measured (or `work` throws). `work` runs in a child process (fork), which first hands the
// free memory of its heap back to the system (malloc_trim; else `work` would reuse pages that earlier
// tests left resident, and seem to take nothing) and resets its peak to what it holds then
// (/proc/self/clear_refs); the child reports the growth through a pipe. `work` must not start threads
// or touch the GPU.
inline long long peak_memory_growth(const std::function<void()>& work) {
  int channel[2];
  if (pipe(channel) != 0) return -1;
  const pid_t child = fork();
  if (child < 0) {
    close(channel[0]);
    close(channel[1]);
    return -1;
  }
  if (child == 0) {
    close(channel[0]);
    long long growth = -1;
    malloc_trim(0);
    const int peak = open("/proc/self/clear_refs", O_WRONLY);
    if (peak >= 0 && write(peak, "5", 1) == 1) {
      rusage before{}, after{};
      getrusage(RUSAGE_SELF, &before);
      try {
        work();
        getrusage(RUSAGE_SELF, &after);
        growth = 1024LL * (after.ru_maxrss - before.ru_maxrss);  // ru_maxrss is in KiB on Linux
      } catch (...) {
      }
    }
    if (peak >= 0) close(peak);
    const bool written = write(channel[1], &growth, sizeof growth) == static_cast<ssize_t>(sizeof growth);
    _exit(written ? 0 : 1);
  }
  close(channel[1]);
  long long growth = -1;
  if (read(channel[0], &growth, sizeof growth) != static_cast<ssize_t>(sizeof growth)) growth = -1;
  close(channel[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return growth;
}

}  // namespace test_support
