// ACL users, as Redis 7.0's ACL SETUSER and AUTH keep them: who a connection is, and which
// commands and keys it may use.
//
// Contract
// - Every engine has the user "default" (on, nopass, +@all, ~*, &*); a session starts as it.
// - apply_acl_rule applies one ACL SETUSER rule in order, as Redis does: on, off, >pass, <pass,
//   nopass, resetpass, +cmd, -cmd, +cmd|sub, +@category, -@category, allcommands (+@all),
//   nocommands (-@all), ~pattern, %RW~pattern, allkeys (~*), resetkeys, &pattern, allchannels
//   (&*), resetchannels, reset. Categories are those of commands_in_category (commands.h). A key
//   pattern after allkeys or ~* is refused, as Redis refuses it.
// - A user may run a command when it is allowed by name ("get", or for a subcommand either
//   "config" or "config|get"), and may touch a key that one of its key patterns matches (glob).
// - Passwords are kept as given: the simulation has no ACL LIST or GETUSER that would show them.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fl::sim::redis {

struct AclUser {
  bool on = false;
  bool nopass = false;
  std::set<std::string> passwords;
  bool all_commands = false;
  std::set<std::string> allowed;  // by name, on top of all_commands
  std::set<std::string> denied;   // by name, taken out of all_commands
  bool all_keys = false;          // allkeys or ~* (Redis's ALLKEYS flag): then no key pattern is kept
  std::vector<std::string> key_patterns;
  std::vector<std::string> channel_patterns;
  // Every command on every key (the default user): no check needs the command or its keys.
  bool unrestricted() const { return all_commands && denied.empty() && all_keys; }
};

// The user "default" of a fresh server.
AclUser default_acl_user();

// Applies `rule` to `user`; returns Redis's error text ("ERR Error in ACL SETUSER modifier ...")
// or an empty string.
std::string apply_acl_rule(AclUser& user, std::string_view rule);

// Whether `user` may run the command named `name` ("get", "config|get").
bool acl_allows_command(const AclUser& user, std::string_view name);

// Whether one of `user`'s key patterns matches `key`.
bool acl_allows_key(const AclUser& user, std::string_view key);

}  // namespace fl::sim::redis
