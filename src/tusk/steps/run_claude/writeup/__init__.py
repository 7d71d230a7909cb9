"""The write-up on the log issue: the outcome, the summary, the transcript, the live
progress comment, and publishing it part by part."""
