"""``python -m arbiter``: the same command line as the ``arbiter`` console script."""

from arbiter.cli import main

main()
