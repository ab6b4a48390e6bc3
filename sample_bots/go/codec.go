package main

// Why this file: grpc-go marshals messages with its "proto" codec. In Debian 12's grpc-go (1.33)
// that codec calls github.com/golang/protobuf/proto, and apt installs that module's 1.3.5
// (golang-github-golang-protobuf-1-3-dev, the first choice of golang-google-grpc-dev's
// dependency). 1.3.5 predates the current protobuf API (APIv2): it cannot marshal the messages
// that protoc-gen-go 1.20+ generates (Debian's protoc-gen-go is 1.28) and panics on the first
// one sent, the hello (a nil pointer dereference in proto.makeOneOfMarshaler). Registering a codec under the same name that calls google.golang.org/protobuf/proto
// (golang-google-protobuf-dev) replaces it for every call of this process. It is harmless where
// github.com/golang/protobuf is 1.4+ (a wrapper around the same library) or grpc-go is newer.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"
)

type protoCodec struct{}

func (protoCodec) Name() string { return "proto" } // the name grpc-go looks up for application/grpc

func (protoCodec) Marshal(v interface{}) ([]byte, error) {
	message, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T: not a protobuf message", v)
	}
	return proto.Marshal(message)
}

func (protoCodec) Unmarshal(data []byte, v interface{}) error {
	message, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T: not a protobuf message", v)
	}
	return proto.Unmarshal(data, message)
}

// init runs after grpc-go's own encoding/proto init (an imported package initialises first), so
// this registration is the one that stays.
func init() { encoding.RegisterCodec(protoCodec{}) }
