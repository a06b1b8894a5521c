// write_robot_html (robot_view.h): the scene as world-frame line segments, the robot as spheres per
// frame, both as JSON inside a page whose script projects them (a perspective orbit camera) and draws
// the spheres far to near, shaded by depth.
#include "ompl_cuda/robot_view.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "linalg_cuda/errors.h"

namespace ompl_cuda {
namespace {

using Point = std::array<double, 3>;

Point to_world(const Transform& t, const Point& p) {
  Point out;
  for (int i = 0; i < 3; ++i)
    out[i] = t.rotation[3 * i] * p[0] + t.rotation[3 * i + 1] * p[1] + t.rotation[3 * i + 2] * p[2] + t.translation[i];
  return out;
}

// A closed polygon of n points on the circle of radius r at height z (the primitive's frame, axis z).
void add_circle(const Transform& pose, double r, double z, int n, std::vector<std::array<Point, 2>>* lines,
                int plane = 2) {
  for (int k = 0; k < n; ++k) {
    const double a0 = 2 * M_PI * k / n, a1 = 2 * M_PI * (k + 1) / n;
    auto at = [&](double a) {
      Point p = {r * std::cos(a), r * std::sin(a), z};
      if (plane == 1) p = {p[0], z, p[1]};
      if (plane == 0) p = {z, p[0], p[1]};
      return to_world(pose, p);
    };
    lines->push_back({{at(a0), at(a1)}});
  }
}

std::vector<std::array<Point, 2>> scene_lines(const Scene& scene) {
  std::vector<std::array<Point, 2>> lines;
  for (const SceneObject& object : scene.objects())
    for (const Primitive& p : object.primitives) {
      switch (p.kind) {
        case Primitive::Kind::Box: {
          const double x = p.size[0] / 2, y = p.size[1] / 2, z = p.size[2] / 2;
          Point c[8];
          for (int k = 0; k < 8; ++k) c[k] = to_world(p.pose, {k & 1 ? x : -x, k & 2 ? y : -y, k & 4 ? z : -z});
          for (int a = 0; a < 8; ++a)
            for (const int bit : {1, 2, 4})
              if (!(a & bit)) lines.push_back({{c[a], c[a | bit]}});
          break;
        }
        case Primitive::Kind::Cylinder:
        case Primitive::Kind::Capsule: {
          const double r = p.size[0], h = p.size[1] / 2;
          add_circle(p.pose, r, -h, 24, &lines);
          add_circle(p.pose, r, h, 24, &lines);
          for (int k = 0; k < 4; ++k) {
            const double a = M_PI / 2 * k;
            lines.push_back({{to_world(p.pose, {r * std::cos(a), r * std::sin(a), -h}), to_world(p.pose, {r * std::cos(a), r * std::sin(a), h})}});
          }
          break;
        }
        case Primitive::Kind::Sphere:
          for (int plane = 0; plane < 3; ++plane) add_circle(p.pose, p.size[0], 0, 24, &lines, plane);
          break;
      }
    }
  return lines;
}

const char* kPage = R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%TITLE%</title>
<style>body{margin:0;font:14px sans-serif;background:#f4f4f4}canvas{display:block}#info{position:absolute;left:10px;top:8px}</style>
</head><body><div id="info">%TITLE% &mdash; drag to turn, wheel to zoom, space to pause; frame <span id="frame"></span></div>
<canvas id="view"></canvas>
<script>
const lines = %LINES%;
const frames = %FRAMES%;
const canvas = document.getElementById('view'), ctx = canvas.getContext('2d');
let yaw = 0.8, pitch = 0.5, distance = 3.0, frame = 0, playing = true, drag = null;
const all = lines.flat().concat(frames.length ? frames[0].map(s => [s[0], s[1], s[2]]) : []);
const center = [0, 1, 2].map(i => all.length ? all.reduce((a, p) => a + p[i], 0) / all.length : 0);
function resize() { canvas.width = innerWidth; canvas.height = innerHeight; }
addEventListener('resize', resize); resize();
canvas.onmousedown = e => drag = [e.clientX, e.clientY];
onmouseup = () => drag = null;
onmousemove = e => { if (!drag) return; yaw += (e.clientX - drag[0]) * 0.01; pitch = Math.max(-1.5, Math.min(1.5, pitch + (e.clientY - drag[1]) * 0.01)); drag = [e.clientX, e.clientY]; };
canvas.onwheel = e => { distance *= Math.exp(e.deltaY * 0.001); e.preventDefault(); };
onkeydown = e => { if (e.key === ' ') playing = !playing; };
function project(p) {  // z up; the camera orbits the centre
  const x = p[0] - center[0], y = p[1] - center[1], z = p[2] - center[2];
  const cx = Math.cos(yaw) * x + Math.sin(yaw) * y, cy = -Math.sin(yaw) * x + Math.cos(yaw) * y;
  const depth = Math.cos(pitch) * cy + Math.sin(pitch) * z + distance, up = -Math.sin(pitch) * cy + Math.cos(pitch) * z;
  const f = Math.min(canvas.width, canvas.height) / depth;
  return [canvas.width / 2 + cx * f, canvas.height / 2 - up * f, depth, f];
}
function draw() {
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.strokeStyle = '#555'; ctx.lineWidth = 1; ctx.beginPath();
  for (const [a, b] of lines) { const p = project(a), q = project(b); if (p[2] > 0 && q[2] > 0) { ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]); } }
  ctx.stroke();
  if (frames.length) {
    const spheres = frames[frame].map(s => { const p = project(s); return [p[0], p[1], p[2], s[3] * p[3]]; }).filter(s => s[2] > 0);
    spheres.sort((a, b) => b[2] - a[2]);
    for (const s of spheres) {
      const shade = Math.max(0, Math.min(1, (s[2] - distance + 1) / 2));
      ctx.fillStyle = `rgba(${40 + 120 * shade},${110 + 80 * shade},${200},0.85)`;
      ctx.beginPath(); ctx.arc(s[0], s[1], Math.max(0.5, s[3]), 0, 2 * Math.PI); ctx.fill();
    }
    document.getElementById('frame').textContent = (frame + 1) + ' / ' + frames.length;
    if (playing) frame = (frame + 1) % frames.length;
  }
  setTimeout(() => requestAnimationFrame(draw), 60);
}
draw();
</script></body></html>
)";

