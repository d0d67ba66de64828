// Network: messages between simulated processes, with the faults real networks have.
//
// Model
// - Each directed pair of nodes is a link with LinkOptions: latency (minimum + exponential mean),
//   drop, duplicate and reorder probabilities, and FIFO (TCP-like: per connection, messages are
//   delivered in send order; duplicates/reorders then apply only to non-FIFO links).
// - Partitions block a directed node pair (symmetric = both directions). Messages in flight when
//   a partition starts are lost when they arrive at the cut.
// - Clogging holds a link's messages until the clog ends (delayed, not lost).
// - A connection reset of a process breaks every connection it has: messages in flight to or
//   from it are dropped, and its outstanding calls, and calls outstanding at it, end with kReset.
// - A call's reply may be lost; the caller then sees kTimeout — an indeterminate outcome.
// - Late duplicates (an at-least-once transport: a proxy or load balancer that re-sends a
//   request, or a client library that retries on its own): while late_duplicates() is on for a
//   process, every request it sends is delivered once more, delay_us after it was sent, to a
//   server picked again, on a fresh connection, so the copy arrives after its original completed
//   and after later requests of the same client (reordered with them); its reply goes nowhere.
//   A connection reset of that process re-sends each of its outstanding requests right after
//   the reconnect. Each copy is in the fault log (kLateDuplicate, value = its delay).
//
// The network is part of a World and schedules through it; it owns the table of services.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "impl/ports/rpc.h"
#include "sim/fault_log.h"
#include "sim/rng.h"

namespace fl::sim {

class World;
class Process;

struct LinkOptions {
  int64_t latency_min_us = 200;
  double latency_mean_us = 300;  // exponential extra latency, mean
  double drop_probability = 0;
  double duplicate_probability = 0;
  double reorder_probability = 0;  // chance of an extra delay of mean reorder_delay_mean_us
  double reorder_delay_mean_us = 5000;
  bool fifo = true;  // TCP-like links keep per-connection order
};

struct NetworkStats {
  uint64_t sent = 0, delivered = 0, dropped = 0, duplicated = 0, calls = 0, timeouts = 0, resets = 0;
};

class Network {
 public:
  explicit Network(World& world);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Link configuration. set_default applies to every pair without an override.
  void set_default_link(const LinkOptions& o) { default_link_ = o; }
  const LinkOptions& default_link() const { return default_link_; }
  void set_link(uint32_t from_node, uint32_t to_node, const LinkOptions& o);
  const LinkOptions& link(uint32_t from_node, uint32_t to_node) const;

  // Faults.
  void partition(uint32_t a, uint32_t b, bool one_way = false);
  void heal(uint32_t a, uint32_t b);
  void heal_all();
  bool blocked(uint32_t from_node, uint32_t to_node) const;
  // A clog holds every message from `from_node` to `to_node` until it ends (then delivers them).
  void clog(uint32_t from_node, uint32_t to_node, int64_t duration_us);
  // True while a clog holds that direction: a message sent now may arrive only when it ends. A
  // heal ends the clog for new connections, but the messages it already holds arrive when it was
  // due to end, and a FIFO link delivers the later messages of the same connection after them:
  // the direction stays held until the last of those arrives.
  bool clogged(uint32_t from_node, uint32_t to_node) const;
  void reset_connections(Process& p);
  // Re-sends every request `p` sends until until_us once more, delay_us late (see above).
  void late_duplicates(Process& p, int64_t delay_us, int64_t until_us);

  // Services.
  void serve(Process& p, std::string_view service, RpcHandler handler);
  void on_message(Process& p, std::string_view service, OnewayHandler handler);
  // Called by World when a process crashes: drops its registrations and pending calls.
  void forget_process(Process& p);
  std::vector<std::string> services() const;

  // Operations used by Process's Rpc implementation.
  void start_call(Process& caller, std::string_view service, MessagePtr request, int64_t timeout_us,
                  std::coroutine_handle<> waiter, RpcResult* slot);
  void send_oneway(Process& from, std::string_view service, MessagePtr message);
  // Sends directly to a process (pub/sub pushes and similar), to `service` registered there.
  void send_to(Process& from, Process& to, std::string_view service, MessagePtr message);

  const NetworkStats& stats() const { return stats_; }

  // What the network delivered, for judges: each request of a watched service that reached a
  // server which handles it, with when, which server and the operation it works for.
  struct Delivery {
    int64_t time_us = 0;
    uint64_t cause = 0;  // the operation (World::current_cause of the sender), 0 for none
    std::string server;  // process name
  };
  void watch_deliveries(std::string_view service) { watched_services_.insert(std::string(service)); }
  const std::vector<Delivery>& deliveries() const { return deliveries_; }

