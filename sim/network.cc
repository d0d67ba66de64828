#include "sim/network.h"

#include <algorithm>

#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl::sim {

namespace {

// A message as the fault log names it.
std::string message_text(const std::string& service, const MessagePtr& message) {
  return service + ": " + (message ? message->describe() : std::string("(null)"));
}
}  // namespace

Network::Network(World& world) : world_(world), rng_(world.stream("net")) {}

void Network::set_link(uint32_t from_node, uint32_t to_node, const LinkOptions& o) { links_[{from_node, to_node}] = o; }

const LinkOptions& Network::link(uint32_t from_node, uint32_t to_node) const {
  auto it = links_.find({from_node, to_node});
  return it == links_.end() ? default_link_ : it->second;
}

void Network::partition(uint32_t a, uint32_t b, bool one_way) {
  blocked_.insert({a, b});
  if (!one_way) blocked_.insert({b, a});
  world_.record_fault(FaultRecord{.time_us = world_.now_us(),
                                  .kind = FaultKind::kPartition,
                                  .node = world_.node(a).name,
                                  .peer_node = world_.node(b).name,
                                  .one_way = one_way});
  world_.note_fault(world_.node(a).name + "|" + world_.node(b).name, one_way ? "partition one-way" : "partition");
}

void Network::heal(uint32_t a, uint32_t b) {
  blocked_.erase({a, b});
  blocked_.erase({b, a});
  world_.record_fault(FaultRecord{.time_us = world_.now_us(),
                                  .kind = FaultKind::kHeal,
                                  .node = world_.node(a).name,
                                  .peer_node = world_.node(b).name});
  world_.note_fault(world_.node(a).name + "|" + world_.node(b).name, "heal");
}

void Network::heal_all() {
  blocked_.clear();
  clogged_until_us_.clear();
  world_.record_fault(FaultRecord{.time_us = world_.now_us(), .kind = FaultKind::kHeal});
  world_.note_fault("", "heal all links");
}

bool Network::blocked(uint32_t from_node, uint32_t to_node) const { return blocked_.count({from_node, to_node}) > 0; }

bool Network::clogged(uint32_t from_node, uint32_t to_node) const {
  for (const auto* until : {&clogged_until_us_, &clog_held_until_us_}) {
    auto it = until->find({from_node, to_node});
    if (it != until->end() && it->second > world_.now_us()) return true;
  }
  return false;
}

void Network::clog(uint32_t from_node, uint32_t to_node, int64_t duration_us) {
  int64_t& until = clogged_until_us_[{from_node, to_node}];
  until = std::max(until, world_.now_us() + duration_us);
  world_.record_fault(FaultRecord{.time_us = world_.now_us(),
                                  .kind = FaultKind::kClog,
                                  .node = world_.node(from_node).name,
                                  .peer_node = world_.node(to_node).name,
                                  .duration_us = duration_us,
                                  .one_way = true});
  world_.note_fault(world_.node(from_node).name + "|" + world_.node(to_node).name,
                    "clog " + std::to_string(duration_us) + "us");
}

void Network::reset_connections(Process& p) {
  ++p.connection_epoch_;
  world_.note_fault(p.name_, "connection reset");
  world_.record_process_fault(p, FaultKind::kReset);
  // Calls outstanding from or at this process end with kReset (indeterminate), in id order.
  std::vector<uint64_t> broken;
  for (const auto& [id, call] : pending_) {
    if (call.caller == p.index_ || call.server == p.index_) broken.push_back(id);
  }
  for (uint64_t id : broken) record_broken(id, "connection reset");
  // An at-least-once transport re-sends the requests the reset broke once it has reconnected.
  if (late_duplicating(p.index_)) {
    for (uint64_t id : broken) {
      const PendingCall& call = pending_.at(id);
      if (call.caller == p.index_) resend_late(p.index_, call.service, call.request, 1);
    }
  }
  for (uint64_t id : broken) finish_call(id, RpcStatus::kReset, nullptr);
}

