// Test support: a RespServer (the simulated Redis over RESP) on a unix socket in a fresh
// directory, serving on a background thread until destruction. For tests only (uses GoogleTest
// and the hiredis connection of harness/real).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "harness/real/hiredis_client.h"
#include "harness/resp/resp_server.h"

namespace fl::resp {

// A RespServer on a unix socket in a fresh directory, serving on a background thread.
class ServedEngine {
 public:
  explicit ServedEngine(RespServerOptions o = {}) {
    char templ[] = "/tmp/fl-resp-XXXXXX";
    dir_ = ::mkdtemp(templ);
    o.unix_path = dir_ + "/resp.sock";
    server_ = std::make_unique<RespServer>(std::move(o));
    std::string error;
    listening_ = server_->listen(&error);
    EXPECT_TRUE(listening_) << error;
    if (listening_) thread_ = std::thread([this] { server_->serve(); });
  }
  ~ServedEngine() {
    server_->request_stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  real::RedisConnection connect() { return real::RedisConnection::unix_socket(server_->unix_path(), 3'000); }
  const std::string& socket_path() const { return server_->unix_path(); }
  RespServer& server() { return *server_; }

 private:
  std::string dir_;
  std::unique_ptr<RespServer> server_;
  bool listening_ = false;
  std::thread thread_;
};

}  // namespace fl::resp
