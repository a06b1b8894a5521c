// Raster (picture_raster.h): every primitive ends in shade(), which keeps the nearest surface of a
// pixel; depths are distances along the camera's axis, so triangles (1 / depth interpolated across the
// screen) and ray-cast spheres share one z-buffer.
#include "picture_raster.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ompl_cuda {
namespace picture {
namespace {

constexpr float kEmpty = std::numeric_limits<float>::infinity();

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vec3 lerp(const Vec3& a, const Vec3& b, double t) {
  return {a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t};
}

// The pixels [first, last] that the span [lo, hi] touches on an axis of `size` pixels; empty where
// first > last. Clamped before the cast, so that a point near the camera cannot overflow an int.
void pixel_span(double lo, double hi, int size, int* first, int* last) {
  *first = static_cast<int>(std::floor(std::clamp(lo, -1.0, static_cast<double>(size))));
  *last = static_cast<int>(std::ceil(std::clamp(hi, -1.0, static_cast<double>(size))));
  *first = std::max(*first, 0);
  *last = std::min(*last, size - 1);
}

}  // namespace

Raster::Raster(const Lens& lens, const Rgb& background) : lens_(lens) {
  const Vec3 light = {-0.45, 0.6, -1.0};  // towards the light: up, left and behind the camera
  const double norm = std::sqrt(dot(light, light));
  light_ = {light[0] / norm, light[1] / norm, light[2] / norm};
  const std::size_t pixels = static_cast<std::size_t>(lens.width) * lens.height;
  depth_.assign(pixels, kEmpty);
  id_.assign(pixels, -1);
  colour_.assign(pixels, background);
}

void Raster::shade(std::size_t pixel, double depth, Vec3 n, const Rgb& colour, int id) {
  // Compared in the buffer's precision: the same surface drawn twice (a link that does not move) keeps
  // its first colour instead of speckling.
  const float z = static_cast<float>(depth);
  if (!(z < depth_[pixel])) return;
  const double px = static_cast<double>(pixel % lens_.width) + 0.5, py = static_cast<double>(pixel / lens_.width) + 0.5;
  const Vec3 ray = {(px - lens_.width / 2.0) / lens_.focal, -(py - lens_.height / 2.0) / lens_.focal, 1.0};
  if (dot(n, ray) > 0) n = {-n[0], -n[1], -n[2]};  // the side the camera sees
  const double length = std::sqrt(dot(n, n));
  const double lambert = length > 0 ? std::max(0.0, dot(n, light_) / length) : 0.5;
  const float k = static_cast<float>(0.5 + 0.5 * lambert);
  depth_[pixel] = z;
  id_[pixel] = id;
  colour_[pixel] = {colour[0] * k, colour[1] * k, colour[2] * k};
}

void Raster::blend(std::size_t pixel, const Rgb& colour, float alpha) {
  for (int c = 0; c < 3; ++c) colour_[pixel][c] += alpha * (colour[c] - colour_[pixel][c]);
}

void Raster::triangle(const std::array<Vec3, 3>& p, const std::array<Vec3, 3>& n, const Rgb& colour, int id) {
  // Clip to depth >= near (one plane, so at most four corners), then fan.
  Vec3 cp[4], cn[4];
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3;
    const bool in_i = p[i][2] >= lens_.near, in_j = p[j][2] >= lens_.near;
    if (in_i) cp[count] = p[i], cn[count++] = n[i];
    if (in_i != in_j) {
      const double t = (lens_.near - p[i][2]) / (p[j][2] - p[i][2]);
      cp[count] = lerp(p[i], p[j], t), cn[count++] = lerp(n[i], n[j], t);
    }
  }
  if (count < 3) return;
  Vertex v[4];
  for (int i = 0; i < count; ++i) {
    const double inv_z = 1.0 / cp[i][2];
    v[i] = {lens_.width / 2.0 + lens_.focal * cp[i][0] * inv_z, lens_.height / 2.0 - lens_.focal * cp[i][1] * inv_z, inv_z, cn[i]};
  }
  for (int i = 1; i + 1 < count; ++i) raster_triangle(v[0], v[i], v[i + 1], colour, id);
}

