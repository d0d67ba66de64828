#include <exception>

#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl::sim {

namespace {

// The frame that owns a detached task. It starts suspended; its first resumption is scheduled
// like any other event. When it finishes it unregisters and destroys itself.
struct RootCoroutine {
  struct promise_type {
    Process* process = nullptr;
    std::exception_ptr error;
    RootCoroutine get_return_object() {
      return RootCoroutine{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      void await_suspend(std::coroutine_handle<promise_type> h) noexcept;
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };
  std::coroutine_handle<promise_type> handle;
};

RootCoroutine run_root(Task<void> task) { co_await std::move(task); }

}  // namespace

// Defined out of line: needs Process::root_finished.
class RootAccess {
 public:
  static void finished(Process& p, void* frame, std::exception_ptr error) { p.root_finished(frame, std::move(error)); }
};

void RootCoroutine::promise_type::FinalAwaiter::await_suspend(std::coroutine_handle<promise_type> h) noexcept {
  Process* p = h.promise().process;
  std::exception_ptr error = h.promise().error;
  void* frame = h.address();
  h.destroy();
  RootAccess::finished(*p, frame, std::move(error));
}

Process::Process(World& world, uint32_t index, uint32_t node, std::string name, BootFn boot)
    : world_(world),
      index_(index),
      node_(node),
      name_(std::move(name)),
      boot_(std::move(boot)),
      rng_(world.stream("process").fork(name_)) {}

Process::~Process() { destroy_frames(); }

std::string_view Process::node_name() const { return world_.nodes_[node_].name; }

int64_t Process::now_us() const { return world_.nodes_[node_].clock.local_us(world_.now_us_); }

void Process::note(std::string_view text) {
  world_.trace_.record(world_.now_us_, TraceKind::kUser, node_name(), name_, text);
}

void Process::resume_after_us(std::coroutine_handle<> h, int64_t delay_us) {
  const int64_t world_delay_us = world_.nodes_[node_].clock.world_delay_us(delay_us);
  world_.resume_at(*this, world_.now_us_ + world_delay_us, h);
}

Runtime::Suspended Process::capture(std::coroutine_handle<> h) { return Suspended{h, world_.current_cause_}; }

void Process::resume(const Suspended& s) {
  const uint64_t cause = world_.current_cause_;
  world_.current_cause_ = s.context;
  s.handle.resume();
  world_.current_cause_ = cause;
}

void Process::spawn(std::string_view name, Task<void> task) {
  FL_ASSERT(alive());  // a dead process spawns nothing
  FL_ASSERT(task.valid());
  RootCoroutine root = run_root(std::move(task));
  root.handle.promise().process = this;
  void* frame = root.handle.address();
  roots_.emplace(frame, root.handle);
  world_.trace_.fold_recorded(world_.now_us_, TraceKind::kProcess, index_, roots_.size(), node_name(), name_,
                              [&] { return "spawn " + std::string(name); });
  world_.resume_at(*this, world_.now_us_, root.handle);
}

void Process::root_finished(void* frame, std::exception_ptr error) {
  const size_t erased = roots_.erase(frame);
  FL_ASSERT(erased == 1);
  (void)erased;
  if (error) {
    std::string what = "uncaught exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) { what += std::string(": ") + e.what(); } catch (...) {
    }
    // An exception escaping a detached task takes the process down, as a panic would.
    world_.panic(*this, what);
  }
}

void Process::destroy_frames() {
  // Destroying a root destroys every frame it awaits (owned by Task locals).
  auto roots = std::move(roots_);
  roots_.clear();
  for (auto& [frame, handle] : roots) handle.destroy();
  handlers_.clear();
  oneway_handlers_.clear();
}

void Process::boot() {
  FL_ASSERT(!alive());
  ++incarnation_;
  ++connection_epoch_;
  state_ = ProcessState::kRunning;
  paused_until_us_ = 0;
  booted_us_ = world_.now_us_;
  crashed_by_fault_ = false;
  world_.trace_.record(world_.now_us_, TraceKind::kProcess, node_name(), name_,
                       "boot incarnation " + std::to_string(incarnation_));
  // A boot works for no operation, whatever event restarted the process.
  const uint64_t cause = world_.current_cause_;
  world_.current_cause_ = 0;
  if (boot_) spawn("main", boot_(*this));
  world_.current_cause_ = cause;
}

namespace {
struct CallAwaiter {
  Process* process;
  Network* network;
  std::string_view service;
  MessagePtr request;
  int64_t timeout_us;
  RpcResult* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    network->start_call(*process, service, std::move(request), timeout_us, h, slot);
  }
  void await_resume() const noexcept {}
};
}  // namespace

Task<RpcResult> Process::call(std::string_view service, MessagePtr request, int64_t timeout_us) {
  const std::string service_name(service);  // the caller's view may not outlive the call
  RpcResult result;
  co_await CallAwaiter{this, &world_.network(), service_name, std::move(request), timeout_us, &result};
  co_return std::move(result);
}

void Process::serve(std::string_view service, RpcHandler handler) {
  world_.network().serve(*this, service, std::move(handler));
}

void Process::send(std::string_view service, MessagePtr message) {
  world_.network().send_oneway(*this, service, std::move(message));
}

void Process::on_message(std::string_view service, OnewayHandler handler) {
  world_.network().on_message(*this, service, std::move(handler));
}

}  // namespace fl::sim