void replace(std::string* text, const std::string& key, const std::string& value) {
  for (std::size_t at = text->find(key); at != std::string::npos; at = text->find(key, at + value.size()))
    text->replace(at, key.size(), value);
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

void write_robot_html(const std::string& file, const RobotCollisionModel& robot, const Scene& scene,
                      const Transform& base, const std::vector<std::vector<double>>& states, const std::string& title) {
  std::ostringstream lines, frames;
  lines.precision(5);
  frames.precision(5);
  lines << '[';
  bool first = true;
  for (const auto& [a, b] : scene_lines(scene)) {
    lines << (first ? "" : ",") << "[[" << a[0] << ',' << a[1] << ',' << a[2] << "],[" << b[0] << ',' << b[1] << ',' << b[2] << "]]";
    first = false;
  }
  lines << ']';
  frames << '[';
  std::vector<Sphere> world;
  for (std::size_t f = 0; f < states.size(); ++f) {
    if (static_cast<int>(states[f].size()) != robot.model().num_variables())
      throw linalg_cuda::InvalidArgument("write_robot_html: state " + std::to_string(f) + " has " +
                                         std::to_string(states[f].size()) + " values, the robot " +
                                         std::to_string(robot.model().num_variables()));
    robot.world_spheres(states[f].data(), base, &world);
    frames << (f ? ",[" : "[");
    for (std::size_t k = 0; k < world.size(); ++k)
      frames << (k ? "," : "") << '[' << world[k].center[0] << ',' << world[k].center[1] << ',' << world[k].center[2] << ','
             << world[k].radius << ']';
    frames << ']';
  }
  frames << ']';
  std::string page = kPage;
  replace(&page, "%TITLE%", html_escape(title));
  replace(&page, "%LINES%", lines.str());
  replace(&page, "%FRAMES%", frames.str());
  std::ofstream out(file);
  if (!out) throw linalg_cuda::Error("write_robot_html: cannot write '" + file + "'");
  out << page;
  if (!out) throw linalg_cuda::Error("write_robot_html: error writing '" + file + "'");
}

}  // namespace ompl_cuda
