#!/usr/bin/env bash
# Build tests/cpp/first_legal.cc by the C++ recipe of docs/protocol.md, offline, from Debian's
# packages only; leaves tests/cpp/build/first_legal (git-ignored). The recipe's steps:
#
# 1. apt-get installs what is missing (needs root or sudo): g++, pkg-config, libgrpc++-dev (gRPC
#    C++ 1.51 on Debian 12, with protobuf's and abseil's headers and libraries) and
#    protobuf-compiler-grpc (protoc and its grpc_cpp_plugin).
# 2. protoc generates barbu/v1/arbiter.pb.{h,cc} and arbiter.grpc.pb.{h,cc} into build/.
# 3. g++ compiles the bot with them; pkg-config gives the flags of grpc++ and protobuf.
#
# Idempotent: when first_legal was built from the current source, .proto and packages, it does
# nothing. Fails loudly (exit 1, one line on stderr) when a step fails.
set -euo pipefail
cd "$(dirname "$0")"
proto_root=$(cd ../.. && pwd)/proto
proto=$proto_root/barbu/v1/arbiter.proto
stamp=build/.built-from
packages=(g++ pkg-config libgrpc++-dev protobuf-compiler-grpc)

fail() { echo "build.sh: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else return 1; fi
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || fail "missing ${missing[*]} and no apt-get: this build needs Debian's packages"
  echo "build.sh: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  install=(apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}")
  as_root "${install[@]}" >/dev/null 2>&1 || { as_root apt-get update -qq && as_root "${install[@]}" >/dev/null 2>&1; } \
    || fail "apt-get install ${missing[*]} failed (run it as root, after apt-get update)"
fi

want=$( (cat "$proto" first_legal.cc; dpkg-query -W "${packages[@]}") | sha256sum | cut -d' ' -f1)
if [ -x build/first_legal ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0  # up to date
fi
rm -rf build
mkdir build
protoc -I "$proto_root" --cpp_out=build --grpc_out=build \
  --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" "$proto" \
  || fail "protoc could not generate the C++ code from $proto"
# shellcheck disable=SC2046  # pkg-config's flags are words
g++ -std=c++17 -O1 -I build first_legal.cc build/barbu/v1/arbiter.pb.cc build/barbu/v1/arbiter.grpc.pb.cc \
  -o build/first_legal.part $(pkg-config --cflags --libs grpc++ protobuf) || fail "g++ failed"
mv build/first_legal.part build/first_legal
echo "$want" > "$stamp"
