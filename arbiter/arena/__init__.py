"""The standing arena: a ladder that keeps playing while entrants come and go (docs/arena.md)."""
