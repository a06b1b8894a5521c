// ColmapModel's validation: the first disagreement between its cameras, images and 3-D points, the
// one a walk through the records in id order meets first (cameras, then images, then the points'
// tracks, then the image points no track lists). Millions of observations pass through here, so the
// tracks are checked on all threads, and messages are built only for the problem reported:
//  - pass 1, each point on its own: its track's elements are checked one by one up to the first bad
//    one, and each good element claims its image point with an atomic minimum of its position in
//    the walk (points in id order, elements in track order);
//  - pass 2: an element lists its image point "twice" when a smaller position claimed it; the first
//    point with such an element or a bad one is the walk's first problem.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ceres_cuda/colmap_model.h"
#include "colmap_model_io.h"

namespace ceres_cuda::detail {
namespace {

using Record = ColmapProblem::Record;
constexpr std::uint64_t kUnclaimed = std::numeric_limits<std::uint64_t>::max();

std::string point_name(std::uint64_t id) { return "3-D point " + std::to_string(id); }

// What is wrong with a track element, in the order the checks run.
enum class ElementCheck { Good, NoImage, NoImagePoint, NotObserving };

// The images in id order, with where each one's image points start in one flat array.
struct ImageTable {
  std::vector<std::uint32_t> ids;
  std::vector<const ColmapImage*> images;
  std::vector<std::size_t> first_point;  // images + 1

  // The image's index, or -1.
  long find(std::uint32_t id) const {
    const auto at = std::lower_bound(ids.begin(), ids.end(), id);
    return at != ids.end() && *at == id ? at - ids.begin() : -1;
  }
};

ElementCheck check_element(const ImageTable& images, std::uint64_t point_id, const ColmapTrackElement& e,
                           std::size_t* image_point) {
  const long i = images.find(e.image_id);
  if (i < 0) return ElementCheck::NoImage;
  const ColmapImage& image = *images.images[i];
  if (e.point2D_idx >= image.points2D.size()) return ElementCheck::NoImagePoint;
  if (image.points2D[e.point2D_idx].point3D_id != point_id) return ElementCheck::NotObserving;
  *image_point = images.first_point[i] + e.point2D_idx;
  return ElementCheck::Good;
}

std::string element_message(const ImageTable& images, std::uint64_t point_id, const ColmapTrackElement& e,
                            ElementCheck check) {
  const std::string where = point_name(point_id) + "'s track names image " + std::to_string(e.image_id);
  if (check == ElementCheck::NoImage) return where + ", which the model does not have";
  const std::string element = where + "'s point " + std::to_string(e.point2D_idx);
  if (check == ElementCheck::NoImagePoint)
    return element + ", which is not there (the image has " +
           std::to_string(images.images[images.find(e.image_id)]->points2D.size()) + ")";
  if (check == ElementCheck::NotObserving) return element + ", which does not observe it";
  return element + " twice";
}

void claim(std::atomic<std::uint64_t>* slot, std::uint64_t position) {
  std::uint64_t held = slot->load(std::memory_order_relaxed);
  while (position < held && !slot->compare_exchange_weak(held, position, std::memory_order_relaxed)) {
  }
}

}  // namespace

std::optional<ColmapProblem> first_colmap_problem(const ColmapModel& model) {
  for (const auto& [id, camera] : model.cameras) {
    ColmapCameraModel known;
    if (!colmap_camera_model_from_id(static_cast<int>(camera.model), &known))
      return ColmapProblem{Record::Camera, id, "camera " + std::to_string(id) + " has an unknown model"};
    const int expected = colmap_camera_model_num_params(camera.model);
    if (static_cast<int>(camera.params.size()) != expected)
      return ColmapProblem{Record::Camera, id,
                           "camera " + std::to_string(id) + " (" + colmap_camera_model_name(camera.model) + ") has " +
                               std::to_string(camera.params.size()) + " parameters, its model " +
                               std::to_string(expected)};
  }
  ImageTable images;
  images.first_point.push_back(0);
  for (const auto& [id, image] : model.images) {
    if (model.cameras.count(image.camera_id) == 0)
      return ColmapProblem{Record::Image, id,
                           "image " + std::to_string(id) + " names camera " + std::to_string(image.camera_id) +
                               ", which the model does not have"};
    images.ids.push_back(id);
    images.images.push_back(&image);
    images.first_point.push_back(images.first_point.back() + image.points2D.size());
  }

  // The points in id order, and each one's first position in the walk.
  std::vector<const std::pair<const std::uint64_t, ColmapPoint3D>*> points;
  std::vector<std::uint64_t> first_position{0};
  points.reserve(model.points3D.size());
  for (const auto& entry : model.points3D) {
    points.push_back(&entry);
    first_position.push_back(first_position.back() + entry.second.track.size());
  }
  const long num_points = static_cast<long>(points.size());
  std::vector<std::atomic<std::uint64_t>> claimed(images.first_point.back());
#pragma omp parallel for schedule(static)
  for (long k = 0; k < static_cast<long>(claimed.size()); ++k) claimed[k].store(kUnclaimed, std::memory_order_relaxed);

  std::vector<std::size_t> bad_element(points.size());  // the first bad element, or the track's size
#pragma omp parallel for schedule(dynamic, 1024)
  for (long p = 0; p < num_points; ++p) {
    const auto& [id, point] = *points[p];
    std::size_t k = 0;
    for (; k < point.track.size(); ++k) {
      std::size_t image_point = 0;
      if (check_element(images, id, point.track[k], &image_point) != ElementCheck::Good) break;
      claim(&claimed[image_point], first_position[p] + k);
    }
    bad_element[p] = k;
  }

  // The first point whose track has an element claimed earlier in the walk, or a bad one.
  long first_bad = num_points;
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : first_bad)
  for (long p = 0; p < num_points; ++p) {
    const auto& [id, point] = *points[p];
    bool bad = bad_element[p] < point.track.size();
    for (std::size_t k = 0; k < bad_element[p] && !bad; ++k) {
      std::size_t image_point = 0;
      check_element(images, id, point.track[k], &image_point);
      bad = claimed[image_point].load(std::memory_order_relaxed) < first_position[p] + k;
    }
    if (bad) first_bad = std::min(first_bad, p);
  }
  if (first_bad < num_points) {
    const auto& [id, point] = *points[first_bad];
    for (std::size_t k = 0;; ++k) {
      const ColmapTrackElement& e = point.track[k];
      std::size_t image_point = 0;
      const ElementCheck check = check_element(images, id, e, &image_point);
      if (check != ElementCheck::Good) return ColmapProblem{Record::Point3D, id, element_message(images, id, e, check)};
      if (claimed[image_point].load(std::memory_order_relaxed) < first_position[first_bad] + k)
        return ColmapProblem{Record::Point3D, id, element_message(images, id, e, ElementCheck::Good)};
    }
  }

