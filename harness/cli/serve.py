"""``fcb serve``: serve a detector over HTTP."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_OK
from harness.cli.options import positive_int


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve a detector over HTTP at POST /v1/consensus",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "-d",
        "--detector",
        default="builtin:agreement",
        help="builtin:NAME, package.module:function or file.py:function",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8765, help="port to listen on")
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument("--max-body", type=int, default=1024 * 1024, metavar="BYTES", help="larger bodies get 413")
    p.add_argument(
        "--body-timeout", type=float, default=10.0, metavar="S", help="a body not received within S seconds gets 408"
    )
    p.add_argument(
        "--max-connections",
        type=positive_int,
        default=64,
        metavar="N",
        help="requests served at once, per worker; more get 503 (body bytes in flight <= N x --max-body)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.detectors.service import serve

    serve(
        args.detector,
        host=args.host,
        port=args.port,
        workers=args.workers,
        max_body=args.max_body,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
    )
    return EXIT_OK
