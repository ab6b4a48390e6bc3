"""The engine's typed errors. Each message names the offending thing so a user can act on it."""


class BarbuError(Exception):
    """Base of every error the engine raises."""


class NotationError(BarbuError, ValueError):
    """A card, rank or suit written in a form the notation does not allow."""


class RulesError(BarbuError, ValueError):
    """An unknown preset or switch, or a switch value outside its allowed set."""


class IllegalActionError(BarbuError, ValueError):
    """An action that the rules do not allow at this point; the message says why."""
