"""CLISM pairs: English NER spans, word aligners, and the rules that turn an alignment into an answer span."""
