#pragma once
// A small z-buffer rasterizer for write_robot_png (robot_picture.h): shaded triangles, exact spheres
// (ray-cast per pixel inside their screen bound), point splats and thick 3-D lines, in the camera's
// frame, with Lambert shading from a light beside the camera. It is written here because no Debian
// rendering library fits a headless C++ build (OpenGL needs a display or EGL driver, and the others
// are whole engines).
#include <array>
#include <cstdint>
#include <vector>

namespace ompl_cuda {
namespace picture {

using Vec3 = std::array<double, 3>;
using Rgb = std::array<float, 3>;

// A pinhole camera: x right, y up, z forward (depth); pixels have y down.
struct Lens {
  int width = 0, height = 0;
  double focal = 1;    // pixels
  double near = 1e-3;  // metres; geometry closer than this is clipped
};

class Raster {
 public:
  Raster(const Lens& lens, const Rgb& background);

  const Lens& lens() const { return lens_; }
  // Triangles with per-vertex normals (camera frame, any length; flipped to face the camera).
  void triangle(const std::array<Vec3, 3>& p, const std::array<Vec3, 3>& n, const Rgb& colour, int id);
  void sphere(const Vec3& centre, double radius, const Rgb& colour, int id);
  // A disc of `radius` metres facing the camera, at least `min_pixels` wide.
  void splat(const Vec3& centre, double radius, double min_pixels, const Rgb& colour, int id);
  // A polyline `pixels` wide over the surfaces: blended at `alpha` where visible and at
  // `hidden_alpha` where this raster's surfaces hide it; it writes no depth, so lines go last.
  void polyline(const std::vector<Vec3>& points, double pixels, const Rgb& colour, float alpha, float hidden_alpha);
  // A disc `pixels` wide over everything: `fill` inside a `rim` a fifth of its width.
  void marker(const Vec3& centre, double pixels, const Rgb& rim, const Rgb& fill);
  // Darkens the pixels at the silhouettes and where the depth jumps by more than `depth_jump` of
  // itself (a part in front of another), so that overlapping parts stay apart. A change of surface
  // without a jump (parts that touch or cut each other) has none: there the colours tell them apart.
  void outline(float darken, double depth_jump);
  // Lays `layer`'s surfaces over this one's at `alpha` where they are nearer (see-through ghosts).
  void blend_over(const Raster& layer, float alpha);
  // 8-bit RGB, rows top to bottom, each pixel the mean of a factor x factor block.
  std::vector<std::uint8_t> downsample(int factor) const;

 private:
  struct Vertex {
    double x, y, inv_z;  // pixel coordinates and 1 / depth
    Vec3 n;
  };
  void raster_triangle(const Vertex& a, const Vertex& b, const Vertex& c, const Rgb& colour, int id);
  void shade(std::size_t pixel, double depth, Vec3 n, const Rgb& colour, int id);
  void blend(std::size_t pixel, const Rgb& colour, float alpha);

  Lens lens_;
  Vec3 light_;
  std::vector<float> depth_;  // +inf where empty
  std::vector<int> id_;       // -1 where empty
  std::vector<Rgb> colour_;
};

}  // namespace picture
}  // namespace ompl_cuda
