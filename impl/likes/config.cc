#include "impl/likes/config.h"

namespace fl::likes {

std::string like_key(int64_t asset, int64_t user) {
  return "asset:like:" + std::to_string(asset) + ":" + std::to_string(user);
}
std::string count_key(int64_t asset) { return "asset:like_count:" + std::to_string(asset); }
std::string like_version_key(int64_t asset, int64_t user) {
  return "asset:like_ver:" + std::to_string(asset) + ":" + std::to_string(user);
}
std::string count_version_key(int64_t asset) { return "asset:like_count_ver:" + std::to_string(asset); }
std::string like_lease_key(int64_t asset, int64_t user) {
  return "asset:like_lease:" + std::to_string(asset) + ":" + std::to_string(user);
}
std::string count_lease_key(int64_t asset) { return "asset:like_count_lease:" + std::to_string(asset); }

}  // namespace fl::likes
