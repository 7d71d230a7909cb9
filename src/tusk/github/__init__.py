"""The GitHub edge: the gateway (the only code that speaks GitHub's APIs) with its errors, retry
waits and request ledger, pacing, one backoff for what GitHub does eventually, creates made once
by nonce, the bot's forks, reactions and trust levels."""
