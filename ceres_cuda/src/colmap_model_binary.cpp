// ColmapModel's binary form, as COLMAP 3.8's Reconstruction::ReadBinary and WriteBinary, little-endian:
//   cameras.bin   uint64 count; per camera: uint32 id, int32 model id, uint64 width, height, doubles
//   images.bin    uint64 count; per image: uint32 id, 4 doubles qvec, 3 doubles tvec, uint32 camera id,
//                 the name and a NUL, uint64 point count, per point: double x, y, uint64 point3D id
//   points3D.bin  uint64 count; per point: uint64 id, 3 doubles, 3 uint8 colour, double error,
//                 uint64 track length, per element: uint32 image id, uint32 point index
// Every count is checked against the bytes left in the file before memory is reserved for it, and a
// file must end where its last record does.
//
// Both directions run on all cores. A reader reads its file whole, finds where each record starts in
// one sequential pass that only reads counts and skips, makes the map's nodes in id order, then parses
// the records into them in parallel. The error reported is the one a sequential read meets first: that
// of the first bad record in file order. A writer sizes each record, places it by a prefix sum and
// fills large batches of records in parallel.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "binary_reader.h"
#include "ceres_cuda/colmap_model.h"
#include "colmap_model_io.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "parallel_sort.h"

namespace ceres_cuda {
namespace {

using detail::BinaryCursor;
using detail::BinaryFile;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "COLMAP's binary models are little-endian, as this host");
// Image points and track elements are laid out in memory as in the file, so they move as whole arrays.
static_assert(sizeof(ColmapImagePoint) == 24 && std::is_trivially_copyable_v<ColmapImagePoint>);
static_assert(sizeof(ColmapTrackElement) == 8 && std::is_trivially_copyable_v<ColmapTrackElement>);
static_assert(sizeof(ColmapPoint3D::rgb) == 3);

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// The next values->size() values, as the file holds them.
template <typename T>
void read_array(BinaryCursor& in, std::vector<T>* values, const char* what) {
  const char* bytes = in.take(sizeof(T) * values->size(), what);
  if (!values->empty()) std::memcpy(values->data(), bytes, sizeof(T) * values->size());
}

// Each record parser reads one record at the cursor, as the sequential reader did, value by value in
// file order, so its first error is the one that reader met.
void parse_camera(BinaryCursor& in, ColmapCamera* camera) {
  const std::uint64_t at = in.offset();
  const auto id = in.read<std::uint32_t>("a camera id");
  const auto model_id = in.read<std::int32_t>("a camera model id");
  if (!colmap_camera_model_from_id(model_id, &camera->model))
    in.fail_at(at, "camera " + std::to_string(id) + ": unknown camera model id " + std::to_string(model_id));
  camera->width = in.read<std::uint64_t>("a width");
  camera->height = in.read<std::uint64_t>("a height");
  camera->params.resize(static_cast<std::size_t>(colmap_camera_model_num_params(camera->model)));
  for (double& p : camera->params) p = in.finite("a camera parameter");
}

void parse_image(BinaryCursor& in, ColmapImage* image) {
  const std::uint64_t at = in.offset();
  const auto id = in.read<std::uint32_t>("an image id");
  for (double& q : image->qvec) q = in.finite("a quaternion value");
  for (double& t : image->tvec) t = in.finite("a translation");
  if (!detail::normalize_qvec(&image->qvec))
    in.fail_at(at, "image " + std::to_string(id) + ": its quaternion has no length");
  image->camera_id = in.read<std::uint32_t>("a camera id");
  image->name = in.until_nul("the rest of the image's name and its NUL");
  const std::uint64_t points_at = in.offset() + 8;
  image->points2D.resize(in.count(24, "image points"));
  read_array(in, &image->points2D, "image points");
  // Checked after the copy, in file order, so the first non-finite coordinate is the one reported.
  for (std::size_t k = 0; k < image->points2D.size(); ++k) {
    const ColmapImagePoint& p = image->points2D[k];
    if (!std::isfinite(p.x)) in.fail_at(points_at + 24 * k, "an x coordinate is not a finite number");
    if (!std::isfinite(p.y)) in.fail_at(points_at + 24 * k + 8, "a y coordinate is not a finite number");
  }
}

void parse_point(BinaryCursor& in, ColmapPoint3D* point) {
  const std::uint64_t at = in.offset();
  const auto id = in.read<std::uint64_t>("a 3-D point id");
  if (id == kColmapNoPoint3D) in.fail_at(at, "3-D point id " + std::to_string(id) + " is COLMAP's \"none\"");
  for (double& x : point->xyz) x = in.finite("a coordinate");
  std::memcpy(point->rgb.data(), in.take(3, "a colour"), 3);
  point->error = in.finite("an error");
  point->track.resize(in.count(8, "track elements"));
  read_array(in, &point->track, "track elements");
}

// Record skippers for the pass that finds where records start: they read only what sizes a record.
void skip_camera(BinaryCursor& in) {
  ColmapCamera camera;  // its size depends on its model; cameras are few
  parse_camera(in, &camera);
}

void skip_image(BinaryCursor& in) {
  in.take(4 + 7 * 8 + 4, "an image");
  in.until_nul("the rest of the image's name and its NUL");
  in.take(24 * in.count(24, "image points"), "image points");
}

void skip_point(BinaryCursor& in) {
  in.take(8 + 3 * 8 + 3 + 8, "a 3-D point");
  in.take(8 * in.count(8, "track elements"), "track elements");
}

// Runs work(i) for i in [0, n) on all cores. Returns the smallest i whose work threw and what it threw
// (n and null when none did): the failure a sequential loop would have stopped at. Work past a known
// failure is skipped.
template <typename Work>
std::pair<std::size_t, std::exception_ptr> first_failure(std::size_t n, int chunk, const Work& work) {
  std::atomic<std::size_t> first{n};
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, chunk)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    if (static_cast<std::size_t>(i) > first.load(std::memory_order_relaxed)) continue;
    try {
      work(static_cast<std::size_t>(i));
    } catch (...) {
#pragma omp critical(colmap_first_failure)
      if (static_cast<std::size_t>(i) < first.load()) {
        first = static_cast<std::size_t>(i);
        error = std::current_exception();
      }
    }
  }
  return {first.load(), error};
}