void Network::late_duplicates(Process& p, int64_t delay_us, int64_t until_us) {
  FL_ASSERT(delay_us > 0);
  late_duplicates_[p.index_] = LateDuplicates{delay_us, until_us};
  world_.note_fault(p.name_, "late duplicates of its requests, " + std::to_string(delay_us) + "us late, until " +
                                 std::to_string(until_us) + "us");
}

bool Network::late_duplicating(uint32_t process) const {
  auto it = late_duplicates_.find(process);
  return it != late_duplicates_.end() && world_.now_us() < it->second.until_us;
}

// The copy is a new request on a new connection (the proxy's, or the client library's), to a
// server picked again; it has a call id of its own, so its reply finds no caller.
void Network::resend_late(uint32_t from, const std::string& service, MessagePtr request, int64_t delay_us) {
  world_.at(world_.now_us() + delay_us, [this, from, service, request, delay_us] {
    Process& sender = world_.process(from);
    Process* server = pick_server(service);
    if (server == nullptr) return;
    ++stats_.duplicated;
    world_.record_fault(FaultRecord{.time_us = world_.now_us(),
                                    .kind = FaultKind::kLateDuplicate,
                                    .node = world_.node(sender.node_).name,
                                    .process = sender.name_,
                                    .peer_node = world_.node(server->node_).name,
                                    .peer_process = server->name_,
                                    .value = delay_us,
                                    .cause = world_.current_cause(),
                                    .message = message_text(service, request)});
    Envelope env;
    env.from = from;
    env.to = server->index_;
    env.call_id = next_call_id_++;
    env.service = service;
    env.message = request;
    transmit(std::move(env));
  });
}

void Network::serve(Process& p, std::string_view service, RpcHandler handler) {
  FL_ASSERT(p.alive());
  p.handlers_[std::string(service)] = std::move(handler);
  if (!servers_.count(service)) note_first_serve(p, service);
  auto& servers = servers_[std::string(service)];
  if (std::find(servers.begin(), servers.end(), p.index_) == servers.end()) servers.push_back(p.index_);
}

void Network::on_message(Process& p, std::string_view service, OnewayHandler handler) {
  FL_ASSERT(p.alive());
  p.oneway_handlers_[std::string(service)] = std::move(handler);
  if (!servers_.count(service)) note_first_serve(p, service);
  auto& servers = servers_[std::string(service)];
  if (std::find(servers.begin(), servers.end(), p.index_) == servers.end()) servers.push_back(p.index_);
}

void Network::forget_process(Process& p) {
  ++p.connection_epoch_;
  for (auto& [name, servers] : servers_) {
    servers.erase(std::remove(servers.begin(), servers.end(), p.index_), servers.end());
  }
  // Its own outstanding calls vanish with its frames; calls it was serving see a reset.
  std::vector<uint64_t> own, served;
  for (const auto& [id, call] : pending_) {
    if (call.caller == p.index_)
      own.push_back(id);
    else if (call.server == p.index_)
      served.push_back(id);
  }
  for (uint64_t id : own) pending_.erase(id);
  for (uint64_t id : served) {
    record_broken(id, "server crashed");
    finish_call(id, RpcStatus::kReset, nullptr);
  }
}

std::vector<std::string> Network::services() const {
  std::vector<std::string> names;
  for (const auto& [name, servers] : servers_) {
    if (!servers.empty()) names.push_back(name);
  }
  return names;
}

Process* Network::pick_server(std::string_view service) {
  auto it = servers_.find(service);
  if (it == servers_.end()) return nullptr;
  std::vector<uint32_t> live;
  for (uint32_t index : it->second) {
    if (world_.process(index).alive()) live.push_back(index);
  }
  if (live.empty()) return nullptr;
  return &world_.process(live[rng_.below(live.size())]);
}

