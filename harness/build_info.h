// What the running binary was built from, for the evidence a report carries.
#pragma once

namespace fl {

// `git rev-parse HEAD` of the source tree at the moment this binary was built, with "-dirty"
// when tracked files differed from that commit, or "unknown (no git commit)" outside a git
// checkout. It names the binary's own source: a report made after the tree moved on (another
// checkout, uncommitted edits, a binary copied elsewhere) still names the code that ran.
// Stamped by cmake/build_info.cmake at every build.
const char* build_commit();

}  // namespace fl