void Raster::raster_triangle(const Vertex& a, const Vertex& b, const Vertex& c, const Rgb& colour, int id) {
  const double area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
  if (std::abs(area) < 1e-12) return;
  int x0, x1, y0, y1;
  pixel_span(std::min({a.x, b.x, c.x}), std::max({a.x, b.x, c.x}), lens_.width, &x0, &x1);
  pixel_span(std::min({a.y, b.y, c.y}), std::max({a.y, b.y, c.y}), lens_.height, &y0, &y1);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      const double wa = ((b.x - px) * (c.y - py) - (b.y - py) * (c.x - px)) / area;
      const double wb = ((c.x - px) * (a.y - py) - (c.y - py) * (a.x - px)) / area;
      const double wc = 1.0 - wa - wb;
      if (wa < 0 || wb < 0 || wc < 0) continue;
      const double inv_z = wa * a.inv_z + wb * b.inv_z + wc * c.inv_z;
      Vec3 n;
      for (int k = 0; k < 3; ++k) n[k] = (wa * a.inv_z * a.n[k] + wb * b.inv_z * b.n[k] + wc * c.inv_z * c.n[k]) / inv_z;
      shade(static_cast<std::size_t>(y) * lens_.width + x, 1.0 / inv_z, n, colour, id);
    }
}

void Raster::sphere(const Vec3& centre, double radius, const Rgb& colour, int id) {
  if (!(radius > 0) || centre[2] - radius < lens_.near) return;
  // The screen bound of the sphere's camera-aligned bounding cube holds its projection.
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (int corner = 0; corner < 8; ++corner) {
    const double x = centre[0] + (corner & 1 ? radius : -radius), y = centre[1] + (corner & 2 ? radius : -radius);
    const double z = centre[2] + (corner & 4 ? radius : -radius);
    const double sx = lens_.width / 2.0 + lens_.focal * x / z, sy = lens_.height / 2.0 - lens_.focal * y / z;
    x0 = std::min(x0, sx), x1 = std::max(x1, sx), y0 = std::min(y0, sy), y1 = std::max(y1, sy);
  }
  int ix0, ix1, iy0, iy1;
  pixel_span(x0, x1, lens_.width, &ix0, &ix1);
  pixel_span(y0, y1, lens_.height, &iy0, &iy1);
  const double k = dot(centre, centre) - radius * radius;
  for (int y = iy0; y <= iy1; ++y)
    for (int x = ix0; x <= ix1; ++x) {
      const Vec3 ray = {(x + 0.5 - lens_.width / 2.0) / lens_.focal, -(y + 0.5 - lens_.height / 2.0) / lens_.focal, 1.0};
      const double a = dot(ray, ray), b = dot(ray, centre), disc = b * b - a * k;
      if (disc < 0) continue;
      const double t = (b - std::sqrt(disc)) / a;  // the ray's depth is t (its z is 1)
      const Vec3 n = {t * ray[0] - centre[0], t * ray[1] - centre[1], t * ray[2] - centre[2]};
      shade(static_cast<std::size_t>(y) * lens_.width + x, t, n, colour, id);
    }
}

void Raster::splat(const Vec3& centre, double radius, double min_pixels, const Rgb& colour, int id) {
  if (centre[2] < lens_.near) return;
  const double r = std::max(min_pixels / 2, lens_.focal * radius / centre[2]);
  const double cx = lens_.width / 2.0 + lens_.focal * centre[0] / centre[2];
  const double cy = lens_.height / 2.0 - lens_.focal * centre[1] / centre[2];
  int x0, x1, y0, y1;
  pixel_span(cx - r, cx + r, lens_.width, &x0, &x1);
  pixel_span(cy - r, cy + r, lens_.height, &y0, &y1);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const double dx = (x + 0.5 - cx) / r, dy = (y + 0.5 - cy) / r, d2 = dx * dx + dy * dy;
      if (d2 > 1) continue;
      // Shaded as a small ball, so that dense clouds keep some relief.
      shade(static_cast<std::size_t>(y) * lens_.width + x, centre[2], {dx, -dy, -std::sqrt(1 - d2)}, colour, id);
    }
}

