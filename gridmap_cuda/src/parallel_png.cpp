#include "parallel_png.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace gridmap_cuda::detail {
namespace {

// Rows per band: enough that a band's flush (a few bytes) and its start-up cost nothing, few enough
// that all threads get bands on a small image.
constexpr int kRowsPerBand = 64;
// Deflate's fastest level: after the Sub filter a map is mostly runs of zeros, which it packs about as
// tightly as the default level (38 MB against 35 MB for a 77 M-cell map) at several times the speed.
constexpr int kLevel = 1;

void put_u32(std::vector<std::uint8_t>* out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<std::uint8_t>(v >> shift));
}

bool write_chunk(std::FILE* file, const char type[4], const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> head;
  put_u32(&head, static_cast<std::uint32_t>(size));
  head.insert(head.end(), type, type + 4);
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(type), 4);
  if (size) crc = crc32_z(crc, data, size);
  std::vector<std::uint8_t> tail;
  put_u32(&tail, static_cast<std::uint32_t>(crc));
  return std::fwrite(head.data(), 1, head.size(), file) == head.size() &&
         (size == 0 || std::fwrite(data, 1, size, file) == size) &&
         std::fwrite(tail.data(), 1, tail.size(), file) == tail.size();
}

struct Band {
  std::vector<std::uint8_t> deflated;
  uLong adler = 1;
  std::size_t raw_bytes = 0;
  std::string error;
};

// Deflates rows [first, last) (each a filter byte, then its pixels of `channels` bytes) as raw
// deflate, ended by a sync flush, or by the stream's end for the last band.
void deflate_band(int first, int last, int width, int channels, bool final_band, const RgbRowFunction& fill_row,
                  Band* band) {
  z_stream z{};
  if (deflateInit2(&z, kLevel, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    band->error = "deflateInit2 failed";
    return;
  }
  std::vector<std::uint8_t> row(1 + static_cast<std::size_t>(channels) * width);
  band->deflated.resize(deflateBound(&z, row.size()) + 64);
  band->adler = adler32(0L, nullptr, 0);
  std::size_t used = 0;
  for (int r = first; r < last; ++r) {
    // Filter Sub (each byte less the same byte of the pixel before): the unknown colour's runs and a
    // free area's become runs of zeros.
    fill_row(r, row.data() + 1);
    row[0] = 1;
    const std::size_t step = static_cast<std::size_t>(channels);
    for (std::size_t k = row.size() - 1; k > step; --k) row[k] = static_cast<std::uint8_t>(row[k] - row[k - step]);
    band->adler = adler32_z(band->adler, row.data(), row.size());
    band->raw_bytes += row.size();
    z.next_in = row.data();
    z.avail_in = static_cast<uInt>(row.size());
    const int flush = r + 1 < last ? Z_NO_FLUSH : (final_band ? Z_FINISH : Z_SYNC_FLUSH);
    for (;;) {  // until the row is in and, at the band's end, flushed or finished
      if (band->deflated.size() - used < 4096) band->deflated.resize(2 * band->deflated.size() + 4096);
      z.next_out = band->deflated.data() + used;
      z.avail_out = static_cast<uInt>(std::min<std::size_t>(band->deflated.size() - used, 1u << 30));
      const int rc = deflate(&z, flush);
      used = static_cast<std::size_t>(z.next_out - band->deflated.data());
      if (rc == Z_STREAM_ERROR) {
        band->error = "deflate failed";
        deflateEnd(&z);
        return;
      }
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0)) break;
    }
  }
  band->deflated.resize(used);
  deflateEnd(&z);
}

// The PNG of `channels` bytes a pixel (3: RGB; 1: palette indices into `palette`).
std::string write_png(std::FILE* file, int width, int height, int channels, const std::vector<std::uint8_t>& palette,
                      const RgbRowFunction& fill_row) {
  // zlib takes a row in one call of at most 4 GiB; PNG allows 2^31 - 1 pixels a side.
  if (width <= 0 || height <= 0 || width > (1 << 28))
    return "cannot hold an image of " + std::to_string(width) + " x " + std::to_string(height) + " pixels in a PNG";
  const int num_bands = (height + kRowsPerBand - 1) / kRowsPerBand;
  std::vector<Band> bands(static_cast<std::size_t>(num_bands));
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < num_bands; ++b) {
    const int first = b * kRowsPerBand, last = std::min(height, first + kRowsPerBand);
    deflate_band(first, last, width, channels, b + 1 == num_bands, fill_row, &bands[static_cast<std::size_t>(b)]);
  }
  uLong adler = adler32(0L, nullptr, 0);
  for (const Band& band : bands) {
    if (!band.error.empty()) return band.error;
    adler = adler32_combine(adler, band.adler, static_cast<z_off_t>(band.raw_bytes));
  }

  static const std::uint8_t kSignature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (std::fwrite(kSignature, 1, 8, file) != 8) return "cannot write";
  std::vector<std::uint8_t> header;
  put_u32(&header, static_cast<std::uint32_t>(width));
  put_u32(&header, static_cast<std::uint32_t>(height));
  // 8 bits, RGB or palette, deflate, adaptive filters, no interlace.
  header.insert(header.end(), {8, static_cast<std::uint8_t>(channels == 3 ? 2 : 3), 0, 0, 0});
  if (!write_chunk(file, "IHDR", header.data(), header.size())) return "cannot write";
  if (channels == 1 && !write_chunk(file, "PLTE", palette.data(), palette.size())) return "cannot write";
  // The zlib stream: its 2-byte header (deflate, 32 KiB window, fastest), the bands, the Adler-32.
  const std::array<std::uint8_t, 2> zlib_header = {0x78, 0x01};
  if (!write_chunk(file, "IDAT", zlib_header.data(), zlib_header.size())) return "cannot write";
  for (const Band& band : bands)
    for (std::size_t at = 0; at < band.deflated.size(); at += std::size_t(1) << 30) {
      const std::size_t size = std::min(band.deflated.size() - at, std::size_t(1) << 30);
      if (!write_chunk(file, "IDAT", band.deflated.data() + at, size)) return "cannot write";
    }
  std::vector<std::uint8_t> trailer;
  put_u32(&trailer, static_cast<std::uint32_t>(adler));
  if (!write_chunk(file, "IDAT", trailer.data(), trailer.size())) return "cannot write";
  if (!write_chunk(file, "IEND", nullptr, 0)) return "cannot write";
  return "";
}

}  // namespace

std::string write_parallel_png(std::FILE* file, int width, int height, const RgbRowFunction& fill_row) {
  return write_png(file, width, height, 3, {}, fill_row);
}

std::string write_parallel_indexed_png(std::FILE* file, int width, int height, const std::vector<std::uint8_t>& palette,
                                       const IndexRowFunction& fill_row) {
  if (palette.empty() || palette.size() % 3 != 0 || palette.size() > 3 * 256)
    return "a palette of " + std::to_string(palette.size()) + " bytes is not 1 to 256 RGB colours";
  return write_png(file, width, height, 1, palette, fill_row);
}

}  // namespace gridmap_cuda::detail
