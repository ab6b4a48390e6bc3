// The C++ recipe of docs/protocol.md, proved: a bot built from Debian's packages only
// (libgrpc++-dev, protobuf-compiler-grpc) that says hello, answers every request with its first
// legal action, half-closes after MatchEnd and exits 0. Exit 1 when the session fails, 2 when
// the environment is incomplete. gRPC C++ dials both forms of BARBU_ARBITER as they are:
// host:port and unix:/path.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "barbu/v1/arbiter.grpc.pb.h"

int main() {
  const char* address = std::getenv("BARBU_ARBITER");
  const char* token = std::getenv("BARBU_TOKEN");
  if (address == nullptr || *address == '\0' || token == nullptr || *token == '\0') {
    std::cerr << "first-legal: set BARBU_ARBITER and BARBU_TOKEN (the arbiter starts this bot)\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = barbu::v1::Arbiter::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);

  barbu::v1::BotMessage hello;
  hello.mutable_hello()->set_protocol_version(1);
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_bot_name("cpp-first-legal");
  hello.mutable_hello()->set_bot_version("1");
  stream->Write(hello);

  barbu::v1::ArbiterMessage message;
  bool over = false;
  int decisions = 0;
  while (stream->Read(&message)) {
    if (message.has_request()) {
      barbu::v1::BotMessage reply;
      reply.mutable_reply()->set_request_id(message.request().request_id());
      *reply.mutable_reply()->mutable_action() = message.request().legal(0);
      stream->Write(reply);
      ++decisions;
    } else if (message.has_match_end()) {
      over = true;
      stream->WritesDone();  // half-close: the arbiter then ends the stream
    }
  }
  grpc::Status status = stream->Finish();
  std::cerr << "first-legal: " << decisions << " decisions, stream ended: " << status.error_code() << " "
            << status.error_message() << "\n";
  return over && status.ok() ? 0 : 1;
}