int64_t Network::draw_latency_us(const LinkOptions& link) {
  int64_t delay_us = link.latency_min_us + rng_.exponential(link.latency_mean_us);
  if (!link.fifo && rng_.chance(link.reorder_probability)) { delay_us += rng_.exponential(link.reorder_delay_mean_us); }
  return delay_us;
}

void Network::start_call(Process& caller, std::string_view service, MessagePtr request, int64_t timeout_us,
                         std::coroutine_handle<> waiter, RpcResult* slot) {
  FL_ASSERT(caller.alive());
  FL_ASSERT(timeout_us > 0);
  ++stats_.calls;
  const int64_t effect = world_.note_effect(caller, service, request.get());
  if (world_.crash_at_effect(caller, effect, /*before=*/true)) return;  // never sent
  if (world_.fail_at_effect(caller, effect, /*before=*/true, service, request.get())) {
    send_call(caller, service, std::move(request), timeout_us, waiter, slot, effect, /*refused=*/true);
    return;
  }
  if (world_.pause_at_call(caller, effect, /*before=*/true, service, request.get())) {
    // Paused right before sending: the call goes out in an event of the caller's, when it resumes.
    std::string name(service);
    world_.post(caller, world_.now_us(), [this, &caller, name, request, timeout_us, waiter, slot, effect] {
      send_call(caller, name, request, timeout_us, waiter, slot, effect);
    });
    return;
  }
  send_call(caller, service, std::move(request), timeout_us, waiter, slot, effect);
}

void Network::send_call(Process& caller, std::string_view service, MessagePtr request, int64_t timeout_us,
                        std::coroutine_handle<> waiter, RpcResult* slot, int64_t effect, bool refused) {
  const uint64_t call_id = next_call_id_++;
  Process* server = pick_server(service);
  PendingCall call{caller.index_, caller.incarnation_, server ? server->index_ : kNoProcess, waiter, slot, effect};
  call.service = std::string(service);
  call.request = request;
  call.cause = world_.current_cause();
  pending_.emplace(call_id, call);
  if (server == nullptr || refused) {
    // Refused because every server of it is down (a fault), not because nobody ever served it.
    if (refused) {
      record_broken(call_id, "refused at a fail point");
    } else if (servers_.count(service)) {
      record_broken(call_id, "refused: no live server");
    } else {
      auto& early = early_refusals_[call.service];
      if (early.size() >= kMaxEarlyRefusals) early.erase(early.begin());  // a service nobody serves
      early.push_back({world_.now_us(), caller.index_, call.cause, message_text(call.service, request)});
    }
    // Connection refused: certainly not executed. Resolved as a separate event (no re-entrancy).
    world_.post(caller, world_.now_us(), [this, call_id] { finish_call(call_id, RpcStatus::kUnavailable, nullptr); });
    return;
  }
  // Only a request that entered the network can be re-sent late: a refused one is certainly not
  // executed, and no copy of it exists (swarm-hardened-seed-ttls seed 6578: every replica down).
  if (late_duplicating(caller.index_)) {
    resend_late(caller.index_, call.service, request, late_duplicates_.at(caller.index_).delay_us);
  }
  world_.post(caller, world_.now_us() + timeout_us, [this, call_id] {
    if (pending_.count(call_id)) {
      ++stats_.timeouts;
      finish_call(call_id, RpcStatus::kTimeout, nullptr);
    }
  });
  Envelope env;
  env.from = caller.index_;
  env.to = server->index_;
  env.call_id = call_id;
  env.service = std::string(service);
  env.message = std::move(request);
  transmit(std::move(env));
}

