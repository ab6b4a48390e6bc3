"""A seat played by a person in the browser: the seat's protocol client, the table page and its app."""
