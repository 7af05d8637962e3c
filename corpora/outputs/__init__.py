"""A job's or run's output folder as a product: its manifest (what is in it, from what, complete or not) and its one-writer lock."""
