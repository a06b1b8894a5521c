// libFuzzer harness of ceres_cuda's COLMAP model reader. The input holds the three files of a model:
// its first byte picks the form (even: text, odd: binary) and the rest is cut at the first two
// "====\n" into cameras, images and points3D (missing parts are empty files), written to a scratch
// folder and read. A model that is read must pass validate() and come back the same through the
// writer of its form and the reader, and through the other form where it can hold the model (text
// names hold no blanks). Bad input must end in linalg_cuda's typed errors naming one of the three
// files, at a line the text has or a byte the file has (fuzz_support.h says which errors still
// count as findings).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ceres_cuda/colmap_model.h"
#include "fuzz_support.h"
#include "linalg_cuda/errors.h"

namespace {

constexpr const char* kSeparator = "====\n";

struct Files {
  std::string part[3];
};

Files cut(const uint8_t* data, size_t size) {
  Files files;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::size_t from = 0;
  for (int k = 0; k < 3; ++k) {
    const std::size_t at = k < 2 ? input.find(kSeparator, from) : std::string::npos;
    files.part[k] = input.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (at == std::string::npos) break;
    from = at + std::string(kSeparator).size();
  }
  return files;
}

void check_error(const linalg_cuda::Error& error, const fuzz::ScratchDir& dir, const char* const names[3],
                 const Files& files, bool binary) {
  const std::string what = error.what();
  for (int k = 0; k < 3; ++k) {
    const std::string path = dir.path() + "/" + names[k];
    if (what.compare(0, path.size(), path) != 0) continue;
    const std::string& text = files.part[k];
    const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
    if (!binary) {
      fuzz::checked_message(error, path, fuzz::line_count(bytes, text.size()), bytes, text.size());
      return;
    }
    const auto* parse = dynamic_cast<const linalg_cuda::ParseError*>(&error);
    if (!parse) {
      fuzz::checked_message(error, path);
      return;
    }
    // A binary file's error names a byte of the file: "path: byte N: ...".
    if (parse->line() != -1) fuzz::finding("a binary file's ParseError names a line: " + what);
    const std::string prefix = path + ": byte ";
    if (what.compare(0, prefix.size(), prefix) != 0) fuzz::finding("a binary file's ParseError names no byte: " + what);
    const unsigned long long byte = std::strtoull(what.c_str() + prefix.size(), nullptr, 10);
    if (byte > text.size()) fuzz::finding("a ParseError names byte " + std::to_string(byte) + " of a file of " +
                                          std::to_string(text.size()) + ": " + what);
    if (what.size() > path.size() + fuzz::kMaxMessageBytes) fuzz::finding("error message too long: " + what.substr(0, 200));
    return;
  }
  // Not one of the files: the folder as a whole (an allocation failure wrapped with its name).
  fuzz::checked_message(error, dir.path());
}

bool same(const ceres_cuda::ColmapModel& a, const ceres_cuda::ColmapModel& b) {
  if (a.cameras.size() != b.cameras.size() || a.images.size() != b.images.size() || a.points3D.size() != b.points3D.size())
    return false;
  for (const auto& [id, c] : a.cameras) {
    const auto d = b.cameras.find(id);
    if (d == b.cameras.end() || c.model != d->second.model || c.width != d->second.width ||
        c.height != d->second.height || c.params != d->second.params)
      return false;
  }
  for (const auto& [id, i] : a.images) {
    const auto j = b.images.find(id);
    if (j == b.images.end() || i.qvec != j->second.qvec || i.tvec != j->second.tvec ||
        i.camera_id != j->second.camera_id || i.name != j->second.name || i.points2D.size() != j->second.points2D.size())
      return false;
    for (std::size_t k = 0; k < i.points2D.size(); ++k) {
      const auto &p = i.points2D[k], &q = j->second.points2D[k];
      if (p.x != q.x || p.y != q.y || p.point3D_id != q.point3D_id) return false;
    }
  }
  for (const auto& [id, p] : a.points3D) {
    const auto q = b.points3D.find(id);
    if (q == b.points3D.end() || p.xyz != q->second.xyz || p.rgb != q->second.rgb || p.error != q->second.error ||
        p.track.size() != q->second.track.size())
      return false;
    for (std::size_t k = 0; k < p.track.size(); ++k)
      if (p.track[k].image_id != q->second.track[k].image_id || p.track[k].point2D_idx != q->second.track[k].point2D_idx)
        return false;
  }
  return true;
}

void check_round_trip(const ceres_cuda::ColmapModel& model, bool binary) {
  static const fuzz::ScratchDir written("written");
  for (const bool as_binary : {binary, !binary}) {
    try {
      if (as_binary)
        model.write_binary(written.path());
      else
        model.write_text(written.path());
    } catch (const linalg_cuda::InvalidArgument&) {
      if (as_binary == binary) fuzz::finding("a model read from its form cannot be written in it");
      continue;  // a name the text form cannot hold
    } catch (const linalg_cuda::Error& error) {
      fuzz::finding(std::string("a model that was read cannot be written: ") + error.what());
    }
    ceres_cuda::ColmapModel again;
    try {
      again = as_binary ? ceres_cuda::ColmapModel::read_binary(written.path())
                        : ceres_cuda::ColmapModel::read_text(written.path());
    } catch (const linalg_cuda::Error& error) {
      fuzz::finding(std::string("a written model cannot be read back: ") + error.what());
    }
    if (!same(model, again)) fuzz::finding(as_binary ? "a model reads back different from binary" : "a model reads back different from text");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchDir dir("model");
  static const char* const kText[3] = {"cameras.txt", "images.txt", "points3D.txt"};
  static const char* const kBinary[3] = {"cameras.bin", "images.bin", "points3D.bin"};
  if (size == 0) return 0;
  const bool binary = data[0] % 2 == 1;
  const Files files = cut(data + 1, size - 1);
  const char* const* names = binary ? kBinary : kText;
  for (int k = 0; k < 3; ++k) dir.write(names[k], files.part[k].data(), files.part[k].size());
  ceres_cuda::ColmapModel model;
  try {
    model = binary ? ceres_cuda::ColmapModel::read_binary(dir.path()) : ceres_cuda::ColmapModel::read_text(dir.path());
  } catch (const linalg_cuda::Error& error) {
    check_error(error, dir, names, files, binary);
    return 0;
  }
  try {
    model.validate();
  } catch (const linalg_cuda::InvalidArgument& error) {
    fuzz::finding(std::string("a model that was read fails validate(): ") + error.what());
  }
  check_round_trip(model, binary);
  return 0;
}
