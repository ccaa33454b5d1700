"""The numbers a post's prose quotes: reading them, and binding them to the run's records."""