void Network::send_oneway(Process& from, std::string_view service, MessagePtr message) {
  Process* to = pick_server(service);
  if (to == nullptr) {
    world_.trace().record(world_.now_us(), TraceKind::kDrop, "", from.name_, "no receiver for " + std::string(service));
    // Lost because every receiver of it is down (a fault), not because nobody ever received it.
    if (servers_.count(service)) {
      world_.record_fault(FaultRecord{.time_us = world_.now_us(),
                                      .kind = FaultKind::kMessageLost,
                                      .node = world_.node(from.node_).name,
                                      .process = from.name_,
                                      .detail = "no live receiver",
                                      .cause = world_.current_cause(),
                                      .message = message_text(std::string(service), message)});
    }
    return;
  }
  send_to(from, *to, service, std::move(message));
}

void Network::send_to(Process& from, Process& to, std::string_view service, MessagePtr message) {
  Envelope env;
  env.from = from.index_;
  env.to = to.index_;
  env.service = std::string(service);
  env.message = std::move(message);
  transmit(std::move(env));
}

void Network::transmit(Envelope env) {
  Process& from = world_.process(env.from);
  Process& to = world_.process(env.to);
  env.from_incarnation = from.incarnation_;
  env.to_incarnation = to.incarnation_;
  env.from_epoch = from.connection_epoch_;
  env.to_epoch = to.connection_epoch_;
  // The text is built only when the trace records it; the digest hashes the same bytes.
  env.digest = env.message ? env.message->digest() : stable_hash("(null)");
  env.cause = world_.current_cause();
  ++stats_.sent;
  world_.trace().fold_recorded(
      world_.now_us(), TraceKind::kSend, env.digest, env.call_id, world_.node(from.node_).name, from.name_, [&] {
        return std::string(env.is_reply ? "reply " : "send ") + env.service + " -> " + to.name_ + ": " +
               (env.message ? env.message->describe() : std::string("(null)"));
      });
  const LinkOptions& link = this->link(from.node_, to.node_);
  if (rng_.chance(link.drop_probability)) {
    ++stats_.dropped;
    record_loss(env, "dropped");
    world_.trace().fold(world_.now_us(), TraceKind::kDrop, env.digest, 1);
    return;
  }
  schedule_delivery(env, draw_latency_us(link));
  if (rng_.chance(link.duplicate_probability)) {
    ++stats_.duplicated;
    world_.trace().fold(world_.now_us(), TraceKind::kDuplicate, env.digest, 0);
    schedule_delivery(env, draw_latency_us(link));
  }
}

FaultRecord Network::between(const Process& from, const Process& to, FaultKind kind, std::string detail, uint64_t cause,
                             std::string message) const {
  return FaultRecord{.time_us = world_.now_us(),
                     .kind = kind,
                     .node = world_.node(from.node_).name,
                     .process = from.name_,
                     .peer_node = world_.node(to.node_).name,
                     .peer_process = to.name_,
                     .detail = std::move(detail),
                     .cause = cause,
                     .message = std::move(message)};
}

void Network::record_loss(const Envelope& env, const char* why) {
  world_.record_fault(between(world_.process(env.from), world_.process(env.to), FaultKind::kMessageLost,
                              std::string(env.is_reply ? "reply " : "") + why, env.cause,
                              message_text(env.service, env.message)));
}

void Network::record_clog_delay(const Envelope& env, int64_t delay_us) {
  FaultRecord r = between(world_.process(env.from), world_.process(env.to), FaultKind::kDelayed, "clog", env.cause,
                          message_text(env.service, env.message));
  r.value = delay_us;
  world_.record_fault(std::move(r));
}

void Network::note_first_serve(const Process& p, std::string_view service) {
  auto it = early_refusals_.find(service);
  if (it == early_refusals_.end()) return;
  if (p.fault_held_us_ == 0) {  // no fault made it late: the refusals were its start-up's
    early_refusals_.erase(it);
    return;
  }
  const std::vector<EarlyRefusal> refusals = std::move(it->second);
  early_refusals_.erase(it);
  // Without its faults, p would have served by now - held at the latest: only refusals since
  // then are theirs; earlier ones came while it was starting, as they would have anyway.
  const int64_t since_us = world_.now_us() - p.fault_held_us_;
  for (const EarlyRefusal& e : refusals) {
    if (e.time_us < since_us) continue;
    world_.record_fault(between(world_.process(e.caller), p, FaultKind::kCallBroken,
                                "refused: its server was held by a fault before it served", e.cause, e.message));
  }
}

