"""Stopping on Ctrl-C, SIGTERM or SIGHUP: once, cleanly, with the signal's exit code.

Inside :func:`stop_on_signals` the first of these signals raises :class:`Stopped` (a
BaseException, like KeyboardInterrupt, that knows its signal), so ``finally`` blocks run: bots are killed, temporary
sockets and folders removed, a lease released. Every later signal is only noted: a second
Ctrl-C while the clean-up runs cannot cut it short or end in a traceback. :func:`deferred` marks
a step that must not be cut in two (a match being recorded): a signal arriving inside it takes
effect when it ends. The process then exits with 128 + the signal's number (130 for Ctrl-C,
143 for SIGTERM, 129 for SIGHUP), as a shell reports a job the signal ended.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
WORKER_STOP = signal.SIGUSR1  # how the arbiter stops its worker processes: they ignore STOP_SIGNALS


class Stopped(BaseException):
    """Raised by the first stop signal; ``signum`` is which. Not an Exception (no ``except
    Exception`` swallows it) and not a KeyboardInterrupt (which typer would turn into a silent
    exit 130 whatever the signal)."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum


INTERRUPTS = (KeyboardInterrupt, Stopped)  # what a stop looks like: ``except INTERRUPTS``


def signal_of(e: BaseException | None) -> int:
    """The signal behind an interruption (a plain KeyboardInterrupt is Ctrl-C)."""
    return getattr(e, "signum", signal.SIGINT)


def exit_code(signum: int) -> int:
    return 128 + signum


class _State:
    installed = 0
    stopping: int | None = None  # the signal that started the stop
    deferring = 0
    pending: int | None = None
    noted = 0
    drain: Callable[[int], None] | None = None  # inside draining_on_signals: the first signal drains
    draining: int | None = None  # the signal that started a drain


_state = _State()


def _handler(signum: int, frame: object) -> None:
    if _state.drain is not None and _state.draining is None and _state.stopping is None:
        _state.draining = signum
        with suppress(OSError):
            os.write(2, b"draining: no new match starts; matches in play finish (signal again to stop now)\n")
        _state.drain(signum)
        return
    if signum == signal.SIGALRM:  # the drain's time is up: stop as the drain's signal would have
        signum = _state.draining or signal.SIGTERM
    if _state.stopping is not None:
        _state.noted += 1
        if _state.noted == 1:
            with suppress(OSError):
                os.write(2, b"stopping: cleaning up, please wait\n")
        return
    if _state.deferring:
        if _state.pending is None:
            _state.pending = signum
        return
    _state.stopping = signum
    raise Stopped(signum)


def stopping() -> int | None:
    """The signal that is stopping this process, if one is."""
    return _state.stopping


def begin_stop(signum: int = signal.SIGINT) -> None:
    """From now on, stop signals are only noted (the process is already stopping)."""
    if _state.stopping is None:
        _state.stopping = signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Stop signals raise :class:`Stopped` in this block (main thread only; nests)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    if _state.installed == 0:
        previous = {s: signal.signal(s, _handler) for s in STOP_SIGNALS}
        _state.stopping = _state.pending = None
        _state.noted = _state.deferring = 0
    _state.installed += 1
    try:
        yield
    finally:
        _state.installed -= 1
        if _state.installed == 0:
            # The caller's handlers come back even after a stop: a stop is not always the process's
            # end (a test, a library caller). The command line, which does exit, ignores further
            # signals itself (:func:`ignore_stop_signals`).
            for s, handler in previous.items():
                signal.signal(s, handler)
            _state.pending = None


def ignore_stop_signals() -> None:
    """The process is on its way out: a second Ctrl-C must not end its last lines in a traceback."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)


@contextmanager
def draining_on_signals(drain: Callable[[int], None], limit: float) -> Iterator[None]:
    """Like :func:`stop_on_signals`, except that the first stop signal calls ``drain(signum)`` and
    the work goes on to end by itself; a second signal, or ``limit`` seconds after the first,
    stops it as the first would have (:class:`Stopped`). Main thread only."""
    with stop_on_signals():
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        alarm = signal.getsignal(signal.SIGALRM)

        def start(signum: int) -> None:
            signal.signal(signal.SIGALRM, _handler)
            signal.setitimer(signal.ITIMER_REAL, limit)
            drain(signum)

        _state.drain, _state.draining = start, None
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if alarm is not None:  # (None: a handler set outside Python, which cannot be put back)
                signal.signal(signal.SIGALRM, alarm)
            _state.drain = None


def draining() -> int | None:
    """The signal that started a drain, if one did."""
    return _state.draining


@contextmanager
def deferred() -> Iterator[None]:
    """A stop signal arriving in this block takes effect when the block ends."""
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
        if _state.deferring == 0 and _state.pending is not None:
            signum, _state.pending = _state.pending, None
            if _state.stopping is None and _state.installed:
                _state.stopping = signum
                raise Stopped(signum)
