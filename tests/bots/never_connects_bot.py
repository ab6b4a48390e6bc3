"""Starts and never connects to the arbiter."""

import time

time.sleep(3600)
