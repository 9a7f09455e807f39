"""What load.py and train.py share on the command line: a parser whose errors are one line,
flag values checked with the flag named, and the exit statuses of the Go commands (2 for bad
input, 130 when interrupted). Torch-free, so that it runs before torch is imported."""
import argparse
import math
import sys


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose error is one line (ValueError), not the usage and the error."""

    def error(self, message):
        raise ValueError(message)


def number(flag, kind=int, least=1):
    """What reads a flag's number of kind (int or float) of at least least, or says in one line
    what is wrong."""
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            v = None
        if v is None or not math.isfinite(v) or v < least:
            raise ValueError(f"{flag} {s}: want a {'whole number' if kind is int else 'number'} of at least {least:g}")
        return v
    return parse


def factor(s):
    """A scaling's factor flag: auto, or a finite number of at least 1."""
    return s if s == "auto" else number("--factor", float, 1)(s)


def run(program, main, failures=()):
    """Runs main, turning bad input (OSError, ValueError, KeyError) and the exceptions in
    failures into one line on stderr and exit status 2, or 1 for a failure, and an interrupt
    into 130."""
    try:
        main()
    except KeyboardInterrupt:
        print(f"{program}: interrupted; nothing written", file=sys.stderr)
        sys.exit(130)
    except (OSError, ValueError, KeyError) as e:
        print(f"{program}: {e}", file=sys.stderr)
        sys.exit(2)
    except failures as e:
        print(f"{program}: {e}; nothing written", file=sys.stderr)
        sys.exit(1)
