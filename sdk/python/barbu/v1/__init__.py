"""Generated protobuf and gRPC code for the protocol ``barbu.v1`` (proto/barbu/v1/arbiter.proto).

Never edit the ``arbiter_pb2*`` files by hand: run ``python scripts/gen_proto.py``.
"""