void Raster::polyline(const std::vector<Vec3>& points, double pixels, const Rgb& colour, float alpha, float hidden_alpha) {
  std::vector<std::uint8_t> done(depth_.size(), 0);  // a pixel where two segments meet is blended once
  for (std::size_t k = 0; k + 1 < points.size(); ++k) {
    Vec3 a = points[k], b = points[k + 1];
    if (a[2] < lens_.near && b[2] < lens_.near) continue;
    if (a[2] < lens_.near) a = lerp(a, b, (lens_.near - a[2]) / (b[2] - a[2]));
    if (b[2] < lens_.near) b = lerp(b, a, (lens_.near - b[2]) / (a[2] - b[2]));
    const double ax = lens_.width / 2.0 + lens_.focal * a[0] / a[2], ay = lens_.height / 2.0 - lens_.focal * a[1] / a[2];
    const double bx = lens_.width / 2.0 + lens_.focal * b[0] / b[2], by = lens_.height / 2.0 - lens_.focal * b[1] / b[2];
    const double half = pixels / 2, dx = bx - ax, dy = by - ay, length2 = dx * dx + dy * dy;
    int x0, x1, y0, y1;
    pixel_span(std::min(ax, bx) - half, std::max(ax, bx) + half, lens_.width, &x0, &x1);
    pixel_span(std::min(ay, by) - half, std::max(ay, by) + half, lens_.height, &y0, &y1);
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        const double px = x + 0.5 - ax, py = y + 0.5 - ay;
        const double t = length2 > 0 ? std::clamp((px * dx + py * dy) / length2, 0.0, 1.0) : 0.0;
        const double ex = px - t * dx, ey = py - t * dy;
        const std::size_t pixel = static_cast<std::size_t>(y) * lens_.width + x;
        if (ex * ex + ey * ey > half * half || done[pixel]) continue;
        done[pixel] = 1;
        const double depth = 1.0 / (1.0 / a[2] + t * (1.0 / b[2] - 1.0 / a[2]));
        const bool visible = depth <= depth_[pixel] * (1 + 2e-3);
        blend(pixel, colour, visible ? alpha : hidden_alpha);
      }
  }
}

void Raster::marker(const Vec3& centre, double pixels, const Rgb& rim, const Rgb& fill) {
  if (centre[2] < lens_.near) return;
  const double cx = lens_.width / 2.0 + lens_.focal * centre[0] / centre[2];
  const double cy = lens_.height / 2.0 - lens_.focal * centre[1] / centre[2];
  const double r = pixels / 2, inner = r * 0.6;
  int x0, x1, y0, y1;
  pixel_span(cx - r, cx + r, lens_.width, &x0, &x1);
  pixel_span(cy - r, cy + r, lens_.height, &y0, &y1);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const double dx = x + 0.5 - cx, dy = y + 0.5 - cy, d2 = dx * dx + dy * dy;
      if (d2 <= r * r) colour_[static_cast<std::size_t>(y) * lens_.width + x] = d2 <= inner * inner ? fill : rim;
    }
}

void Raster::outline(float darken, double depth_jump) {
  const int w = lens_.width, h = lens_.height;
  std::vector<std::uint8_t> edge(depth_.size(), 0);
  auto differs = [&](std::size_t p, std::size_t q) {
    if ((id_[p] < 0) != (id_[q] < 0)) return true;
    if (id_[p] < 0) return false;
    return std::abs(depth_[p] - depth_[q]) > depth_jump * std::min(depth_[p], depth_[q]);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t p = static_cast<std::size_t>(y) * w + x;
      if (x + 1 < w && differs(p, p + 1)) edge[p] = edge[p + 1] = 1;
      if (y + 1 < h && differs(p, p + w)) edge[p] = edge[p + w] = 1;
    }
  for (std::size_t p = 0; p < edge.size(); ++p)
    if (edge[p] && id_[p] >= 0)
      for (float& c : colour_[p]) c *= darken;
    else if (edge[p])
      blend(p, {0, 0, 0}, 1 - darken);  // the background side of a silhouette, for a two-pixel line
}

void Raster::blend_over(const Raster& layer, float alpha) {
  for (std::size_t p = 0; p < colour_.size(); ++p)
    if (layer.id_[p] >= 0 && layer.depth_[p] < depth_[p]) blend(p, layer.colour_[p], alpha);
}

std::vector<std::uint8_t> Raster::downsample(int factor) const {
  const int w = lens_.width / factor, h = lens_.height / factor;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(w) * h * 3);
  const float scale = 255.0f / static_cast<float>(factor * factor);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        float sum = 0;
        for (int sy = 0; sy < factor; ++sy)
          for (int sx = 0; sx < factor; ++sx)
            sum += colour_[static_cast<std::size_t>(y * factor + sy) * lens_.width + x * factor + sx][c];
        out[(static_cast<std::size_t>(y) * w + x) * 3 + c] = static_cast<std::uint8_t>(std::clamp(sum * scale + 0.5f, 0.0f, 255.0f));
      }
  return out;
}

}  // namespace picture
}  // namespace ompl_cuda
