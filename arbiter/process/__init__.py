"""Bot processes on this machine: command lines, resource limits, users, sandbox, clean-up.

``bot`` starts and stops one bot; ``command`` resolves its command line; ``limits`` and ``users``
are what the kernel enforces on it; ``sandbox`` wraps it in bubblewrap; ``procfs`` finds the
processes that must die with it.
"""