  // An observing image point no track lists: its 3-D point is missing, or the track leaves it out.
  const long num_images = static_cast<long>(images.ids.size());
  long first_unlisted = num_images;
#pragma omp parallel for schedule(dynamic, 16) reduction(min : first_unlisted)
  for (long i = 0; i < num_images; ++i) {
    const std::vector<ColmapImagePoint>& observed = images.images[i]->points2D;
    for (std::size_t k = 0; k < observed.size(); ++k)
      if (observed[k].point3D_id != kColmapNoPoint3D &&
          claimed[images.first_point[i] + k].load(std::memory_order_relaxed) == kUnclaimed) {
        first_unlisted = std::min(first_unlisted, i);
        break;
      }
  }
  if (first_unlisted < num_images) {
    const std::uint32_t id = images.ids[first_unlisted];
    const std::vector<ColmapImagePoint>& observed = images.images[first_unlisted]->points2D;
    for (std::size_t k = 0;; ++k) {
      const std::uint64_t p = observed[k].point3D_id;
      if (p == kColmapNoPoint3D || claimed[images.first_point[first_unlisted] + k].load() != kUnclaimed) continue;
      return ColmapProblem{Record::Image, id,
                           "image " + std::to_string(id) + "'s point " + std::to_string(k) + " observes " +
                               point_name(p) +
                               (model.points3D.count(p) ? ", whose track does not list it"
                                                        : ", which the model does not have")};
    }
  }
  return std::nullopt;
}

}  // namespace ceres_cuda::detail
