"""Tournaments: the YAML file (``config``), who plays whom (``schedule``), playing the matches
(``loop``), TrueSkill and scores (``ratings``) and the results database (``storage``)."""
