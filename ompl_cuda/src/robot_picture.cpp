// write_robot_png (robot_picture.h): the camera is framed on the robot's spheres over the whole path
// and the scene near them; the scene, the cloud and the first and last states go into one z-buffer,
// the ghosts into a second one laid over it see-through, the tip's line last; then the supersampled
// image is averaged down and written with libpng.
#include "ompl_cuda/robot_picture.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "linalg_cuda/errors.h"
#include "picture_raster.h"

namespace ompl_cuda {
namespace {

using picture::Raster;
using picture::Rgb;
using picture::Vec3;

const Rgb kBackground = {0.965f, 0.965f, 0.975f};
const Rgb kStart = {0.30f, 0.72f, 0.36f};
const Rgb kGoal = {0.25f, 0.45f, 0.88f};
const Rgb kTip = {0.95f, 0.45f, 0.05f};
const Rgb kMarkerRim = {1.0f, 1.0f, 1.0f};
const Rgb kCloud = {0.50f, 0.46f, 0.56f};
// Muted, warm colours for the scene's objects, so that the robot's green and blue stand out.
const Rgb kScene[] = {{0.80f, 0.68f, 0.52f}, {0.66f, 0.66f, 0.69f}, {0.80f, 0.57f, 0.50f},
                      {0.86f, 0.80f, 0.60f}, {0.68f, 0.60f, 0.68f}, {0.70f, 0.58f, 0.46f}};
constexpr int kStartId = 1 << 24, kGoalId = kStartId + 1, kCloudId = kStartId + 2, kGhostId = kStartId + 3;

Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 scale(const Vec3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 normalized(const Vec3& a) { return scale(a, 1.0 / std::sqrt(dot(a, a))); }
Vec3 rotate(const Transform& t, const Vec3& p) {
  return {t.rotation[0] * p[0] + t.rotation[1] * p[1] + t.rotation[2] * p[2],
          t.rotation[3] * p[0] + t.rotation[4] * p[1] + t.rotation[5] * p[2],
          t.rotation[6] * p[0] + t.rotation[7] * p[1] + t.rotation[8] * p[2]};
}
Vec3 place(const Transform& t, const Vec3& p) { return add(rotate(t, p), {t.translation[0], t.translation[1], t.translation[2]}); }
Rgb mix(const Rgb& a, const Rgb& b, float t) {
  return {a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t};
}

struct Box {
  Vec3 lo = {1e300, 1e300, 1e300}, hi = {-1e300, -1e300, -1e300};
  bool empty() const { return lo[0] > hi[0]; }
  void add(const Vec3& p, double r = 0) {
    for (int i = 0; i < 3; ++i) lo[i] = std::min(lo[i], p[i] - r), hi[i] = std::max(hi[i], p[i] + r);
  }
};

// The axis-aligned bound of a primitive in the scene frame.
Box bound(const Primitive& p) {
  Box box;
  Vec3 half;
  if (p.kind == Primitive::Kind::Box) half = {p.size[0] / 2, p.size[1] / 2, p.size[2] / 2};
  else if (p.kind == Primitive::Kind::Sphere) half = {p.size[0], p.size[0], p.size[0]};
  else half = {p.size[0], p.size[0], p.size[1] / 2 + (p.kind == Primitive::Kind::Capsule ? p.size[0] : 0)};
  for (int corner = 0; corner < 8; ++corner)
    box.add(place(p.pose, {corner & 1 ? half[0] : -half[0], corner & 2 ? half[1] : -half[1], corner & 4 ? half[2] : -half[2]}));
  return box;
}

// World to camera: x right, y up, z forward.
struct Camera {
  Vec3 eye, right, up, forward;
  Vec3 view(const Vec3& p) const {
    const Vec3 d = sub(p, eye);
    return {dot(d, right), dot(d, up), dot(d, forward)};
  }
  Vec3 view_direction(const Vec3& n) const { return {dot(n, right), dot(n, up), dot(n, forward)}; }
};

// A point the camera must see, with the radius around it.
struct Mark {
  Vec3 p;
  double r;
};

// Looks at the marks from `direction` (towards the eye), centred on their projection and as near as
// keeps them inside 90% of the frame.
Camera frame(const std::vector<Mark>& marks, const Vec3& direction, double tan_y, double aspect) {
  Camera camera;
  camera.forward = scale(normalized(direction), -1);
  Vec3 side = cross(camera.forward, {0, 0, 1});
  if (dot(side, side) < 1e-12) side = cross(camera.forward, {0, 1, 0});  // looking straight down or up
  camera.right = normalized(side);
  camera.up = cross(camera.right, camera.forward);
  const double tan_x = tan_y * aspect, fill = 0.9;
  Box box;
  for (const Mark& m : marks) box.add(m.p, m.r);
  Vec3 target = scale(add(box.lo, box.hi), 0.5);
  double distance = 1;
  for (int pass = 0; pass < 4; ++pass) {
    distance = 1e-3;
    for (const Mark& m : marks) {
      const Vec3 o = sub(m.p, target);
      const double z = dot(o, camera.forward);
      distance = std::max({distance, (std::abs(dot(o, camera.right)) + m.r) / (tan_x * fill) - z,
                           (std::abs(dot(o, camera.up)) + m.r) / (tan_y * fill) - z});
    }
    double u0 = 1e300, u1 = -1e300, v0 = 1e300, v1 = -1e300;
    for (const Mark& m : marks) {
      const Vec3 o = sub(m.p, target);
      const double z = distance + dot(o, camera.forward), u = dot(o, camera.right) / z, v = dot(o, camera.up) / z;
      u0 = std::min(u0, u - m.r / z), u1 = std::max(u1, u + m.r / z), v0 = std::min(v0, v - m.r / z), v1 = std::max(v1, v + m.r / z);
    }
    target = add(target, add(scale(camera.right, (u0 + u1) / 2 * distance), scale(camera.up, (v0 + v1) / 2 * distance)));
  }
  camera.eye = sub(target, scale(camera.forward, distance));
  return camera;
}

void draw_box(Raster* raster, const Camera& camera, const Primitive& p, const Rgb& colour, int id) {
  const double h[3] = {p.size[0] / 2, p.size[1] / 2, p.size[2] / 2};
  for (int axis = 0; axis < 3; ++axis)
    for (const double sign : {-1.0, 1.0}) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      Vec3 corner[4];
      for (int k = 0; k < 4; ++k) {
        Vec3 local;
        local[axis] = sign * h[axis];
        local[u] = (k == 1 || k == 2 ? 1 : -1) * h[u];
        local[v] = (k >= 2 ? 1 : -1) * h[v];
        corner[k] = camera.view(place(p.pose, local));
      }
      Vec3 normal = {0, 0, 0};
      normal[axis] = sign;
      const Vec3 n = camera.view_direction(rotate(p.pose, normal));
      raster->triangle({corner[0], corner[1], corner[2]}, {n, n, n}, colour, id);
      raster->triangle({corner[0], corner[2], corner[3]}, {n, n, n}, colour, id);
    }
}

// A cylinder's side and, unless it is a capsule's, its caps; a capsule's hemispheres are spheres.
void draw_cylinder(Raster* raster, const Camera& camera, const Primitive& p, const Rgb& colour, int id) {
  const int segments = 48;
  const double r = p.size[0], h = p.size[1] / 2;
  const bool capsule = p.kind == Primitive::Kind::Capsule;
  const Vec3 axis = camera.view_direction(rotate(p.pose, {0, 0, 1}));
  const Vec3 top = camera.view(place(p.pose, {0, 0, h})), bottom = camera.view(place(p.pose, {0, 0, -h}));
  for (int k = 0; k < segments; ++k) {
    const double a0 = 2 * M_PI * k / segments, a1 = 2 * M_PI * (k + 1) / segments;
    const Vec3 n0 = camera.view_direction(rotate(p.pose, {std::cos(a0), std::sin(a0), 0}));
    const Vec3 n1 = camera.view_direction(rotate(p.pose, {std::cos(a1), std::sin(a1), 0}));
    const Vec3 b0 = camera.view(place(p.pose, {r * std::cos(a0), r * std::sin(a0), -h}));
    const Vec3 b1 = camera.view(place(p.pose, {r * std::cos(a1), r * std::sin(a1), -h}));
    const Vec3 t0 = camera.view(place(p.pose, {r * std::cos(a0), r * std::sin(a0), h}));
    const Vec3 t1 = camera.view(place(p.pose, {r * std::cos(a1), r * std::sin(a1), h}));
    raster->triangle({b0, b1, t1}, {n0, n1, n1}, colour, id);
    raster->triangle({b0, t1, t0}, {n0, n1, n0}, colour, id);
    if (!capsule) {
      raster->triangle({top, t0, t1}, {axis, axis, axis}, colour, id);
      raster->triangle({bottom, b1, b0}, {axis, axis, axis}, colour, id);
    }
  }
  if (capsule) {
    raster->sphere(top, r, colour, id);
    raster->sphere(bottom, r, colour, id);
  }
}

void draw_scene(Raster* raster, const Camera& camera, const Scene& scene, double pixel_scale) {
  int id = 0;
  for (std::size_t o = 0; o < scene.objects().size(); ++o) {
    const Rgb& colour = kScene[o % (sizeof kScene / sizeof kScene[0])];
    for (const Primitive& p : scene.objects()[o].primitives) {
      if (p.kind == Primitive::Kind::Box) draw_box(raster, camera, p, colour, id);
      else if (p.kind == Primitive::Kind::Sphere)
        raster->sphere(camera.view({p.pose.translation[0], p.pose.translation[1], p.pose.translation[2]}), p.size[0], colour, id);
      else draw_cylinder(raster, camera, p, colour, id);
      ++id;
    }
    for (const SceneMesh& mesh : scene.objects()[o].meshes) {
      for (std::size_t t = 0; t < mesh.num_triangles(); ++t) {
        std::array<Vec3, 3> corner;
        for (int k = 0; k < 3; ++k) {
          const double* v = &mesh.vertices[3 * static_cast<std::size_t>(mesh.triangles[3 * t + k])];
          corner[k] = camera.view(place(mesh.pose, {v[0], v[1], v[2]}));
        }
        const Vec3 n = cross(sub(corner[1], corner[0]), sub(corner[2], corner[0]));
        raster->triangle(corner, {n, n, n}, colour, id);
      }
      ++id;
    }
  }
  const std::vector<float>& cloud = scene.point_cloud();
  const double radius = scene.field_resolution() / 2;
  for (std::size_t k = 0; k + 2 < cloud.size(); k += 3)
    raster->splat(camera.view({cloud[k], cloud[k + 1], cloud[k + 2]}), radius, 1.5 * pixel_scale, kCloud, kCloudId);
}

void draw_robot(Raster* raster, const Camera& camera, const std::vector<Sphere>& spheres, const Rgb& colour, int id) {
  for (const Sphere& s : spheres) raster->sphere(camera.view({s.center[0], s.center[1], s.center[2]}), s.radius, colour, id);
}

// The links whose origins the tip's line follows: the named one, or those deepest in the tree.
std::vector<int> tip_links(const RobotModel& model, const std::string& name) {
  if (!name.empty()) {
    const int link = model.link_index(name);
    if (link < 0) throw linalg_cuda::InvalidArgument("write_robot_png: the robot has no link '" + name + "'");
    return {link};
  }
  std::vector<int> depth(model.links().size(), 0), deepest;
  for (std::size_t l = 0; l < model.links().size(); ++l) {
    const int joint = model.links()[l].parent_joint;
    if (joint >= 0) depth[l] = depth[model.joints()[joint].parent_link] + 1;  // parents come first
  }
  const int most = depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
  for (std::size_t l = 0; l < depth.size(); ++l)
    if (depth[l] == most) deepest.push_back(static_cast<int>(l));
  return deepest;
}

// libpng reports errors by longjmp: write_rows holds only trivially destructible locals, and the
// caller throws once the jump has landed, never through libpng's C frames.
struct PngError {
  char message[256];
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* error = static_cast<PngError*>(png_get_error_ptr(png));
  std::snprintf(error->message, sizeof error->message, "%s", message != nullptr ? message : "libpng error");
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

bool write_rows(std::FILE* file, const std::uint8_t* rgb, int width, int height, const char* title, PngError* error) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error, on_png_error, on_png_warning);
  if (png == nullptr) return std::snprintf(error->message, sizeof error->message, "png_create_write_struct failed"), false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return std::snprintf(error->message, sizeof error->message, "png_create_info_struct failed"), false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 9);
  png_text text;
  std::memset(&text, 0, sizeof text);
  if (title[0] != '\0') {
    text.compression = PNG_TEXT_COMPRESSION_NONE;
    text.key = const_cast<char*>("Title");
    text.text = const_cast<char*>(title);
    png_set_text(png, info, &text, 1);
  }
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) png_write_row(png, rgb + static_cast<std::size_t>(y) * width * 3);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