void Network::record_broken(uint64_t call_id, const char* why) {
  const PendingCall& call = pending_.at(call_id);
  const Process& from = world_.process(call.caller);
  FaultRecord r{.time_us = world_.now_us(),
                .kind = FaultKind::kCallBroken,
                .node = world_.node(from.node_).name,
                .process = from.name_,
                .detail = why,
                .cause = call.cause,
                .message = message_text(call.service, call.request)};
  if (call.server != kNoProcess) {
    const Process& to = world_.process(call.server);
    r.peer_node = world_.node(to.node_).name;
    r.peer_process = to.name_;
  }
  world_.record_fault(std::move(r));
}

void Network::schedule_delivery(const Envelope& env, int64_t delay_us) {
  Process& from = world_.process(env.from);
  Process& to = world_.process(env.to);
  int64_t at_us = world_.now_us() + delay_us;
  bool held = false;
  auto clog = clogged_until_us_.find({from.node_, to.node_});
  if (clog != clogged_until_us_.end() && clog->second > at_us) {
    record_clog_delay(env, clog->second - at_us);
    at_us = clog->second;
    held = true;
  }
  if (link(from.node_, to.node_).fifo) {
    // Strictly after the previous message of this connection: same-instant events are ordered by
    // the seeded tie-break, which would reorder them.
    int64_t& last = fifo_last_us_[{env.from, env.to}];
    auto behind = fifo_clog_held_until_us_.find({env.from, env.to});
    if (!held && behind != fifo_clog_held_until_us_.end() && behind->second >= at_us) {
      // Behind a message a clog still holds (the clog may have been healed since): the clog
      // delays this one too, and the fault log says so.
      record_clog_delay(env, std::max(at_us, last + 1) - at_us);
      held = true;
    }
    at_us = std::max(at_us, last + 1);
    last = at_us;
    if (held) fifo_clog_held_until_us_[{env.from, env.to}] = at_us;
  }
  if (held) {
    int64_t& until = clog_held_until_us_[{from.node_, to.node_}];
    until = std::max(until, at_us);
  }
  // Delivery is a world action: the receiver's state is judged on arrival.
  world_.at(at_us, [this, env] { deliver(env); });
}

bool Network::connection_alive(const Envelope& env) const {
  const Process& from = world_.process(env.from);
  const Process& to = world_.process(env.to);
  return from.incarnation_ == env.from_incarnation && to.incarnation_ == env.to_incarnation &&
         from.connection_epoch_ == env.from_epoch && to.connection_epoch_ == env.to_epoch && to.alive();
}

void Network::deliver(const Envelope& env) {
  Process& from = world_.process(env.from);
  Process& to = world_.process(env.to);
  if (blocked(from.node_, to.node_) || !connection_alive(env)) {
    ++stats_.dropped;
    record_loss(env, blocked(from.node_, to.node_) ? "partition" : "connection gone");
    world_.trace().fold_recorded(world_.now_us(), TraceKind::kDrop, env.digest, env.call_id, world_.node(to.node_).name,
                                 to.name_, [&] {
                                   return "lost " + env.service + " from " + from.name_ +
                                          (blocked(from.node_, to.node_) ? " (partition)" : " (connection gone)");
                                 });
    return;
  }
  // The receiver handles it as its own event (deferred while paused, dropped if it dies first).
  world_.post(to, world_.now_us(), [this, env] {
    ++stats_.delivered;
    Process& receiver = world_.process(env.to);
    world_.trace().fold_recorded(world_.now_us(), TraceKind::kDeliver, env.digest, env.call_id,
                                 world_.node(receiver.node_).name, receiver.name_, [&] {
                                   return std::string(env.is_reply ? "reply " : "recv ") + env.service + " from " +
                                          world_.process(env.from).name_;
                                 });
    if (env.is_reply) {
      auto it = pending_.find(env.call_id);
      if (it != pending_.end() && it->second.caller_incarnation == receiver.incarnation_) {
        finish_call(env.call_id, RpcStatus::kOk, env.message);
      }
      return;
    }
    deliver_request(receiver, env);
  });
}

