"""``check-bot``: does a bot program speak the protocol and play every kind of decision?"""
