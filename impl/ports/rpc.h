// Rpc: request/response and one-way messages between processes.
//
// Contract
// - Messages are immutable values behind shared pointers (a duplicated message is the same
//   object delivered twice). describe() renders a message for traces and evidence; it must be
//   deterministic (no pointers, no hash-map order).
// - call(service, request, timeout_us) sends `request` to the process serving `service` and waits
//   for its reply. The result is one of:
//     kOk          the reply arrived;
//     kTimeout     no reply within timeout_us: the request may or may not have been executed
//                  (indeterminate, Jepsen's :info);
//     kReset       the connection broke while the call was outstanding: also indeterminate;
//     kUnavailable nothing serves that name right now (no live server: connection refused);
//                  the request was not sent, so it certainly did not execute.
//   Errors are values; call() never throws for transport reasons.
// - serve(service, handler) registers this process as the server of `service`; every delivered
//   request (duplicates included) runs `handler` in a task of this process, whose result is sent
//   back as the reply. A crash drops in-flight handlers; the registration is redone by the
//   process's boot code on restart.
// - send(service, message) is a one-way message (a push); delivery is at most once.
//   on_message(service, handler) registers a one-way receiver.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "impl/ports/stable_hash.h"
#include "impl/ports/task.h"

namespace fl {

class Message {
 public:
  virtual ~Message() = default;
  virtual std::string describe() const = 0;
  // Always stable_hash(describe()): the network folds it into the trace fingerprint for every
  // message it carries. Messages whose value can render itself into a StableHasher compute it
  // without building the text (a ranking flush carries its whole checkpoint).
  virtual uint64_t digest() const { return stable_hash(describe()); }
};
using MessagePtr = std::shared_ptr<const Message>;

// A message carrying one value of type T. T needs `std::string describe() const`; it may have
// `void describe_to(StableHasher&) const`, which must hash exactly the bytes of describe().
template <typename T>
class ValueMessage final : public Message {
 public:
  explicit ValueMessage(T&& v) : value(std::move(v)) {}
  explicit ValueMessage(const T& v) : value(v) {}
  std::string describe() const override { return value.describe(); }
  uint64_t digest() const override {
    if constexpr (requires(StableHasher & h) { value.describe_to(h); }) {
      StableHasher h;
      value.describe_to(h);
      return h.finish();
    } else {
      return stable_hash(describe());
    }
  }
  T value;
};

template <typename T>
MessagePtr make_message(T value) {
  return std::make_shared<const ValueMessage<T>>(std::move(value));
}

// Returns the T inside `m`, or nullptr when `m` carries something else.
template <typename T>
const T* message_as(const MessagePtr& m) {
  auto* typed = dynamic_cast<const ValueMessage<T>*>(m.get());
  return typed ? &typed->value : nullptr;
}

enum class RpcStatus : uint8_t { kOk, kTimeout, kReset, kUnavailable };
const char* rpc_status_name(RpcStatus s);

struct RpcResult {
  RpcStatus status = RpcStatus::kOk;
  MessagePtr reply;
  bool ok() const { return status == RpcStatus::kOk; }
  // True when the request may have been executed although no reply came back.
  bool indeterminate() const { return status == RpcStatus::kTimeout || status == RpcStatus::kReset; }
};

using RpcHandler = std::function<Task<MessagePtr>(MessagePtr request)>;
using OnewayHandler = std::function<void(MessagePtr message)>;

class Rpc {
 public:
  virtual ~Rpc() = default;
  virtual Task<RpcResult> call(std::string_view service, MessagePtr request, int64_t timeout_us) = 0;
  virtual void serve(std::string_view service, RpcHandler handler) = 0;
  virtual void send(std::string_view service, MessagePtr message) = 0;
  virtual void on_message(std::string_view service, OnewayHandler handler) = 0;
};

}  // namespace fl
