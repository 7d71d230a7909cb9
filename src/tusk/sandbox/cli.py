"""``tusk sandbox github`` and ``tusk sandbox model``: the local stand-ins."""

from __future__ import annotations

import argparse
import errno

from tusk.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="which", required=True, metavar="STAND-IN")
    github = sub.add_parser("github", help="the local GitHub (REST + GraphQL) on 127.0.0.1")
    github.add_argument("--port", type=int, default=0, help="0 picks a free port")
    github.add_argument(
        "--scenario",
        help="YAML/JSON scenario to load at start: a file, or the name of one Tusk ships "
        "(demo, rehearse-apply)",
    )
    github.add_argument(
        "--lenient", action="store_true", help="log spec violations instead of answering 500"
    )
    model = sub.add_parser("model", help="the scripted Anthropic Messages API on 127.0.0.1")
    model.add_argument("--port", type=int, default=0, help="0 picks a free port")
    model.add_argument("--script", required=True, help="YAML/JSON script of assistant turns")


def run(args: argparse.Namespace) -> int:
    try:
        if args.which == "github":
            from tusk.sandbox.github_server import serve_forever

            return serve_forever(port=args.port, scenario=args.scenario, strict=not args.lenient)
        from tusk.sandbox.model_server import serve_forever as serve_model

        return serve_model(port=args.port, script=args.script)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        raise UserError(
            f"port {args.port} on 127.0.0.1 is already in use",
            f"Stop what listens there, or pick another: tusk sandbox {args.which} --port N "
            "(--port 0 picks a free one and prints it).",
        ) from error
