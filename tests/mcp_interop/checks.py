"""What the interop scripts share: a check that names what failed, and a
runner that turns a failed check into one line on stderr and exit 1."""

import sys

import anyio


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def run_checks(main, label):
    """Runs the async `main`; a failed check exits 1 naming `label`."""
    try:
        anyio.run(main)
    except AssertionError as e:
        print(f"{label} check failed: {e}", file=sys.stderr)
        sys.exit(1)
