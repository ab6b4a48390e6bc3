"""The Barbu Arena arbiter: referee, transport, tournaments, storage and command line."""

import barbu  # noqa: F401  (installs the switch to the pure build, BARBU_PURE=1, before any compiled module loads)