void check_options(const RobotPictureOptions& o) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw linalg_cuda::InvalidArgument("write_robot_png: " + what);
  };
  require(o.width >= 16 && o.width <= 8192 && o.height >= 16 && o.height <= 8192,
          "width and height must be 16 .. 8192 pixels, not " + std::to_string(o.width) + " x " + std::to_string(o.height));
  require(o.supersampling >= 1 && o.supersampling <= 4, "supersampling must be 1 .. 4, not " + std::to_string(o.supersampling));
  require(o.ghosts >= 0 && o.ghosts <= 1000, "ghosts must be 0 .. 1000, not " + std::to_string(o.ghosts));
  require(std::isfinite(o.azimuth_deg) && std::isfinite(o.elevation_deg) && std::abs(o.elevation_deg) <= 90,
          "azimuth must be finite and elevation within -90 .. 90 degrees");
  require(o.field_of_view_deg >= 1 && o.field_of_view_deg <= 150, "field_of_view_deg must be 1 .. 150");
}

}  // namespace

void write_robot_png(const std::string& file, const RobotCollisionModel& robot, const Scene& scene, const Transform& base,
                     const std::vector<std::vector<double>>& states, const RobotPictureOptions& options) {
  check_options(options);
  const RobotModel& model = robot.model();
  for (std::size_t f = 0; f < states.size(); ++f) {
    if (static_cast<int>(states[f].size()) != model.num_variables())
      throw linalg_cuda::InvalidArgument("write_robot_png: state " + std::to_string(f) + " has " + std::to_string(states[f].size()) +
                                         " values, the robot " + std::to_string(model.num_variables()));
    for (const double v : states[f])
      if (!std::isfinite(v)) throw linalg_cuda::InvalidArgument("write_robot_png: state " + std::to_string(f) + " has a value that is not finite");
  }
  const std::vector<int> tips = tip_links(model, options.tip_link);

  // The states drawn, in path order: the first, the ghosts, the last.
  const std::size_t n = states.size();
  std::vector<std::size_t> shown;
  for (int g = 0; n > 0 && g <= options.ghosts + 1; ++g) {
    const std::size_t k = static_cast<std::size_t>(std::lround(static_cast<double>(g) * (n - 1) / (options.ghosts + 1)));
    if (shown.empty() || k != shown.back()) shown.push_back(k);
  }
  std::vector<std::vector<Sphere>> drawn;
  std::vector<Vec3> tip_path;
  std::vector<Mark> marks;
  Box reach;
  std::vector<Sphere> spheres;
  std::vector<Transform> poses;
  for (std::size_t f = 0; f < n; ++f) {
    robot.world_spheres(states[f].data(), base, &spheres);
    for (const Sphere& s : spheres) {
      marks.push_back({{s.center[0], s.center[1], s.center[2]}, s.radius});
      reach.add(marks.back().p, s.radius);
    }
    if (std::binary_search(shown.begin(), shown.end(), f)) drawn.push_back(spheres);
    model.link_poses(states[f].data(), &poses);
    Vec3 tip = {0, 0, 0};
    for (const int l : tips) tip = add(tip, place(base, {poses[l].translation[0], poses[l].translation[1], poses[l].translation[2]}));
    tip_path.push_back(scale(tip, 1.0 / tips.size()));
  }
  // The camera sees the robot over the whole path and the scene within 50 cm of it, so that a floor
  // or a room does not shrink the robot to a few pixels.
  if (reach.empty()) reach.add({base.translation[0], base.translation[1], base.translation[2]}, 0.5);
  auto near_reach = [&](const Vec3& p) {
    Vec3 q;
    for (int i = 0; i < 3; ++i) q[i] = std::clamp(p[i], reach.lo[i] - 0.5, reach.hi[i] + 0.5);
    return q;
  };
  for (const SceneObject& object : scene.objects()) {
    for (const Primitive& p : object.primitives) {
      const Box b = bound(p);
      for (int corner = 0; corner < 8; ++corner)
        marks.push_back({near_reach({corner & 1 ? b.hi[0] : b.lo[0], corner & 2 ? b.hi[1] : b.lo[1], corner & 4 ? b.hi[2] : b.lo[2]}), 0});
    }
    for (const SceneMesh& mesh : object.meshes)
      for (std::size_t v = 0; v + 2 < mesh.vertices.size(); v += 3)
        marks.push_back({near_reach(place(mesh.pose, {mesh.vertices[v], mesh.vertices[v + 1], mesh.vertices[v + 2]})), 0});
  }
  if (n == 0) marks.push_back({scale(add(reach.lo, reach.hi), 0.5), 0.5});

  const double deg = M_PI / 180, az = options.azimuth_deg * deg, el = options.elevation_deg * deg;
  const Vec3 direction = rotate(base, {std::cos(az) * std::cos(el), std::sin(az) * std::cos(el), std::sin(el)});
  const double tan_y = std::tan(options.field_of_view_deg * deg / 2);
  const Camera camera = frame(marks, direction, tan_y, static_cast<double>(options.width) / options.height);
  const int ss = options.supersampling;
  picture::Lens lens;
  lens.width = options.width * ss;
  lens.height = options.height * ss;
  lens.focal = lens.height / 2.0 / tan_y;
  lens.near = 1e-3;

  Raster raster(lens, kBackground);
  draw_scene(&raster, camera, scene, ss);
  if (n > 0) {
    draw_robot(&raster, camera, drawn.front(), kStart, kStartId);
    draw_robot(&raster, camera, drawn.back(), kGoal, kGoalId);
  }
  raster.outline(0.55f, 0.04);
  if (drawn.size() > 2) {
    Raster ghosts(lens, kBackground);
    const std::size_t count = drawn.size() - 2;
    for (std::size_t g = 1; g <= count; ++g)
      draw_robot(&ghosts, camera, drawn[g], mix(kStart, kGoal, static_cast<float>(g) / (count + 1)), kGhostId + static_cast<int>(g));
    ghosts.outline(0.7f, 0.04);
    raster.blend_over(ghosts, 0.45f);
  }
  std::vector<Vec3> tip_view;
  for (const Vec3& p : tip_path) tip_view.push_back(camera.view(p));
  raster.polyline(tip_view, 3.0 * ss, kTip, 1.0f, 0.35f);
  if (!tip_view.empty()) {
    raster.marker(tip_view.front(), 14.0 * ss, kMarkerRim, kStart);
    raster.marker(tip_view.back(), 14.0 * ss, kMarkerRim, kGoal);
  }
  const std::vector<std::uint8_t> rgb = raster.downsample(ss);

  std::FILE* out = std::fopen(file.c_str(), "wb");
  if (out == nullptr) throw linalg_cuda::Error("write_robot_png: cannot write '" + file + "': " + std::strerror(errno));
  PngError error{};
  const bool written = write_rows(out, rgb.data(), options.width, options.height, options.title.c_str(), &error);
  const bool closed = std::fclose(out) == 0;
  if (!written) throw linalg_cuda::Error("write_robot_png: libpng error (" + std::string(error.message) + ") writing '" + file + "'");
  if (!closed) throw linalg_cuda::Error("write_robot_png: error writing '" + file + "': " + std::strerror(errno));
}

}  // namespace ompl_cuda
