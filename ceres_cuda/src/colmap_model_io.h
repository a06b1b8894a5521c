#pragma once
// What ColmapModel's text and binary readers and writers share: the first record at fault in a model,
// which validate() names by id and the readers by its file and its line or byte offset; the
// quaternion as COLMAP reads it; and an output file whose every failure is an error.
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ceres_cuda/colmap_model.h"

namespace ceres_cuda::detail {

struct ColmapProblem {
  enum Record { Camera = 0, Image = 1, Point3D = 2 } record;
  std::uint64_t id;
  std::string message;  // says what is wrong, naming the record
};

// The first disagreement within the model (ColmapModel::validate lists them), none when it holds.
std::optional<ColmapProblem> first_colmap_problem(const ColmapModel& model);

// Where a reader found each record, per ColmapProblem::Record: id -> line or byte offset in files[record].
struct ColmapRecordPlaces {
  std::string files[3];
  std::map<std::uint64_t, std::uint64_t> places[3];
};

// Throws the model's first problem, if any, as make_error(file, place, message) of its record.
template <typename MakeError>
void throw_first_colmap_problem(const ColmapModel& model, const ColmapRecordPlaces& read, const MakeError& make_error) {
  if (const auto problem = first_colmap_problem(model))
    throw make_error(read.files[problem->record], read.places[problem->record].at(problem->id), problem->message);
}

// qvec scaled to unit length, as COLMAP normalises what it reads (left as it is when unit to
// rounding); false when it has no direction (all zero, or too small or large to scale).
bool normalize_qvec(std::array<double, 4>* qvec);

// A file written with stdio ("w" or "wb"): failing to open it, or any write (a full disk included),
// is a linalg_cuda::Error naming it, thrown by the constructor or close().
class ColmapOutputFile {
 public:
  ColmapOutputFile(const std::string& path, const char* mode);
  std::FILE* get() const { return file_.get(); }
  template <typename T>
  void put(const T& value) {
    std::fwrite(&value, sizeof value, 1, file_.get());
  }
  void close();

 private:
  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

}  // namespace ceres_cuda::detail