 private:
  struct Envelope {
    uint32_t from = 0, to = 0;  // process indices
    uint32_t from_incarnation = 0, to_incarnation = 0;
    uint64_t from_epoch = 0, to_epoch = 0;  // connection epochs at send
    uint64_t call_id = 0;                   // 0 for one-way messages
    bool is_reply = false;
    std::string service;
    MessagePtr message;
    uint64_t digest = 0;
    uint64_t cause = 0;  // the operation it works for (World::current_cause)
  };
  struct PendingCall {
    uint32_t caller = 0, caller_incarnation = 0, server = 0;
    std::coroutine_handle<> waiter;
    RpcResult* slot = nullptr;
    int64_t effect = -1;  // index in World::effects(), -1 when not watched
    std::string service;  // kept to re-send it after a reconnect (late duplicates), and named
    MessagePtr request;   // in the fault log when a crash or reset breaks the call
    uint64_t cause = 0;   // the operation it works for
  };
  struct LateDuplicates {
    int64_t delay_us = 0;
    int64_t until_us = 0;
  };

  // start_call's second half: the call leaves (after a pause point before it, when that ends), or,
  // `refused` (a fail point before it), is refused as a connection to a down server is.
  void send_call(Process& caller, std::string_view service, MessagePtr request, int64_t timeout_us,
                 std::coroutine_handle<> waiter, RpcResult* slot, int64_t effect, bool refused = false);
  void transmit(Envelope env);
  // The world's fault log: a message was lost (`why`: partition, drop, connection gone), held back
  // by a clog, or a call broken by a crash or reset (sim/fault_log.h).
  void record_loss(const Envelope& env, const char* why);
  void record_clog_delay(const Envelope& env, int64_t delay_us);
  void record_broken(uint64_t call_id, const char* why);
  void schedule_delivery(const Envelope& env, int64_t delay_us);
  // `p` serves `service`, which nobody served before: each call refused for it since faults began
  // holding `p` (its pauses and downtime delayed this first serve by as much) is recorded as
  // broken by them, as a refusal of a served service is (a pause of a DB at 0 s, before its
  // server started: likes' swarm-hardened-fill-races seeds 8171 and 15959).
  void note_first_serve(const Process& p, std::string_view service);
  // A fault record, now, of a message or call from `from` to `to`.
  FaultRecord between(const Process& from, const Process& to, FaultKind kind, std::string detail, uint64_t cause,
                      std::string message) const;
  void deliver(const Envelope& env);
  void deliver_request(Process& to, const Envelope& env);
  void finish_call(uint64_t call_id, RpcStatus status, MessagePtr reply);
  Process* pick_server(std::string_view service);
  int64_t draw_latency_us(const LinkOptions& link);
  bool connection_alive(const Envelope& env) const;
  bool late_duplicating(uint32_t process) const;
  void resend_late(uint32_t from, const std::string& service, MessagePtr request, int64_t delay_us);

  World& world_;
  Rng rng_;
  LinkOptions default_link_;
  std::map<std::pair<uint32_t, uint32_t>, LinkOptions> links_;
  std::set<std::pair<uint32_t, uint32_t>> blocked_;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> clogged_until_us_;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> fifo_last_us_;  // per process pair
  // The latest arrival of a message a clog held (or that waited behind one on a FIFO link): per
  // node pair for clogged(), per process pair for the FIFO wait. A heal does not recall them.
  std::map<std::pair<uint32_t, uint32_t>, int64_t> clog_held_until_us_;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> fifo_clog_held_until_us_;
  std::map<std::string, std::vector<uint32_t>, std::less<>> servers_;
  // Calls refused because nobody had served their service yet: when a server first serves it,
  // those its faults may have caused are recorded as broken (note_first_serve).
  struct EarlyRefusal {
    int64_t time_us = 0;
    uint32_t caller = 0;
    uint64_t cause = 0;
    std::string message;
  };
  static constexpr size_t kMaxEarlyRefusals = 4096;  // per service: the newest are the ones a hold explains
  std::map<std::string, std::vector<EarlyRefusal>, std::less<>> early_refusals_;
  std::map<uint64_t, PendingCall> pending_;
  std::set<std::string, std::less<>> watched_services_;
  std::vector<Delivery> deliveries_;
  std::map<uint32_t, LateDuplicates> late_duplicates_;  // by sending process
  uint64_t next_call_id_ = 1;
  NetworkStats stats_;
};

}  // namespace fl::sim
