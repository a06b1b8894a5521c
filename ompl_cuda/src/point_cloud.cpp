#include "ompl_cuda/point_cloud.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"

namespace ompl_cuda {

namespace {

using linalg_cuda::ParseError;

// The most values a PCD field may hold (PCL's wide fields, e.g. FPFH's 33 or VFH's 308, are far below).
constexpr std::size_t kMaxFieldCount = 65536;

enum class Scalar { I8, U8, I16, U16, I32, U32, I64, U64, F32, F64 };

int size_of(Scalar t) {
  switch (t) {
    case Scalar::I8: case Scalar::U8: return 1;
    case Scalar::I16: case Scalar::U16: return 2;
    case Scalar::I32: case Scalar::U32: case Scalar::F32: return 4;
    default: return 8;
  }
}

double decode(const unsigned char* p, Scalar t, bool swap) {
  unsigned char b[8];
  const int n = size_of(t);
  for (int i = 0; i < n; ++i) b[i] = swap ? p[n - 1 - i] : p[i];
  auto as = [&b](auto value) {
    std::memcpy(&value, b, sizeof(value));
    return static_cast<double>(value);
  };
  switch (t) {
    case Scalar::I8: return as(std::int8_t());
    case Scalar::U8: return as(std::uint8_t());
    case Scalar::I16: return as(std::int16_t());
    case Scalar::U16: return as(std::uint16_t());
    case Scalar::I32: return as(std::int32_t());
    case Scalar::U32: return as(std::uint32_t());
    case Scalar::I64: return as(std::int64_t());
    case Scalar::U64: return as(std::uint64_t());
    case Scalar::F32: return as(float());
    default: return as(double());
  }
}

// What the header says of the body: the points, how each record holds x y z, where the body starts.
struct Layout {
  enum class Format { Ascii, LittleEndian, BigEndian } format = Format::Ascii;
  std::size_t points = 0;
  std::size_t record_bytes = 0;     // binary: bytes per point
  std::size_t offset[3] = {0, 0, 0};  // binary: byte offset of x y z; ascii: their column
  Scalar type[3] = {Scalar::F32, Scalar::F32, Scalar::F32};
  std::size_t columns = 0;          // ascii: values per line
  std::size_t skip_lines = 0;       // ascii: lines of other elements before the points
  std::size_t skip_bytes = 0;       // binary: bytes of other elements before the points
  long line = 0;                    // the header's last line
};

class CloudReader {
 public:
  CloudReader(const std::string& file, const PointCloudReadOptions& options) : file_(file), options_(options) {
    in_.open(file, std::ios::binary);
    if (!in_) throw ParseError(file, 0, "cannot open the file");
    in_.seekg(0, std::ios::end);
    bytes_ = static_cast<std::size_t>(std::max<std::streamoff>(in_.tellg(), 0));
    in_.seekg(0);
  }

  std::vector<float> read() {
    std::string ext = file_.substr(file_.find_last_of('.') == std::string::npos ? file_.size() : file_.find_last_of('.'));
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    Layout layout;
    if (ext == ".ply") layout = ply_header();
    else if (ext == ".pcd") layout = pcd_header();
    else throw ParseError(file_, 0, "unknown point cloud format '" + ext + "' (expected .ply or .pcd)");
    return layout.format == Layout::Format::Ascii ? ascii_body(layout) : binary_body(layout);
  }

 private:
  bool next_line(std::string* text) {
    if (!std::getline(in_, *text)) return false;
    ++line_;
    if (!text->empty() && text->back() == '\r') text->pop_back();
    return true;
  }
  std::string require_line(const char* what) {
    std::string text;
    // The last line the file has (0 for an empty file), not one past it.
    if (!next_line(&text)) throw ParseError(file_, line_, std::string("the file ends before ") + what);
    return text;
  }
  std::size_t count(const std::string& token, const char* what) const {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || token[0] == '-') throw ParseError(file_, line_, std::string("expected ") + what + ", found '" + token + "'");
    return static_cast<std::size_t>(v);
  }
  // Bytes after the read position; none once the stream has failed or met the end (tellg says -1).
  std::size_t bytes_left() {
    const std::streamoff at = in_.tellg();
    return at < 0 ? 0 : bytes_ - std::min(bytes_, static_cast<std::size_t>(at));
  }

