"""Remote entrants: the lobby they connect to, their keys, and the bridge that brings any bot there."""
