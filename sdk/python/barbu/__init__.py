"""The Barbu Arena Python SDK: everything a Python bot needs.

* :mod:`barbu.rules`: the rules engine (cards, rulesets, the match state machine, views);
* :mod:`barbu.bot`: the :class:`~barbu.bot.Bot` base class a bot subclasses;
* :mod:`barbu.runner`: ``run(bot)`` connects a bot to the arbiter and plays;
* :mod:`barbu.wire`: conversions between engine values and protocol messages;
* :mod:`barbu.matchlog`: writing, reading and verifying match logs;
* ``barbu.v1``: the generated protocol code (proto/barbu/v1/arbiter.proto).

Importing ``barbu`` imports nothing else: a bot pays only for the modules it uses. It does
install :mod:`barbu.build`'s switch to the pure Python build when ``BARBU_PURE=1`` asks for it.
"""

from .build import install as _install

_install()