// Where a file's records start and their ids, in file order: the byte offset a problem found later
// (validate()'s) is reported at.
struct RecordPlaces {
  std::vector<std::uint64_t> starts, ids;
  std::uint64_t offset_of(std::uint64_t id) const {
    return starts[static_cast<std::size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin())];
  }
};

// What read_records needs to know of a file besides how to skip and parse its records.
struct RecordKind {
  const char* plural;
  std::uint64_t min_bytes;
  const char* noun;
  int chunk;  // records per parallel task: fewer where records are large
};

template <typename Id, typename Value, typename Skip, typename Parse>
void read_records(const std::string& path, const RecordKind& kind, const Skip& skip, const Parse& parse,
                  std::map<Id, Value>* records, RecordPlaces* places) {
  const BinaryFile file(path);
  BinaryCursor in(file);
  const std::uint64_t n = in.count(kind.min_bytes, kind.plural);
  // The record the pass cannot get past is the last to parse, and its parser says why (an earlier
  // value of it may be at fault first); `broken` is kept in case it does not.
  std::vector<std::uint64_t>& starts = places->starts;
  starts.reserve(static_cast<std::size_t>(n));
  std::exception_ptr broken;
  for (std::uint64_t i = 0; i < n && !broken; ++i) {
    starts.push_back(in.offset());
    try {
      skip(in);
    } catch (const linalg_cuda::ParseError&) {
      broken = std::current_exception();
    }
  }
  const std::size_t whole = starts.size() - (broken ? 1 : 0);

  // Ids in file order, and the records in id order, file order within an id (so a repeated id's first
  // repetition follows its first use). The map's nodes are made in id order, each added at its end,
  // which a map does in constant time: COLMAP's own files list 3-D points in no order. A repeated id
  // is an error by its record at the latest, and then no node is made.
  places->ids.resize(whole);
  std::vector<std::pair<Id, std::size_t>> by_id(whole);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(whole); ++i) {
    Id id;
    std::memcpy(&id, file.data() + starts[i], sizeof id);
    places->ids[i] = id;
    by_id[i] = {id, static_cast<std::size_t>(i)};
  }
  if (!std::is_sorted(by_id.begin(), by_id.end())) detail::parallel_sort(&by_id);
  std::size_t again = kNone;
  for (std::size_t k = 1; k < whole; ++k)
    if (by_id[k].first == by_id[k - 1].first) again = std::min(again, by_id[k].second);
  std::vector<Value*> value_of(starts.size(), nullptr);
  if (again == kNone) {
    // Each thread makes the nodes of a run of ids in a map of its own (allocating, the slow part, in
    // parallel); the nodes then move into the one map, which allocates nothing and keeps the pointers.
    const std::size_t parts =
        std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(omp_get_max_threads()), whole / 4096));
    std::vector<std::map<Id, Value>> part(parts);
    const std::exception_ptr no_memory = first_failure(parts, 1, [&](std::size_t p) {
      for (std::size_t k = whole * p / parts; k < whole * (p + 1) / parts; ++k) {
        const auto node = part[p].emplace_hint(part[p].end(), std::piecewise_construct,
                                               std::forward_as_tuple(by_id[k].first), std::tuple<>());
        value_of[by_id[k].second] = &node->second;
      }
    }).second;
    if (no_memory) std::rethrow_exception(no_memory);
    for (std::map<Id, Value>& nodes : part)
      while (!nodes.empty()) records->insert(records->end(), nodes.extract(nodes.begin()));
  }

  const std::size_t parsed = again == kNone ? starts.size() : again + 1;
  const auto [bad, error] = first_failure(parsed, kind.chunk, [&](std::size_t i) {
    BinaryCursor at(file, starts[i]);
    if (value_of[i]) {
      parse(at, value_of[i]);
    } else {
      Value scratch;
      parse(at, &scratch);
    }
  });
  // Within a record its values come before the check of its id, which needs the records before it.
  if (error && (again == kNone || bad <= again)) std::rethrow_exception(error);
  if (again != kNone)
    in.fail_at(starts[again], std::string(kind.noun) + " " + std::to_string(places->ids[again]) + " again");
  if (broken) std::rethrow_exception(broken);
  in.expect_end(kind.noun);
}

