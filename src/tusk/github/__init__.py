"""The GitHub edge: the gateway (the only code that speaks GitHub's APIs), pacing, creates made
once by nonce, the bot's forks, reactions and trust levels."""
