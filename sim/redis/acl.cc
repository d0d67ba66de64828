// ACL users and their rules (Redis 7.0's acl.c: ACLSetUser, ACLCheckAllUserCommandPerm), and the
// ACL and AUTH commands.
#include "sim/redis/acl.h"

#include <algorithm>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

AclUser default_acl_user() {
  AclUser u;
  u.on = true;
  u.nopass = true;
  u.all_commands = true;
  u.all_keys = true;
  u.channel_patterns = {"*"};
  return u;
}

namespace {

std::string modifier_error(std::string_view rule, std::string_view why) {
  return "ERR Error in ACL SETUSER modifier '" + std::string(rule) + "': " + std::string(why);
}

void allow(AclUser& u, const std::string& name, bool allowed) {
  if (allowed) {
    u.denied.erase(name);
    u.allowed.insert(name);
  } else {
    u.allowed.erase(name);
    u.denied.insert(name);
  }
}

// +@category / -@category / +cmd / -cmd.
std::string apply_command_rule(AclUser& u, std::string_view rule) {
  const bool plus = rule[0] == '+';
  std::string_view what = rule.substr(1);
  if (what.empty()) return modifier_error(rule, "Syntax error");
  if (what[0] == '@') {
    const std::string category = lower(what.substr(1));
    if (category == "all") {
      u.all_commands = plus;
      u.allowed.clear();
      u.denied.clear();
      return {};
    }
    bool known = false;
    const std::vector<std::string_view> names = commands_in_category(category, &known);
    if (!known) return modifier_error(rule, "Unknown command or category name in ACL");
    for (std::string_view name : names) allow(u, std::string(name), plus);
    return {};
  }
  const std::string name = lower(what);
  if (!command_known(name)) return modifier_error(rule, "Unknown command or category name in ACL");
  allow(u, name, plus);
  return {};
}

}  // namespace

std::string apply_acl_rule(AclUser& u, std::string_view rule) {
  const std::string r = lower(rule);
  if (r == "on") {
    u.on = true;
  } else if (r == "off") {
    u.on = false;
  } else if (r == "nopass") {
    u.nopass = true;
    u.passwords.clear();
  } else if (r == "resetpass") {
    u.nopass = false;
    u.passwords.clear();
  } else if (r == "allcommands") {
    return apply_command_rule(u, "+@all");
  } else if (r == "nocommands") {
    return apply_command_rule(u, "-@all");
  } else if (r == "allkeys" || r == "~*") {
    u.all_keys = true;
    u.key_patterns.clear();
  } else if (r == "resetkeys") {
    u.all_keys = false;
    u.key_patterns.clear();
  } else if (r == "allchannels") {
    u.channel_patterns = {"*"};
  } else if (r == "resetchannels") {
    u.channel_patterns.clear();
  } else if (r == "reset") {
    u = AclUser{};
  } else if (!rule.empty() && rule[0] == '>') {
    u.passwords.insert(std::string(rule.substr(1)));
    u.nopass = false;
  } else if (!rule.empty() && rule[0] == '<') {
    u.passwords.erase(std::string(rule.substr(1)));
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    const size_t tilde = rule.find('~');
    if (tilde == std::string_view::npos) return modifier_error(rule, "Syntax error");
    if (u.all_keys) {
      return modifier_error(
          rule,
          "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
          "any effect. Try 'resetkeys' to start with an empty list of patterns");
    }
    u.key_patterns.emplace_back(rule.substr(tilde + 1));  // %R~ and %W~ alike: read and write
  } else if (!rule.empty() && rule[0] == '&') {
    u.channel_patterns.emplace_back(rule.substr(1));
  } else if (!rule.empty() && (rule[0] == '+' || rule[0] == '-')) {
    return apply_command_rule(u, rule);
  } else {
    return modifier_error(rule, "Syntax error");
  }
  return {};
}

bool acl_allows_command(const AclUser& u, std::string_view name) {
  const auto bar = name.find('|');
  const std::string full(name), container(name.substr(0, bar));
  if (u.denied.count(full) || u.denied.count(container)) return false;
  return u.all_commands || u.allowed.count(full) || u.allowed.count(container);
}

bool acl_allows_key(const AclUser& u, std::string_view key) {
  return u.all_keys || std::any_of(u.key_patterns.begin(), u.key_patterns.end(),
                                   [&](const std::string& p) { return glob_match(p, key); });
}

// ---- ACL SETUSER | DELUSER | USERS | WHOAMI, and AUTH.

RedisReply cmd_acl(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  std::map<std::string, AclUser>& users = c.acl_users();
  if (sub == "setuser") {
    AclUser edited = users.count(c.arg(2)) ? users.at(c.arg(2)) : AclUser{};
    for (size_t j = 3; j < c.argc(); ++j) {
      if (std::string error = apply_acl_rule(edited, c.arg(j)); !error.empty()) return RedisReply::error(error);
    }
    users[c.arg(2)] = std::move(edited);  // all rules or none, as Redis applies them
    return RedisReply::ok();
  }
  if (sub == "deluser") {
    int64_t deleted = 0;
    for (size_t j = 2; j < c.argc(); ++j) {
      if (c.arg(j) == "default") return RedisReply::error("ERR The 'default' user cannot be removed");
      deleted += static_cast<int64_t>(users.erase(c.arg(j)));
    }
    return RedisReply::integer_of(deleted);
  }
  if (sub == "users") {
    std::vector<RedisReply> out;
    for (const auto& [name, user] : users) out.push_back(RedisReply::bulk(name));
    return RedisReply::array(std::move(out));
  }
  return RedisReply::bulk(c.session.user);  // whoami
}

RedisReply cmd_auth(Ctx& c) {
  const std::map<std::string, AclUser>& users = c.acl_users();
  const bool named = c.argc() == 3;
  const std::string user = named ? c.arg(1) : "default";
  const std::string& password = c.arg(named ? 2 : 1);
  const auto it = users.find(user);
  if (!named && it != users.end() && it->second.nopass) {
    return RedisReply::error(
        "ERR AUTH <password> called without any password configured for the default user. Are you sure your "
        "configuration is correct?");
  }
  if (it == users.end() || !it->second.on || (!it->second.nopass && !it->second.passwords.count(password))) {
    return RedisReply::error("WRONGPASS invalid username-password pair or user is disabled.");
  }
  c.session.user = user;
  return RedisReply::ok();
}

}  // namespace fl::sim::redis
