"""Text as GitHub shows it: hidden markers, mentions, neutralising untrusted text, code spans, and
the Jinja environment every markdown Tusk writes goes through."""
