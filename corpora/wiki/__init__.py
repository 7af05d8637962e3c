"""What each Wikipedia is: language tables, namespaces and magic words, link trails, disambiguation, tail sections."""
