"""The referee: one match played by the rules, whatever its players do.

Players are anything with a ``decide`` (in process, or a bot behind the transport); the referee
asks them in turn, enforces time control and legality, turns misbehaviour into faults
(``faults``) and writes every move to the match log (``logfile``). It knows nothing of
processes, sockets or storage.
"""
