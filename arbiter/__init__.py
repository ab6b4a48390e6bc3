"""The Barbu Arena arbiter: referee, transport, tournaments, storage and command line."""
