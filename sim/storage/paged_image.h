// PagedImage: the bytes of one simulated file, held as shared, copy-on-write pages.
//
// SimVfs keeps two images of every file: what reads see and what survives a power loss. Held as
// plain strings they are two full copies of the database, and a ranking chain of 40,000 events
// spent a third of its memory on them (docs/performance.md, "What holds the figures"). Most of the two
// images is the same bytes, so an image is a vector of pointers to fixed pages, shared between
// images: copying an image copies pointers, and a write first copies the one page it changes if
// another image still holds it.
//
// Contract
// - An image is a byte string of size() bytes; every byte past a write is zero (a gap from a
//   write past the end, or growth by resize, reads as zeros, as a file's hole does).
// - A null page is a page of zeros (never allocated until written).
// - Bytes of the last page past size() are zero, so growing needs no clearing of old bytes.
// - share_pages_of(other, begin, end) makes every page overlapping [begin, end) this image's the
//   same page as `other`'s: the bytes of those whole pages become other's. REQUIRES size() ==
//   other.size(). SimVfs's sync uses it to make the pages a write touched durable without copying.
// - Not thread-safe, like the world that owns it (the pages' reference counts are std::shared_ptr's,
//   so images may still be destroyed anywhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fl::sim::storage {

class PagedImage {
 public:
  static constexpr size_t kPageBytes = 4096;

  size_t size() const { return size_; }
  // Grows with zeros or cuts to `size` bytes.
  void resize(size_t size);
  // Writes `n` bytes at `offset`, growing the image (with zeros between its end and `offset`).
  void write(size_t offset, const char* data, size_t n);
  // Copies `n` bytes from `offset` to `out`. REQUIRES offset + n <= size().
  void read(size_t offset, char* out, size_t n) const;
  // See the contract above. REQUIRES size() == other.size().
  void share_pages_of(const PagedImage& other, size_t begin, size_t end);
  // The image as one string (inspection, fingerprints, tests).
  std::string to_string() const;
  // Pages allocated by this image or shared with others (a page of zeros is none).
  size_t pages_held() const;
  // Pages this image and `other` hold in common (the same allocation, at the same index).
  size_t pages_shared_with(const PagedImage& other) const;

  bool operator==(const PagedImage& other) const;

 private:
  struct Page {
    char bytes[kPageBytes];
  };
  // The page holding `index`, private to this image, whose bytes outside [from, to) are the page's
  // bytes (the shared page's when it was shared, zeros when it was null); the caller is about to
  // overwrite [from, to). Only the bytes outside it are copied or cleared: a WAL frame (24 + 4,096
  // bytes at 32 + k * 4,120) covers most of the two pages it straddles.
  char* writable(size_t index, size_t from, size_t to);

  std::vector<std::shared_ptr<Page>> pages_;
  size_t size_ = 0;
};

}  // namespace fl::sim::storage
