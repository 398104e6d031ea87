"""``python -m bridge.validation.crosscheck``: the ``nhbridge crosscheck`` command on its own."""

import argparse
import sys

from ...errors import BridgeError
from .command import add_parser

if __name__ == "__main__":  # pragma: no cover - convenience
    parser = argparse.ArgumentParser(prog="nhbridge")
    add_parser(parser.add_subparsers(dest="command", required=True))
    arguments = parser.parse_args()
    try:
        sys.exit(arguments.func(arguments))
    except BridgeError as error:
        print(f"nhbridge: error:\n{error}", file=sys.stderr)
        sys.exit(2)