  static bool ply_scalar(const std::string& name, Scalar* t) {
    static const std::pair<const char*, Scalar> names[] = {
        {"char", Scalar::I8},    {"int8", Scalar::I8},     {"uchar", Scalar::U8},   {"uint8", Scalar::U8},
        {"short", Scalar::I16},  {"int16", Scalar::I16},   {"ushort", Scalar::U16}, {"uint16", Scalar::U16},
        {"int", Scalar::I32},    {"int32", Scalar::I32},   {"uint", Scalar::U32},   {"uint32", Scalar::U32},
        {"float", Scalar::F32},  {"float32", Scalar::F32}, {"double", Scalar::F64}, {"float64", Scalar::F64}};
    for (const auto& [n, s] : names)
      if (name == n) {
        *t = s;
        return true;
      }
    return false;
  }

  Layout ply_header() {
    if (require_line("the PLY header") != "ply") throw ParseError(file_, 1, "expected 'ply' (a PLY file's first line)");
    Layout layout;
    bool in_vertex = false, seen_vertex = false, format = false, list_before = false;
    std::size_t before_bytes = 0, before_lines = 0, element_count = 0, element_bytes = 0;
    int found = 0;
    for (;;) {
      std::istringstream words(require_line("end_header"));
      std::string key;
      words >> key;
      if (key == "comment" || key == "obj_info" || key.empty()) continue;
      if (key == "format") {
        std::string f;
        words >> f;
        if (f == "ascii") layout.format = Layout::Format::Ascii;
        else if (f == "binary_little_endian") layout.format = Layout::Format::LittleEndian;
        else if (f == "binary_big_endian") layout.format = Layout::Format::BigEndian;
        else throw ParseError(file_, line_, "unknown PLY format '" + f + "'");
        format = true;
      } else if (key == "element" || key == "end_header") {
        if (!seen_vertex || in_vertex) {  // the element that ends here, if any, comes before the points
          if (!in_vertex) {
            before_bytes += element_count * element_bytes;
            before_lines += element_count;
          }
        }
        in_vertex = false;
        if (key == "end_header") break;
        std::string name, n;
        words >> name >> n;
        element_count = count(n, "an element count");
        element_bytes = 0;
        if (name == "vertex") {
          if (seen_vertex) throw ParseError(file_, line_, "a second vertex element");
          in_vertex = seen_vertex = true;
          layout.points = element_count;
          layout.skip_bytes = before_bytes;
          layout.skip_lines = before_lines;
        }
      } else if (key == "property") {
        std::string type, name;
        words >> type;
        if (type == "list") {
          if (in_vertex) throw ParseError(file_, line_, "a list property in the vertex element is not taken");
          if (!seen_vertex) list_before = true;
          continue;
        }
        words >> name;
        Scalar t;
        if (!ply_scalar(type, &t)) throw ParseError(file_, line_, "unknown PLY property type '" + type + "'");
        if (in_vertex) {
          for (int k = 0; k < 3; ++k)
            if (name == std::string(1, "xyz"[k])) {
              layout.offset[k] = layout.format == Layout::Format::Ascii ? layout.columns : layout.record_bytes;
              layout.type[k] = t;
              found |= 1 << k;
            }
          layout.record_bytes += size_of(t);
          ++layout.columns;
        } else {
          element_bytes += size_of(t);
        }
      } else {
        throw ParseError(file_, line_, "unexpected PLY header line '" + key + "'");
      }
    }
    if (!format) throw ParseError(file_, line_, "the PLY header has no format line");
    if (!seen_vertex) throw ParseError(file_, line_, "the PLY file has no vertex element");
    if (found != 7) throw ParseError(file_, line_, "the vertex element lacks an x, y or z property");
    if (list_before && layout.format != Layout::Format::Ascii)
      throw ParseError(file_, line_, "a binary PLY whose lists come before the vertices is not taken");
    layout.line = line_;
    return layout;
  }

