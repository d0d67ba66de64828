// PagedImage against the plain string it replaces: any sequence of writes, resizes, copies and
// page sharing leaves each image's bytes what a std::string given the same operations holds, and
// copies share the pages no write changed.
#include "sim/storage/paged_image.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fl::sim::storage {
namespace {

constexpr size_t kPage = PagedImage::kPageBytes;

// The model of one image: a string, grown with zeros.
void model_write(std::string& s, size_t offset, const std::string& data) {
  if (s.size() < offset + data.size()) s.resize(offset + data.size(), '\0');
  s.replace(offset, data.size(), data);
}

std::string read_all(const PagedImage& image) {
  std::string out(image.size(), 'x');
  image.read(0, out.data(), out.size());
  return out;
}

// Two images, like SimVfs's current and durable: ops go to `current`; a sync makes `durable`
// equal to it by sharing the pages written or cut since the last sync, and a crash copies
// `durable` back.
RC_GTEST_PROP(PagedImage, BehavesAsTheStringItReplaces, ()) {
  PagedImage current, durable;
  std::string current_model, durable_model;
  std::vector<std::pair<size_t, size_t>> written;  // ranges since the last sync
  const int steps = *rc::gen::inRange(1, 60);
  for (int i = 0; i < steps; ++i) {
    const int op = *rc::gen::inRange(0, 5);
    const size_t max_offset = 5 * kPage;
    if (op == 0 || op == 1) {
      const size_t offset = *rc::gen::inRange<size_t>(0, max_offset);
      const size_t n = *rc::gen::inRange<size_t>(0, 2 * kPage + 100);
      const std::string data(n, static_cast<char>(*rc::gen::inRange(1, 255)));
      current.write(offset, data.data(), data.size());
      model_write(current_model, offset, data);
      written.emplace_back(offset, offset + n);
    } else if (op == 2) {
      const size_t size = *rc::gen::inRange<size_t>(0, max_offset + kPage);
      current.resize(size);
      current_model.resize(size, '\0');
      written.emplace_back(size, std::string::npos);  // a cut touches every page from its size on
    } else if (op == 3) {                             // sync, as SimVfs's make_durable
      durable.resize(current.size());
      for (const auto& [b, e] : written) durable.share_pages_of(current, b, std::min(e, current.size()));
      durable_model = current_model;
      written.clear();
    } else {  // crash
      current = durable;
      current_model = durable_model;
      written.clear();
    }
    RC_ASSERT(current.size() == current_model.size());
    RC_ASSERT(read_all(current) == current_model);
    RC_ASSERT(current.to_string() == current_model);
  }
  RC_ASSERT(durable.to_string() == durable_model);
  RC_ASSERT((current == durable) == (current_model == durable_model));
}

TEST(PagedImage, ACopySharesEveryPageUntilOneIsWritten) {
  PagedImage a;
  const std::string data(3 * kPage, 'a');
  a.write(0, data.data(), data.size());
  PagedImage b = a;
  EXPECT_EQ(b.pages_shared_with(a), 3u);
  b.write(kPage + 10, "b", 1);  // copies the middle page only
  EXPECT_EQ(b.pages_shared_with(a), 2u);
  EXPECT_EQ(a.to_string(), data);
  EXPECT_EQ(b.to_string()[kPage + 10], 'b');
  b.share_pages_of(a, kPage, kPage + 1);
  EXPECT_EQ(b.pages_shared_with(a), 3u);
  EXPECT_EQ(b, a);
}

TEST(PagedImage, HolesAndCutBytesReadAsZeros) {
  PagedImage a;
  a.write(2 * kPage + 5, "x", 1);
  EXPECT_EQ(a.size(), 2 * kPage + 6);
  EXPECT_EQ(a.pages_held(), 1u);  // the hole before it is not allocated
  a.write(10, "yyyy", 4);
  a.resize(12);  // cuts "yy" off
  a.resize(20);
  EXPECT_EQ(a.to_string(), std::string(10, '\0') + "yy" + std::string(8, '\0'));
}

}  // namespace
}  // namespace fl::sim::storage
