#include "sim/storage/paged_image.h"
#include "impl/ports/assert.h"

#include <algorithm>
#include <cstring>

namespace fl::sim::storage {

namespace {
constexpr size_t kPage = PagedImage::kPageBytes;
size_t pages_for(size_t bytes) { return (bytes + kPage - 1) / kPage; }
}  // namespace

char* PagedImage::writable(size_t index, size_t from, size_t to) {
  FL_ASSERT(index < pages_.size() && from <= to && to <= kPage);
  std::shared_ptr<Page>& page = pages_[index];
  if (page != nullptr && page.use_count() == 1) return page->bytes;  // private already
  // Pages are allocated apart from their reference counts (not by make_shared): 4,096 bytes fit
  // the allocator's 4 kB size class exactly, where page and count together would take 5 kB.
  // Default-initialized: every byte is set below or by the caller.
  auto fresh = std::shared_ptr<Page>(new Page);
  if (page == nullptr) {  // a hole reads as zeros
    std::memset(fresh->bytes, 0, from);
    std::memset(fresh->bytes + to, 0, kPage - to);
  } else {  // copy on write: the other images keep theirs
    std::memcpy(fresh->bytes, page->bytes, from);
    std::memcpy(fresh->bytes + to, page->bytes + to, kPage - to);
  }
  page = std::move(fresh);
  return page->bytes;
}

void PagedImage::resize(size_t size) {
  if (size < size_ && size % kPage != 0 && pages_[size / kPage] != nullptr) {
    // The cut page's bytes past the new end must read as zeros if the image grows again.
    const size_t keep = size % kPage;
    std::memset(writable(size / kPage, keep, kPage) + keep, 0, kPage - keep);
  }
  pages_.resize(pages_for(size));  // new pages are null: zeros
  size_ = size;
}

void PagedImage::write(size_t offset, const char* data, size_t n) {
  const size_t end = offset + n;
  if (end > size_) resize(end);
  while (n > 0) {
    const size_t in_page = offset % kPage;
    const size_t piece = std::min(n, kPage - in_page);
    std::memcpy(writable(offset / kPage, in_page, in_page + piece) + in_page, data, piece);
    offset += piece;
    data += piece;
    n -= piece;
  }
}

void PagedImage::read(size_t offset, char* out, size_t n) const {
  FL_ASSERT(offset + n <= size_);
  while (n > 0) {
    const size_t in_page = offset % kPage;
    const size_t piece = std::min(n, kPage - in_page);
    const std::shared_ptr<Page>& page = pages_[offset / kPage];
    if (page == nullptr) {
      std::memset(out, 0, piece);
    } else {
      std::memcpy(out, page->bytes + in_page, piece);
    }
    offset += piece;
    out += piece;
    n -= piece;
  }
}

void PagedImage::share_pages_of(const PagedImage& other, size_t begin, size_t end) {
  FL_ASSERT(size_ == other.size_ && pages_.size() == other.pages_.size());
  end = std::min(end, size_);
  if (begin >= end) return;
  for (size_t i = begin / kPage; i <= (end - 1) / kPage; ++i) pages_[i] = other.pages_[i];
}

std::string PagedImage::to_string() const {
  std::string out(size_, '\0');
  read(0, out.data(), size_);
  return out;
}

size_t PagedImage::pages_held() const {
  return static_cast<size_t>(std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p != nullptr; }));
}

size_t PagedImage::pages_shared_with(const PagedImage& other) const {
  size_t n = 0;
  for (size_t i = 0; i < std::min(pages_.size(), other.pages_.size()); ++i) {
    if (pages_[i] != nullptr && pages_[i] == other.pages_[i]) ++n;
  }
  return n;
}

bool PagedImage::operator==(const PagedImage& other) const {
  if (size_ != other.size_) return false;
  static const Page kZeros{};
  for (size_t i = 0; i < pages_.size(); ++i) {
    if (pages_[i] == other.pages_[i]) continue;
    const Page& a = pages_[i] ? *pages_[i] : kZeros;
    const Page& b = other.pages_[i] ? *other.pages_[i] : kZeros;
    if (std::memcmp(a.bytes, b.bytes, kPage) != 0) return false;
  }
  return true;
}

}  // namespace fl::sim::storage
