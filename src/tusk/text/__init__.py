"""Text as GitHub shows it: hidden markers, mentions, neutralising untrusted text, code spans, and
the Jinja environment every markdown Tusk writes goes through.

- ``commands``: Bot commands.
- ``inline_code``: Where markdown-it finds code and emphasis, as offsets into the source
  text.
- ``markdown``: What github.com shows of a markdown text, and whom it notifies.
- ``markers``: Hidden markers Tusk writes into GitHub content and reads back.
- ``mentions``: Does a piece of GitHub text @mention the bot? (MISSION P2).
- ``neutralise``: Neutralising text from GitHub before a model reads it.
- ``render``: One Jinja environment for every markdown Tusk writes (log issue, summary,
  transcript).
"""
