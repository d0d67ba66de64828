#include "harness/resp/resp_server.h"
#include "impl/ports/assert.h"
#include "sim/redis/commands.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

namespace fl::resp {
namespace {

using sim::redis::Engine;

bool set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_subscription_command(const std::string& name) {
  std::string n = upper(name);
  return n == "SUBSCRIBE" || n == "UNSUBSCRIBE" || n == "PSUBSCRIBE" || n == "PUNSUBSCRIBE";
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

RespServer::RespServer(RespServerOptions options) : options_(std::move(options)), engine_(options_.engine) {
  if (::pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  clients_epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  FL_ASSERT(clients_epoll_fd_ >= 0);
  engine_.set_script_hook([this] { serve_while_script_runs(); });
}

RespServer::~RespServer() {
  for (auto& [id, c] : clients_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  clients_.clear();
  if (unix_fd_ >= 0) ::close(unix_fd_);
  if (tcp_fd_ >= 0) ::close(tcp_fd_);
  if (created_unix_file_) ::unlink(options_.unix_path.c_str());
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
  if (clients_epoll_fd_ >= 0) ::close(clients_epoll_fd_);
}

std::vector<std::string> RespServer::preload_scripts() {
  std::vector<std::string> loaded;
  if (!options_.engine.scripts) return loaded;
  sim::redis::Session loader;
  loader.id = next_session_id_++;
  for (const std::string& name : options_.engine.scripts->names()) {
    const RedisReply r =
        engine_.execute(loader, {"SCRIPT", "LOAD", options_.engine.scripts->by_name(name)->lua}, now_ms());
    FL_ASSERT(r.str == options_.engine.scripts->sha1_of(name));
    loaded.push_back(name + " " + r.str);
  }
  engine_.close_session(loader);
  return loaded;
}

int64_t RespServer::now_ms() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool RespServer::listen(std::string* error) {
  if (options_.unix_path.empty() && options_.tcp_port < 0) {
    *error = "nothing to listen on: give a unix socket path or a TCP port";
    return false;
  }
  if (!options_.unix_path.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (options_.unix_path.size() >= sizeof(addr.sun_path)) {
      *error = "unix socket path too long (max " + std::to_string(sizeof(addr.sun_path) - 1) + ")";
      return false;
    }
    std::memcpy(addr.sun_path, options_.unix_path.c_str(), options_.unix_path.size() + 1);
    unix_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (unix_fd_ < 0) {
      *error = errno_text("socket");
      return false;
    }
    ::unlink(options_.unix_path.c_str());  // a stale socket file from a dead server
    if (::bind(unix_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(unix_fd_, 511) != 0) {
      *error = errno_text("bind/listen " + options_.unix_path);
      return false;
    }
    created_unix_file_ = true;
    set_nonblocking(unix_fd_);
  }
  if (options_.tcp_port >= 0) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(options_.tcp_port));
    if (::inet_pton(AF_INET, options_.tcp_host.c_str(), &addr.sin_addr) != 1) {
      *error = "bad IPv4 address: " + options_.tcp_host;
      return false;
    }
    tcp_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (tcp_fd_ < 0) {
      *error = errno_text("socket");
      return false;
    }
    int one = 1;
    ::setsockopt(tcp_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(tcp_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(tcp_fd_, 511) != 0) {
      *error = errno_text("bind/listen " + options_.tcp_host + ":" + std::to_string(options_.tcp_port));
      return false;
    }
    socklen_t len = sizeof addr;
    ::getsockname(tcp_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    bound_port_ = ntohs(addr.sin_port);
    set_nonblocking(tcp_fd_);
  }
  return true;
}

void RespServer::request_stop() {
  stopping_ = true;
  if (wake_pipe_[1] >= 0) {
    char b = 1;
    (void)!::write(wake_pipe_[1], &b, 1);
  }
}

void RespServer::serve() {
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the server
  while (!stopping_) poll_once(1000);
}

void RespServer::poll_once(int timeout_ms) {
  // Timers first: the engine's cron and blocked readers' deadlines.
  int64_t now = now_ms();
  if (now >= next_tick_ms_) {
    engine_.tick(now);
    next_tick_ms_ = now + options_.tick_interval_ms;
    after_command();  // an expired stream wakes its blocked readers
  }
  expire_blocked();
  int64_t wait_ms = std::min<int64_t>(timeout_ms, std::max<int64_t>(0, next_tick_ms_ - now));
  for (uint64_t id : blocked_order_) {
    const Client& c = *clients_.at(id);
    if (c.blocked_deadline_ms > 0) wait_ms = std::min(wait_ms, std::max<int64_t>(0, c.blocked_deadline_ms - now));
  }
  poll_fds(static_cast<int>(wait_ms), /*skip_session=*/0);
  reap_closed();
}

void RespServer::serve_while_script_runs() {
  if (serving_busy_ || running_session_ == 0) return;
  if (stopping_) engine_.kill_running_script();  // a stopping server must not wait for a script
  if (now_ms() - running_since_ms_ < engine_.options().busy_reply_threshold_ms) return;
  engine_.set_script_busy(true);
  serving_busy_ = true;
  poll_fds(0, running_session_);  // the running client's later commands wait behind its script
  serving_busy_ = false;
}

void RespServer::poll_fds(int timeout_ms, uint64_t skip_session) {
  std::vector<pollfd> fds;
  std::vector<uint64_t> owners;  // 0 for non-client fds
  auto add = [&](int fd, short events, uint64_t owner) {
    fds.push_back(pollfd{fd, events, 0});
    owners.push_back(owner);
  };
  if (wake_pipe_[0] >= 0) add(wake_pipe_[0], POLLIN, 0);
  for (int fd : stop_fds_) add(fd, POLLIN, 0);
  if (unix_fd_ >= 0) add(unix_fd_, POLLIN, 0);
  if (tcp_fd_ >= 0) add(tcp_fd_, POLLIN, 0);
  add(clients_epoll_fd_, POLLIN, 0);  // a client has bytes to read
  for (auto& [id, c] : clients_) {
    if (id != skip_session && !c->closed && !c->out.empty()) add(c->fd, POLLOUT, id);
  }
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0) return;  // EINTR: the next round handles timers
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    int fd = fds[i].fd;
    if (owners[i] == 0) {
      if (fd == wake_pipe_[0]) {
        char buf[64];
        while (::read(fd, buf, sizeof buf) > 0) {}
      } else if (fd == unix_fd_ || fd == tcp_fd_) {
        accept_clients(fd);
      } else if (fd == clients_epoll_fd_) {
        read_ready_clients(skip_session);
      } else {
        stopping_ = true;  // a stop fd
      }
      continue;
    }
    auto it = clients_.find(owners[i]);
    if (it != clients_.end() && !it->second->closed && !it->second->out.empty()) write_client(*it->second);
  }
  // Flush whatever other clients received (replies, pub/sub pushes, woken readers).
  for (auto& [id, c] : clients_) {
    if (id != skip_session && !c->closed && !c->out.empty()) write_client(*c);
  }
}

// Reads the clients that have bytes in the order their bytes came, as Redis's event loop does: a
// command sent on one connection before a command on another runs first, even when both wait in
// the same round (a reader that blocks on a stream, then another client's DEL of it). epoll's
// ready list is in the order the sockets were woken; a client not read now (its own script is
// running) stays ready (level-triggered) and is read in a later round.
void RespServer::read_ready_clients(uint64_t skip_session) {
  epoll_event events[64];
  const int n = ::epoll_wait(clients_epoll_fd_, events, 64, 0);
  for (int i = 0; i < n; ++i) {
    const uint64_t id = events[i].data.u64;
    if (id == skip_session) continue;
    auto it = clients_.find(id);
    if (it != clients_.end() && !it->second->closed) read_client(*it->second);
  }
}

void RespServer::accept_clients(int listen_fd) {
  while (true) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (listen_fd == tcp_fd_) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->session.id = next_session_id_++;
    epoll_event interest{};
    interest.events = EPOLLIN;  // level-triggered: see read_ready_clients
    interest.data.u64 = c->session.id;
    if (::epoll_ctl(clients_epoll_fd_, EPOLL_CTL_ADD, fd, &interest) != 0) {
      ::close(fd);
      continue;
    }
    clients_.emplace(c->session.id, std::move(c));
  }
}

void RespServer::read_client(Client& c) {
  char buf[16 * 1024];
  while (true) {
    ssize_t r = ::read(c.fd, buf, sizeof buf);
    if (r > 0) {
      c.parser.feed(std::string_view(buf, static_cast<size_t>(r)));
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      process_client(c);  // commands that arrived before the hang-up still run
      close_client(c);
      return;
    }
    if (errno == EINTR) continue;
    break;
  }
  process_client(c);
}

void RespServer::write_client(Client& c) {
  while (!c.out.empty()) {
    ssize_t w = ::write(c.fd, c.out.data(), c.out.size());
    if (w > 0) {
      c.out.erase(0, static_cast<size_t>(w));
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_client(c);
    return;
  }
  if (c.close_after_write) close_client(c);
}

void RespServer::process_client(Client& c) {
  std::vector<std::string> argv;
  std::string error;
  while (!c.closed && !c.close_after_write && !c.blocked_argv) {
    RequestParser::Status s = c.parser.next(&argv, &error);
    if (s == RequestParser::Status::kNeedMore) return;
    if (s == RequestParser::Status::kError) {
      encode(RedisReply::error(error), &c.out);
      c.close_after_write = true;
      return;
    }
    run_command(c, argv);
  }
}

void RespServer::run_command(Client& c, const std::vector<std::string>& argv) {
  FL_ASSERT(!argv.empty());
  ++commands_;
  if (upper(argv[0]) == "QUIT") {
    encode(RedisReply::ok(), &c.out);
    c.close_after_write = true;
    return;
  }
  if (argv.size() >= 2 && upper(argv[0]) == "CLIENT" && upper(argv[1]) == "REPLY") return client_reply(c, argv);
  if (argv.size() >= 2 && upper(argv[0]) == "CLIENT" && upper(argv[1]) == "UNBLOCK") {
    client_unblock(c, argv);
    return after_command();
  }
  c.skipping = c.skip_next;  // CLIENT REPLY SKIP silences this command's reply
  c.skip_next = false;
  const int64_t now = now_ms();
  const bool outermost = !serving_busy_;
  if (outermost) {  // a script it runs may serve other clients (serve_while_script_runs)
    running_session_ = c.session.id;
    running_since_ms_ = now;
  }
  RedisReply reply = engine_.execute(c.session, argv, now);
  if (outermost) {
    running_session_ = 0;
    engine_.set_script_busy(false);
  }
  if (c.session.blocked) {
    c.blocked_argv = c.session.blocked->argv.empty() ? argv : c.session.blocked->argv;
    c.blocked_deadline_ms = c.session.blocked->timeout_ms > 0 ? now + c.session.blocked->timeout_ms : 0;
    blocked_order_.push_back(c.session.id);
    engine_.set_blocked_clients(blocked_order_.size());
  } else {
    write_reply(c, argv, reply);
  }
  after_command();
}

// CLIENT REPLY ON|OFF|SKIP (networking.c): OFF and SKIP answer nothing; ON answers OK.
void RespServer::client_reply(Client& c, const std::vector<std::string>& argv) {
  const std::string mode = argv.size() == 3 ? upper(argv[2]) : "";
  if (mode == "ON") {
    c.reply_off = c.skip_next = false;
    encode(RedisReply::ok(), c.session.protocol, &c.out);
  } else if (mode == "OFF") {
    c.reply_off = true;
  } else if (mode == "SKIP") {
    if (!c.reply_off) c.skip_next = true;
  } else {
    encode(RedisReply::error("ERR syntax error"), c.session.protocol, &c.out);
  }
}

void RespServer::write_reply(Client& c, const std::vector<std::string>& argv, const RedisReply& reply) {
  // (P)(UN)SUBSCRIBE confirm each channel with a reply of its own.
  bool split = is_subscription_command(argv[0]) && reply.kind == RedisReply::Kind::kArray && !reply.elements.empty() &&
               std::all_of(reply.elements.begin(), reply.elements.end(),
                           [](const RedisReply& e) { return e.kind == RedisReply::Kind::kArray; });
  // Replies silenced by CLIENT REPLY; pub/sub pushes (confirmations included) are still sent.
  if ((c.reply_off || c.skipping) && !split) return;
  const int protocol = c.session.protocol;
  if (split) {
    // RESP3 sends subscription confirmations as pushes.
    for (const auto& e : reply.elements) {
      RedisReply confirm = e;
      confirm.resp3 = RedisReply::Resp3::kPush;
      encode(confirm, protocol, &c.out);
    }
  } else {
    encode(reply, protocol, &c.out);
  }
}

void RespServer::after_command() {
  // Woken readers run below, not recursively; while a script runs, its own command's turn comes.
  if (in_after_command_ || serving_busy_) return;
  in_after_command_ = true;
  for (int rounds = 0; rounds < 1000; ++rounds) {
    std::vector<sim::redis::PubSubDelivery> deliveries = engine_.take_deliveries();
    for (const auto& d : deliveries) {
      auto it = clients_.find(d.session_id);
      if (it == clients_.end() || it->second->closed) continue;
      RedisReply push = d.pattern.empty()
                            ? RedisReply::array({RedisReply::bulk("message"), RedisReply::bulk(d.channel),
                                                 RedisReply::bulk(d.payload)})
                            : RedisReply::array({RedisReply::bulk("pmessage"), RedisReply::bulk(d.pattern),
                                                 RedisReply::bulk(d.channel), RedisReply::bulk(d.payload)});
      encode(std::move(push).as_resp3(RedisReply::Resp3::kPush), it->second->session.protocol, &it->second->out);
    }
    std::vector<std::string> keys = engine_.take_signaled_keys();
    if (deliveries.empty() && keys.empty()) break;
    if (!keys.empty()) wake_blocked(keys);
  }
  in_after_command_ = false;
}

void RespServer::wake_blocked(const std::vector<std::string>& keys) {
  // Serve parked readers in the order they blocked, as Redis does.
  std::vector<uint64_t> order = blocked_order_;
  std::vector<uint64_t> unblocked;
  for (uint64_t id : order) {
    Client& c = *clients_.at(id);
    if (!c.blocked_argv || !c.session.blocked) continue;
    const auto& wanted = c.session.blocked->keys;
    bool hit = std::any_of(wanted.begin(), wanted.end(),
                           [&](const std::string& k) { return std::binary_search(keys.begin(), keys.end(), k); });
    if (!hit) continue;
    std::vector<std::string> argv = *c.blocked_argv;
    RedisReply reply = engine_.execute(c.session, argv, now_ms());
    if (c.session.blocked) continue;  // still nothing for it (another reader took the entries)
    c.blocked_argv.reset();
    write_reply(c, argv, reply);
    unblocked.push_back(id);
  }
  if (unblocked.empty()) return;
  std::erase_if(blocked_order_,
                [&](uint64_t id) { return std::find(unblocked.begin(), unblocked.end(), id) != unblocked.end(); });
  engine_.set_blocked_clients(blocked_order_.size());
  // Their pipelined commands waited behind the blocked one; run them now.
  for (uint64_t id : unblocked) {
    auto it = clients_.find(id);
    if (it != clients_.end()) process_client(*it->second);
  }
}

void RespServer::expire_blocked() {
  const int64_t now = now_ms();
  std::vector<uint64_t> expired;
  for (uint64_t id : blocked_order_) {
    Client& c = *clients_.at(id);
    if (c.blocked_deadline_ms > 0 && now >= c.blocked_deadline_ms) expired.push_back(id);
  }
  for (uint64_t id : expired) unblock(*clients_.at(id), RedisReply::nil_array());  // a blocking command's timeout
}

void RespServer::unblock(Client& c, const RedisReply& reply) {
  c.session.blocked.reset();
  c.blocked_argv.reset();
  std::erase(blocked_order_, c.session.id);
  engine_.set_blocked_clients(blocked_order_.size());
  encode(reply, c.session.protocol, &c.out);
  process_client(c);  // the commands it pipelined behind the blocked one
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR] (networking.c): a blocked client answers as on its timeout,
// or with -UNBLOCKED; 1 when it was blocked, else 0.
void RespServer::client_unblock(Client& c, const std::vector<std::string>& argv) {
  const std::optional<int64_t> id = argv.size() >= 3 ? sim::redis::parse_int64(argv[2]) : std::nullopt;
  const std::string mode = argv.size() == 4 ? upper(argv[3]) : "TIMEOUT";
  if (argv.size() < 3 || argv.size() > 4) {
    encode(RedisReply::error("ERR wrong number of arguments for 'client|unblock' command"), c.session.protocol, &c.out);
    return;
  }
  if (!id) {
    encode(RedisReply::error("ERR value is not an integer or out of range"), c.session.protocol, &c.out);
    return;
  }
  if (mode != "TIMEOUT" && mode != "ERROR") {
    encode(RedisReply::error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"), c.session.protocol, &c.out);
    return;
  }
  auto it = clients_.find(static_cast<uint64_t>(*id));
  const bool blocked = *id > 0 && it != clients_.end() && !it->second->closed && it->second->blocked_argv;
  encode(RedisReply::integer_of(blocked ? 1 : 0), c.session.protocol, &c.out);
  if (!blocked) return;
  unblock(*it->second, mode == "ERROR" ? RedisReply::error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
                                       : RedisReply::nil_array());
}

void RespServer::close_client(Client& c) {
  if (c.closed) return;
  c.closed = true;
  if (c.fd >= 0) {
    ::epoll_ctl(clients_epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
  }
  c.fd = -1;
  engine_.close_session(c.session);
  std::erase(blocked_order_, c.session.id);
  engine_.set_blocked_clients(blocked_order_.size());
}

void RespServer::reap_closed() {
  std::erase_if(clients_, [](const auto& kv) { return kv.second->closed; });
}

const char* redis_serve_usage() {
  return "usage: faultline redis-serve [--socket PATH | --port N] [--host ADDR] [--tick-ms N] [--scripts SYSTEM]\n"
         "  Serves the simulated Redis 7.0 (sim/redis) over RESP2, or RESP3 after HELLO 3, in real time (wall-clock "
         "TTLs),\n"
         "  so redis-cli, hiredis and other clients can talk to it. Stops on SIGINT/SIGTERM.\n"
         "  --socket PATH  listen on a unix socket\n"
         "  --port N       listen on TCP ADDR:N (default 6379; 0 picks a free port)\n"
         "  --host ADDR    IPv4 address for --port (default 127.0.0.1)\n"
         "  --tick-ms N    period of active expiry (default 100)\n"
         "  --scripts SYSTEM  preload the scripts a system declares (EVAL/EVALSHA run them; their SHA1s are printed)\n";
}

int run_redis_serve(RespServerOptions o) {
  const std::string host = o.tcp_host;
  RespServer server(std::move(o));
  std::string error;
  if (!server.listen(&error)) {
    std::cerr << "faultline redis-serve: " << error << "\n";
    return 1;
  }
  // SIGINT/SIGTERM arrive on a signalfd that stops the loop (no global flag, no handler).
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
  int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd >= 0) server.add_stop_fd(sfd);
  // What a client needs to EVALSHA them (the SHA1s the simulated runs use).
  for (const std::string& script : server.preload_scripts())
    std::cout << "faultline redis-serve: script " << script << "\n";
  if (!server.unix_path().empty()) {
    std::cout << "faultline redis-serve: listening on unix:" << server.unix_path() << std::endl;
  } else {
    std::cout << "faultline redis-serve: listening on " << host << ":" << server.port() << std::endl;
  }
  server.serve();
  if (sfd >= 0) {
    // Consume the pending signal: restoring the mask would otherwise deliver it (and kill us).
    signalfd_siginfo info;
    while (::read(sfd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {}
    ::close(sfd);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  std::cout << "faultline redis-serve: stopped after " << server.commands_executed() << " commands" << std::endl;
  return 0;
}

}  // namespace fl::resp
