"""mPMR rows: queries with the entity masked, contexts and answers, and the audit of a finished output."""
