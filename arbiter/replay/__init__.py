"""A recorded match log as events with the engine state before and after each line."""