void Network::deliver_request(Process& to, const Envelope& env) {
  if (env.call_id == 0) {
    auto it = to.oneway_handlers_.find(env.service);
    if (it != to.oneway_handlers_.end()) {
      OnewayHandler handler = it->second;  // may unregister itself
      handler(env.message);
    }
    return;
  }
  auto it = to.handlers_.find(env.service);
  if (it == to.handlers_.end()) return;  // not served here (any more): the caller times out
  if (!watched_services_.empty() && watched_services_.count(env.service))
    deliveries_.push_back({world_.now_us(), env.cause, to.name_});
  RpcHandler handler = it->second;
  const uint32_t caller = env.from;
  const uint64_t call_id = env.call_id;
  const std::string service = env.service;
  MessagePtr request = env.message;
  to.spawn("rpc " + service,
           [](Network* net, Process* server, RpcHandler h, MessagePtr req, uint32_t caller_index, uint64_t id,
              std::string svc) -> Task<void> {
             MessagePtr reply = co_await h(std::move(req));
             Envelope back;
             back.from = server->index_;
             back.to = caller_index;
             back.call_id = id;
             back.is_reply = true;
             back.service = std::move(svc);
             back.message = std::move(reply);
             net->transmit(std::move(back));
           }(this, &to, std::move(handler), std::move(request), caller, call_id, service));
}

void Network::finish_call(uint64_t call_id, RpcStatus status, MessagePtr reply) {
  auto it = pending_.find(call_id);
  if (it == pending_.end()) return;  // already finished (a duplicate reply, a late timeout)
  PendingCall call = it->second;
  pending_.erase(it);
  if (status == RpcStatus::kReset) ++stats_.resets;
  Process& caller = world_.process(call.caller);
  if (!caller.alive() || caller.incarnation_ != call.caller_incarnation) return;
  if (status == RpcStatus::kOk &&
      world_.fail_at_effect(caller, call.effect, /*before=*/false, call.service, call.request.get())) {
    // Executed, its reply lost at a fail point: the call waits for its timeout, already scheduled.
    world_.record_fault(between(world_.process(call.server), caller, FaultKind::kMessageLost,
                                "reply lost at a fail point", call.cause, message_text(call.service, call.request)));
    pending_.emplace(call_id, std::move(call));
    return;
  }
  call.slot->status = status;
  call.slot->reply = std::move(reply);
  if (status == RpcStatus::kOk) {
    // The effect happened; a crash point "after" it kills the caller before it sees the reply.
    if (world_.crash_at_effect(caller, call.effect, /*before=*/false)) return;
    if (world_.pause_at_call(caller, call.effect, /*before=*/false, call.service, call.request.get())) {
      // Paused right after the reply: the caller sees it when the pause ends.
      world_.post(caller, world_.now_us(), [waiter = call.waiter] { waiter.resume(); });
      return;
    }
    call.waiter.resume();  // we are inside an event owned by the caller
  } else {
    // The caller resumes working for the call's operation, not for what ended the call (a reset or
    // a crash, injected: working for none).
    const uint64_t cause = world_.current_cause_;
    world_.current_cause_ = call.cause;
    world_.resume_at(caller, world_.now_us(), call.waiter);
    world_.current_cause_ = cause;
  }
}

}  // namespace fl::sim
