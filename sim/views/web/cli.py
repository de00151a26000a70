"""The web view's command-line flags, ``--view``, ``--host`` and ``--port``: ``run``, ``demo``, ``bench``."""

from __future__ import annotations

import argparse
import sys

from pccbullet.core.cli_args import port
from pccbullet.core.errors import UsageError
from pccbullet.sim.views.web.view import LOCAL_HOST, WebView


def add_web_args(parser: argparse.ArgumentParser, view_help: str, choices: tuple[str, ...]) -> None:
    """Add ``--view`` (``choices``, the first the default), ``--host`` and ``--port`` to ``parser``."""
    parser.add_argument("--view", choices=choices, default=choices[0], help=view_help)
    parser.add_argument(
        "--host",
        default=LOCAL_HOST,
        help=f"--view web: address to serve on (default {LOCAL_HOST}: this machine only; any other host "
        "needs the token that the printed address carries)",
    )
    parser.add_argument(
        "--port", type=port, default=0, help="--view web: port (default 0: any free one, printed)"
    )


def start_web_view(args: argparse.Namespace) -> WebView | None:
    """The web view of ``--view web`` (``args.host``, ``args.port``), its address printed on stderr;
    ``None`` without ``--view web`` (``--host`` or ``--port`` then raise :class:`UsageError`)."""
    if args.view != "web":
        if args.host != LOCAL_HOST or args.port != 0:
            raise UsageError(
                f"argument --host/--port: --host {args.host} --port {args.port} serve the web view; "
                "allowed: with --view web only"
            )
        return None
    view = WebView(host=args.host, port=args.port)
    print(f"pccbullet: web view at {view.url}", file=sys.stderr, flush=True)  # noqa: T201
    return view