  Layout pcd_header() {
    Layout layout;
    std::vector<std::string> fields;
    std::vector<std::size_t> sizes, counts;
    std::vector<char> types;
    std::size_t width = 0, height = 1;
    bool points_given = false;
    for (;;) {
      const std::string text = require_line("the DATA line");
      if (text.empty() || text[0] == '#') continue;
      std::istringstream words(text);
      std::string key, word;
      words >> key;
      std::vector<std::string> values;
      while (words >> word) values.push_back(word);
      if (key == "VERSION" || key == "VIEWPOINT") continue;
      if (key == "FIELDS") fields = values;
      else if (key == "SIZE") for (const auto& v : values) sizes.push_back(count(v, "a field size"));
      else if (key == "TYPE") for (const auto& v : values) types.push_back(v.empty() ? '?' : v[0]);
      else if (key == "COUNT")
        for (const auto& v : values) {
          counts.push_back(count(v, "a field count"));
          // A field of no values holds no coordinate (x, y and z are read from their first), and a
          // record's width must stay far from overflowing its sums.
          if (counts.back() == 0 || counts.back() > kMaxFieldCount)
            throw ParseError(file_, line_, "a field's COUNT must be 1 to " + std::to_string(kMaxFieldCount) + ", found " + v);
        }
      else if (key == "WIDTH" && !values.empty()) width = count(values[0], "a width");
      else if (key == "HEIGHT" && !values.empty()) height = count(values[0], "a height");
      else if (key == "POINTS" && !values.empty()) layout.points = count(values[0], "a point count"), points_given = true;
      else if (key == "DATA") {
        const std::string data = values.empty() ? "" : values[0];
        if (data == "ascii") layout.format = Layout::Format::Ascii;
        else if (data == "binary") layout.format = Layout::Format::LittleEndian;
        else if (data == "binary_compressed")
          throw ParseError(file_, line_, "binary_compressed PCD is not taken: convert it with "
                                         "'pcl_convert_pcd_ascii_binary IN OUT 1' (binary) first");
        else throw ParseError(file_, line_, "unknown PCD DATA '" + data + "'");
        break;
      } else {
        throw ParseError(file_, line_, "unexpected PCD header line '" + key + "'");
      }
    }
    if (counts.empty()) counts.assign(fields.size(), 1);
    if (fields.empty() || sizes.size() != fields.size() || types.size() != fields.size() || counts.size() != fields.size())
      throw ParseError(file_, line_, "FIELDS, SIZE, TYPE and COUNT must name the same number of fields");
    if (!points_given) layout.points = width * height;
    int found = 0;
    for (std::size_t f = 0; f < fields.size(); ++f) {
      Scalar t;
      const std::size_t s = sizes[f];
      if (types[f] == 'F' && (s == 4 || s == 8)) t = s == 4 ? Scalar::F32 : Scalar::F64;
      else if (types[f] == 'I' && (s == 1 || s == 2 || s == 4 || s == 8)) t = s == 1 ? Scalar::I8 : s == 2 ? Scalar::I16 : s == 4 ? Scalar::I32 : Scalar::I64;
      else if (types[f] == 'U' && (s == 1 || s == 2 || s == 4 || s == 8)) t = s == 1 ? Scalar::U8 : s == 2 ? Scalar::U16 : s == 4 ? Scalar::U32 : Scalar::U64;
      else throw ParseError(file_, line_, "field '" + fields[f] + "' has an unknown TYPE/SIZE");
      for (int k = 0; k < 3; ++k)
        if (fields[f] == std::string(1, "xyz"[k])) {
          layout.offset[k] = layout.format == Layout::Format::Ascii ? layout.columns : layout.record_bytes;
          layout.type[k] = t;
          found |= 1 << k;
        }
      layout.record_bytes += s * counts[f];
      layout.columns += counts[f];
    }
    if (found != 7) throw ParseError(file_, line_, "the PCD fields lack x, y or z");
    layout.line = line_;
    return layout;
  }

