"""One match between four bot processes: listen, launch, referee, record, clean up."""
