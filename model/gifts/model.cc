#include "model/gifts/model.h"

#include <cstdlib>

namespace fl::gifts::model {

std::string describe(const GiftKey& k) {
  return std::get<0>(k) + "/" + std::to_string(std::get<1>(k)) + "/" + std::get<2>(k);
}

std::map<std::string, std::string> parse_args(const std::string& args) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < args.size()) {
    size_t end = args.find(' ', i);
    if (end == std::string::npos) end = args.size();
    const std::string token = args.substr(i, end - i);
    const size_t eq = token.find('=');
    if (eq != std::string::npos) out[token.substr(0, eq)] = token.substr(eq + 1);
    i = end + 1;
  }
  return out;
}

int64_t arg_int(const std::map<std::string, std::string>& args, const std::string& key, int64_t fallback) {
  auto it = args.find(key);
  if (it == args.end() || it->second.empty()) return fallback;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

std::map<GiftKey, int64_t> totals(const std::vector<ChargedGift>& gifts) {
  std::map<GiftKey, int64_t> out;
  for (const ChargedGift& g : gifts) out[GiftKey{g.order.room, g.order.user, g.order.gift}] += g.order.count;
  return out;
}

}  // namespace fl::gifts::model
