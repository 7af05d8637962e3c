"""The templates whose output is part of the sentence, rendered as plain text (numbers, dates, languages, local ones)."""
