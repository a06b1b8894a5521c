#pragma once
// An 8-bit RGB or palette PNG compressed on all cores. libpng deflates one stream on one thread, at its default
// level about 15 MB/s of pixels; here bands of rows are deflated on all threads into pieces of one zlib
// stream, each piece ended byte-aligned by a sync flush, and the pieces' Adler-32 sums combined, as
// pigz does. The PNG container (signature, IHDR, IDAT, IEND, each with its CRC-32) is written here:
// libpng has no way to take precompressed image data.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gridmap_cuda::detail {

// Fills `rgb` (3 * width bytes) with image row `row` (0 = top); called from several threads at once.
using RgbRowFunction = std::function<void(int row, std::uint8_t* rgb)>;

// Writes the PNG to `file`. Returns "" or what failed (the caller names the file).
std::string write_parallel_png(std::FILE* file, int width, int height, const RgbRowFunction& fill_row);

// Fills `indices` (width bytes) with image row `row`'s palette indices; called from several threads.
using IndexRowFunction = std::function<void(int row, std::uint8_t* indices)>;

// A palette PNG: `palette` holds up to 256 RGB triples, and every index points into it.
std::string write_parallel_indexed_png(std::FILE* file, int width, int height, const std::vector<std::uint8_t>& palette,
                                       const IndexRowFunction& fill_row);

}  // namespace gridmap_cuda::detail