  // Points are kept in single precision: a coordinate beyond its range counts as not finite.
  void add(std::vector<float>* xyz, const double* p, long where) {
    const float f[3] = {static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2])};
    if (!std::isfinite(f[0]) || !std::isfinite(f[1]) || !std::isfinite(f[2])) {
      if (options_.drop_non_finite) return;
      throw ParseError(file_, where, "point " + std::to_string(xyz->size() / 3) +
                                         " has a coordinate that is not finite in single precision "
                                         "(PointCloudReadOptions::drop_non_finite drops such points)");
    }
    xyz->insert(xyz->end(), f, f + 3);
  }

  std::vector<float> ascii_body(const Layout& layout) {
    std::string text;
    for (std::size_t k = 0; k < layout.skip_lines; ++k) require_line("the vertices");
    // "0 0 0\n" is the shortest point a line can hold: a count beyond bytes / 6 cannot be true.
    if (layout.points > bytes_left() / (2 * layout.columns))
      throw ParseError(file_, layout.line, "the header declares " + std::to_string(layout.points) + " points; the file's " +
                                               std::to_string(bytes_left()) + " remaining bytes cannot hold them");
    std::vector<float> xyz;
    if (layout.points == 0) return xyz;  // the columns' count is backed by the file only when a point is there
    xyz.reserve(3 * layout.points);
    std::vector<double> values(layout.columns);
    for (std::size_t i = 0; i < layout.points; ++i) {
      text = require_line("every point declared");
      const char* p = text.c_str();
      for (std::size_t c = 0; c < layout.columns; ++c) {
        char* end = nullptr;
        values[c] = std::strtod(p, &end);
        if (end == p) throw ParseError(file_, line_, "expected " + std::to_string(layout.columns) + " numbers");
        p = end;
      }
      const double point[3] = {values[layout.offset[0]], values[layout.offset[1]], values[layout.offset[2]]};
      add(&xyz, point, line_);
    }
    return xyz;
  }

  std::vector<float> binary_body(const Layout& layout) {
    in_.seekg(static_cast<std::streamoff>(layout.skip_bytes), std::ios::cur);
    if (!in_ || layout.skip_bytes > bytes_) throw ParseError(file_, 0, "the file ends before the vertices");
    if (layout.record_bytes == 0 || layout.points > bytes_left() / layout.record_bytes)
      throw ParseError(file_, 0, "the header declares " + std::to_string(layout.points) + " points of " +
                                     std::to_string(layout.record_bytes) + " bytes; the file's " + std::to_string(bytes_left()) +
                                     " remaining bytes cannot hold them");
    const bool swap = layout.format == Layout::Format::BigEndian;
    std::vector<float> xyz;
    xyz.reserve(3 * layout.points);
    // At most the points declared, whose bytes the file holds (checked above).
    const std::size_t chunk = std::min(layout.points, std::max<std::size_t>(1, (1 << 20) / layout.record_bytes));
    std::vector<unsigned char> buffer(chunk * layout.record_bytes);
    for (std::size_t first = 0; first < layout.points; first += chunk) {
      const std::size_t n = std::min(chunk, layout.points - first);
      in_.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(n * layout.record_bytes));
      if (!in_) throw ParseError(file_, 0, "the file ends inside point " + std::to_string(first));
      for (std::size_t i = 0; i < n; ++i) {
        const unsigned char* record = buffer.data() + i * layout.record_bytes;
        double p[3];
        for (int k = 0; k < 3; ++k) p[k] = decode(record + layout.offset[k], layout.type[k], swap);
        add(&xyz, p, 0);
      }
    }
    return xyz;
  }

  std::string file_;
  PointCloudReadOptions options_;
  std::ifstream in_;
  std::size_t bytes_ = 0;
  long line_ = 0;
};

}  // namespace

std::vector<float> read_point_cloud(const std::string& file, const PointCloudReadOptions& options) try {
  return CloudReader(file, options).read();
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(file);
}

void write_ply(const std::string& file, const std::vector<float>& xyz) {
  std::ofstream out(file, std::ios::binary);
  if (!out) throw linalg_cuda::Error(file + ": cannot write the file");
  out << "ply\nformat binary_little_endian 1.0\ncomment written by ompl_cuda\nelement vertex " << xyz.size() / 3
      << "\nproperty float x\nproperty float y\nproperty float z\nend_header\n";
  for (float v : xyz) {  // little-endian bytes whatever the host's order
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    const char b[4] = {char(bits & 255), char((bits >> 8) & 255), char((bits >> 16) & 255), char(bits >> 24)};
    out.write(b, 4);
  }
  if (!out) throw linalg_cuda::Error(file + ": writing failed");
}

}  // namespace ompl_cuda