// Appends values to a record's place in the output buffer.
class ByteWriter {
 public:
  explicit ByteWriter(char* at) : at_(at) {}
  template <typename T>
  void put(const T& value) {
    bytes(&value, sizeof value);
  }
  void bytes(const void* data, std::size_t n) {
    if (n > 0) std::memcpy(at_, data, n);
    at_ += n;
  }

 private:
  char* at_;
};

// Writes records [0, n), record i being size_of(i) bytes that fill(i, ByteWriter) puts, in batches of
// about kBatchBytes filled on all cores, so the buffer stays bounded whatever the model's size.
template <typename SizeOf, typename Fill>
void write_records(detail::ColmapOutputFile* file, std::size_t n, const SizeOf& size_of, const Fill& fill) {
  constexpr std::uint64_t kBatchBytes = std::uint64_t(64) << 20;
  std::vector<std::uint64_t> offset(n + 1, 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) offset[i + 1] = size_of(static_cast<std::size_t>(i));
  for (std::size_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
  std::unique_ptr<char[]> buffer;
  std::uint64_t capacity = 0;
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin + 1;
    while (end < n && offset[end + 1] - offset[begin] <= kBatchBytes) ++end;
    const std::uint64_t bytes = offset[end] - offset[begin];
    if (bytes > capacity) {
      buffer.reset(new char[bytes]);
      capacity = bytes;
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t i = static_cast<std::int64_t>(begin); i < static_cast<std::int64_t>(end); ++i)
      fill(static_cast<std::size_t>(i), ByteWriter(buffer.get() + (offset[i] - offset[begin])));
    std::fwrite(buffer.get(), 1, bytes, file->get());  // a failure shows in close()
    begin = end;
  }
}

// The map's entries in its order, for access by index.
template <typename Map>
std::vector<const typename Map::value_type*> entries_of(const Map& map) {
  std::vector<const typename Map::value_type*> entries;
  entries.reserve(map.size());
  for (const auto& entry : map) entries.push_back(&entry);
  return entries;
}

}  // namespace

