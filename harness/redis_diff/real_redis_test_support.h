// Test support for the Redis differential suites (GoogleTest, RapidCheck; REDIS_SERVER_PATH set
// by the build): a fixture that starts one real redis-server for its test suite and stops it
// after, and a RapidCheck property run under GoogleTest with a chosen number of cases.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "harness/real/redis_server.h"
#include "harness/redis_diff/hiredis_side.h"

namespace fl::redis_diff {

// FAULTLINE_DIFF_SEQUENCES (a positive count) or `fallback`.
inline int sequences_from_env(int fallback) {
  const char* v = std::getenv("FAULTLINE_DIFF_SEQUENCES");  // tests may read the environment
  if (v == nullptr || *v == '\0') return fallback;
  const int n = std::atoi(v);
  return n > 0 ? n : fallback;
}

// Runs `property` as a RapidCheck property with `successes` cases of size up to `max_size`;
// RC_PARAMS still applies (seed, shrinking), except for max_success and max_size. A failure is a
// GoogleTest failure carrying RapidCheck's message (the shrunk counterexample, the seed).
template <typename Property>
void check_property(int successes, int max_size, Property property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = successes;
  params.maxSize = max_size;
  rc::detail::TestMetadata metadata;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto result = rc::detail::checkTestable(property, metadata, params);
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  if (!result.template is<rc::detail::SuccessResult>()) {
    ADD_FAILURE() << ss.str();
  } else {
    std::cout << ss.str() << std::endl;
  }
}

// A real redis-server for the whole test suite, reached over its unix socket.
class RealRedisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    real::RedisServerOptions o;
    o.binary_path = REDIS_SERVER_PATH;
    server_ = new real::RedisServer(real::RedisServer::start(o));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static HiredisSide real_side() {
    std::string path = server_->socket_path();
    return HiredisSide("redis-server", [path] { return real::RedisConnection::unix_socket(path, 5'000); });
  }
  static real::RedisServer* server() { return server_; }

 private:
  inline static real::RedisServer* server_ = nullptr;
};

}  // namespace fl::redis_diff
