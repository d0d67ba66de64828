#include "harness/resp/resp.h"

#include <gtest/gtest.h>

namespace fl::resp {
namespace {

using Status = RequestParser::Status;

std::vector<std::vector<std::string>> parse_all(RequestParser& p, Status* last = nullptr,
                                                std::string* error = nullptr) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> argv;
  std::string err;
  Status s;
  while ((s = p.next(&argv, &err)) == Status::kCommand) out.push_back(argv);
  if (last) *last = s;
  if (error) *error = err;
  return out;
}

TEST(RequestParser, MultibulkCommandsIncludingBinaryAndPipelined) {
  // The last bulk contains CR, LF and NUL: its length, not its content, delimits it.
  static const char kWire[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\r\nb\0\r\n";
  RequestParser q;
  q.feed(std::string_view(kWire, sizeof kWire - 1));
  auto cmds = parse_all(q);
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], (std::vector<std::string>{"GET", "k"}));
  EXPECT_EQ(cmds[1][2], std::string("a\r\nb\0", 5));
}

TEST(RequestParser, ByteAtATimeYieldsTheSameCommands) {
  const std::string wire = "*2\r\n$4\r\nECHO\r\n$11\r\nhello world\r\nPING\r\n*1\r\n$4\r\nPING\r\n";
  RequestParser p;
  std::vector<std::vector<std::string>> got;
  for (char c : wire) {
    p.feed(std::string_view(&c, 1));
    auto more = parse_all(p);
    got.insert(got.end(), more.begin(), more.end());
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (std::vector<std::string>{"ECHO", "hello world"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"PING"}));
  EXPECT_EQ(got[2], (std::vector<std::string>{"PING"}));
  EXPECT_EQ(p.buffered(), 0u);
}

TEST(RequestParser, InlineCommandsWithQuotesAndEmptyLines) {
  RequestParser p;
  p.feed("\r\nset k \"a b\\x41\\n\" 'it\\'s'\nGET k\r\n*0\r\n");
  auto cmds = parse_all(p);
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], (std::vector<std::string>{"set", "k", "a bA\n", "it's"}));
  EXPECT_EQ(cmds[1], (std::vector<std::string>{"GET", "k"}));
}

TEST(RequestParser, ProtocolErrorsAreTerminalWithRedisMessages) {
  struct Case {
    std::string wire, error;
  };
  for (const Case& c : {Case{"*x\r\n", "ERR Protocol error: invalid multibulk length"},
                        Case{"*1\r\n+GET\r\n", "ERR Protocol error: expected '$', got '+'"},
                        Case{"*1\r\n$-3\r\n", "ERR Protocol error: invalid bulk length"},
                        Case{"GET \"k\r\n", "ERR Protocol error: unbalanced quotes in request"},
                        Case{"GET \"k\"x\r\n", "ERR Protocol error: unbalanced quotes in request"}}) {
    RequestParser p;
    p.feed(c.wire);
    Status s;
    std::string error;
    parse_all(p, &s, &error);
    EXPECT_EQ(s, Status::kError) << c.wire;
    EXPECT_EQ(error, c.error) << c.wire;
    p.feed("PING\r\n");  // nothing parses after a protocol error
    parse_all(p, &s, &error);
    EXPECT_EQ(s, Status::kError);
  }
}

TEST(RequestParser, IncompleteInputWaits) {
  RequestParser p;
  p.feed("*2\r\n$3\r\nGET\r\n$1\r\n");
  Status s;
  EXPECT_TRUE(parse_all(p, &s).empty());
  EXPECT_EQ(s, Status::kNeedMore);
  p.feed("k\r\n");
  EXPECT_EQ(parse_all(p).size(), 1u);
}

TEST(Encode, EveryReplyKindRoundTrips) {
  RedisReply r = RedisReply::array({RedisReply::nil(), RedisReply::nil_array(), RedisReply::status("OK"),
                                    RedisReply::error("ERR x"), RedisReply::integer_of(-7),
                                    RedisReply::bulk(std::string("a\r\n\0", 4)), RedisReply::array({})});
  std::string wire = encode(r);
  EXPECT_EQ(wire.substr(0, 4), "*7\r\n");
  EXPECT_NE(wire.find("$-1\r\n*-1\r\n+OK\r\n-ERR x\r\n:-7\r\n$4\r\n"), std::string::npos);
  size_t used = 0;
  RedisReply back;
  ASSERT_TRUE(decode_reply(wire, &used, &back));
  EXPECT_EQ(used, wire.size());
  EXPECT_EQ(back, r);
  EXPECT_FALSE(decode_reply(wire.substr(0, wire.size() - 1), &used, &back));
}

TEST(Encode, StatusAndErrorLinesCannotCarryNewlines) {
  EXPECT_EQ(encode(RedisReply::error("ERR a\r\nb")), "-ERR a  b\r\n");
  EXPECT_EQ(encode(RedisReply::status("x\ny")), "+x y\r\n");
}

}  // namespace
}  // namespace fl::resp