ColmapModel ColmapModel::read_binary(const std::string& folder) try {
  ColmapModel model;
  const std::string files[3] = {folder + "/cameras.bin", folder + "/images.bin", folder + "/points3D.bin"};
  RecordPlaces places[3];
  read_records(files[0], {"cameras", 24, "camera", 16}, skip_camera, parse_camera, &model.cameras, &places[0]);
  read_records(files[1], {"images", 4 + 7 * 8 + 4 + 1 + 8, "image", 1}, skip_image, parse_image, &model.images,
               &places[1]);
  model.image_file_order.assign(places[1].ids.begin(), places[1].ids.end());
  read_records(files[2], {"3-D points", 8 + 3 * 8 + 3 + 8 + 8, "3-D point", 256}, skip_point, parse_point,
               &model.points3D, &places[2]);
  if (const auto problem = detail::first_colmap_problem(model))
    throw linalg_cuda::ParseError::at_byte(files[problem->record], places[problem->record].offset_of(problem->id),
                                           problem->message);
  return model;
} catch (const linalg_cuda::Error&) {
  throw;
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(folder);
}

void ColmapModel::write_binary(const std::string& folder) const {
  for (const auto& [id, image] : images)
    if (image.name.find('\0') != std::string::npos)
      throw linalg_cuda::InvalidArgument("ColmapModel::write_binary: image " + std::to_string(id) +
                                         "'s name holds a NUL, which ends a name in the binary form");
  const auto camera_entries = entries_of(cameras);
  detail::ColmapOutputFile cameras_file(folder + "/cameras.bin", "wb");
  cameras_file.put(static_cast<std::uint64_t>(cameras.size()));
  write_records(
      &cameras_file, camera_entries.size(),
      [&](std::size_t i) { return 4 + 4 + 8 + 8 + 8 * camera_entries[i]->second.params.size(); },
      [&](std::size_t i, ByteWriter out) {
        const auto& [id, camera] = *camera_entries[i];
        out.put(id);
        out.put(static_cast<std::int32_t>(camera.model));
        out.put(camera.width);
        out.put(camera.height);
        out.bytes(camera.params.data(), 8 * camera.params.size());
      });
  cameras_file.close();

  const std::vector<std::uint32_t> image_order = registration_order();
  std::vector<const ColmapImage*> image_entries(image_order.size());
  for (std::size_t i = 0; i < image_order.size(); ++i) image_entries[i] = &images.at(image_order[i]);
  detail::ColmapOutputFile images_file(folder + "/images.bin", "wb");
  images_file.put(static_cast<std::uint64_t>(images.size()));
  write_records(
      &images_file, image_entries.size(),
      [&](std::size_t i) {
        return 4 + 7 * 8 + 4 + image_entries[i]->name.size() + 1 + 8 + 24 * image_entries[i]->points2D.size();
      },
      [&](std::size_t i, ByteWriter out) {
        const ColmapImage& image = *image_entries[i];
        out.put(image_order[i]);
        out.put(image.qvec);
        out.put(image.tvec);
        out.put(image.camera_id);
        out.bytes(image.name.c_str(), image.name.size() + 1);
        out.put(static_cast<std::uint64_t>(image.points2D.size()));
        out.bytes(image.points2D.data(), 24 * image.points2D.size());
      });
  images_file.close();

  const auto point_entries = entries_of(points3D);
  detail::ColmapOutputFile points_file(folder + "/points3D.bin", "wb");
  points_file.put(static_cast<std::uint64_t>(points3D.size()));
  write_records(
      &points_file, point_entries.size(),
      [&](std::size_t i) { return 8 + 3 * 8 + 3 + 8 + 8 + 8 * point_entries[i]->second.track.size(); },
      [&](std::size_t i, ByteWriter out) {
        const auto& [id, point] = *point_entries[i];
        out.put(id);
        out.put(point.xyz);
        out.put(point.rgb);
        out.put(point.error);
        out.put(static_cast<std::uint64_t>(point.track.size()));
        out.bytes(point.track.data(), 8 * point.track.size());
      });
  points_file.close();
}

}  // namespace ceres_cuda
