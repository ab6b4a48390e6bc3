"""The gRPC side of the arbiter: the server bots connect to, sessions, remote players."""
