#pragma once
// A convergence plot of a Ceres solve as SVG: cost per iteration on a log scale, accepted steps as
// filled dots joined by a line, rejected ones as open circles (clipped to the top edge when their
// cost is above every accepted one). Self-contained (no plotting library), opens in any
// browser.
#include <ceres/solver.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

namespace examples {

// Returns false when the file cannot be written.
inline bool write_convergence_svg(const ceres::Solver::Summary& summary, const std::string& path,
                                  const std::string& title) {
  const auto& its = summary.iterations;
  if (its.empty()) return false;
  double lo = its[0].cost, hi = its[0].cost;
  for (const auto& it : its) {  // the range of the accepted costs; rejected ones above it sit on the top edge
    if (it.step_is_successful && it.cost > 0 && std::isfinite(it.cost)) {
      lo = std::min(lo, it.cost);
      hi = std::max(hi, it.cost);
    }
  }
  if (!(lo > 0)) lo = 1e-300;
  const double log_lo = std::floor(std::log10(lo)), log_hi = std::max(log_lo + 1, std::ceil(std::log10(hi)));
  constexpr double kWidth = 720, kHeight = 420, kLeft = 80, kRight = 20, kTop = 40, kBottom = 50;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const int last = std::max(1, its.back().iteration);
  auto x_of = [&](int iteration) { return kLeft + plot_w * iteration / last; };
  auto y_of = [&](double cost) {
    const double l = std::min(std::log10(std::max(cost, lo)), log_hi);
    return kTop + plot_h * (1.0 - (l - log_lo) / (log_hi - log_lo));
  };
  std::ofstream out(path);
  if (!out) return false;
  char buf[256];
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << title << "</text>\n";
  for (double d = log_lo; d <= log_hi; d += 1) {  // decades
    const double y = kTop + plot_h * (1.0 - (d - log_lo) / (log_hi - log_lo));
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                  "text-anchor=\"end\">1e%d</text>\n",
                  kLeft, y, kWidth - kRight, y, kLeft - 6, y + 4, static_cast<int>(d));
    out << buf;
  }
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n"
                "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">LM iteration (%d)</text>\n"
                "<text x=\"18\" y=\"%g\" transform=\"rotate(-90 18 %g)\" text-anchor=\"middle\">cost</text>\n",
                kLeft, kTop, plot_w, plot_h, kLeft + plot_w / 2, kHeight - 12, last, kTop + plot_h / 2, kTop + plot_h / 2);
  out << buf;
  // The path through the accepted costs, then every iteration as a dot.
  out << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (const auto& it : its)
    if (it.step_is_successful) out << x_of(it.iteration) << "," << y_of(it.cost) << " ";
  out << "\"/>\n";
  for (const auto& it : its) {
    std::snprintf(buf, sizeof buf, "<circle cx=\"%g\" cy=\"%g\" r=\"3.5\" fill=\"%s\" stroke=\"#1f77b4\"/>\n",
                  x_of(it.iteration), y_of(it.cost), it.step_is_successful ? "#1f77b4" : "white");
    out << buf;
  }
  out << "</svg>\n";
  return static_cast<bool>(out);
}

}  // namespace examples
