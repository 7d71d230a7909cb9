"""The application: the ``tusk`` command and its subcommands (init, doctor, demo,
config, audit, shards).

Only this room may import the poller and the local stand-ins to wire them together."""
