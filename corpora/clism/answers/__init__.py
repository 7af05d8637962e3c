"""From aligned words to an answer span a reader accepts: names, numbers, tags and sounds."""
