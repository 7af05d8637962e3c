"""Unknown flags are an error (docs/design.md §6): one line naming the nearest known flag, exit status 2.

Shared by every `python -m` command of the project: the Beam jobs (pipelines/cli_flags.py adds the
names Beam's own options know), the training commands and corpora.mrc.audit. Plain Python, so that the
training side never imports Beam and the data side never imports torch.

Why not argparse's own behaviour: it accepts any unambiguous prefix (`--out` for `--output`, and
`--max_step` silently meaning `--max_steps`), and when a required flag is missing it reports that
instead of the typo that caused it (`--trian x` gives "the following arguments are required:
--train"). Beam only logs "Discarding unparseable args" and runs the job on the bundled sample.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable

USAGE_ERROR = 2  # argparse's and the shell's convention for a command-line mistake
_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # `--seed -1`: a value, not a flag


def nearest_flag(name: str, own: Iterable[str], others: Iterable[str] = ()) -> str | None:
    """The closest known flag to `name`: the command's own flags first, so that `--outptu` suggests
    `--output` and not one of Beam's 175 options; those (`others`) only on a closer match, since a
    short name is 0.67 alike to many of them (`--mono` and Beam's `--zone`)."""
    for group, cutoff in ((own, 0.6), (others, 0.75)):
        match = difflib.get_close_matches(name, sorted(group), n=1, cutoff=cutoff)
        if match:
            return match[0]
    return None


def first_unknown_flag(argv: list[str], known: set[str]) -> str | None:
    """The first `--name` or `--name=value` in `argv` whose name is not in `known` (None: all known).

    Runs before any parsing, so the typo is reported even when it also hides a required flag.
    """
    for token in argv:
        if token == "--":  # everything after it is a value
            return None
        if not token.startswith("-") or token == "-" or _NUMBER.match(token):
            continue
        name = token.split("=", 1)[0]
        if " " in name:  # "--task squad --max_steps 3", the value of a flag that takes a command line: argparse
            continue     # reads a dash-led token holding a space as a value, never as a flag
        if name not in known:
            return name
    return None


def unknown_flag_message(name: str, own: Iterable[str], others: Iterable[str] = ()) -> str:
    suggestion = nearest_flag(name, own, others)
    hint = f"did you mean {suggestion}?" if suggestion else "see --help for the flags"
    return f"unknown flag {name}; {hint}"


def exit_with_usage_error(prog: str, message: str) -> None:
    """One line on stderr, exit status 2: the whole message of a command-line mistake."""
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(USAGE_ERROR)


class OneLineErrors:
    """argparse mix-in: every parse error is one line (`PROG: error: ...`), not a usage block + line."""

    def error(self, message: str):  # argparse's hook for every parse error
        unrecognized = message.removeprefix("unrecognized arguments: ")
        if unrecognized != message:  # left over after parsing: values without a flag
            message = f"unexpected argument {unrecognized.split()[0]!r}; see --help"
        exit_with_usage_error(self.prog, message)


class CommandParser(OneLineErrors, argparse.ArgumentParser):
    """The parser of every training and corpora command: no prefix matching, unknown flags named with
    the nearest known one before anything else is checked, one-line errors, exit status 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def known_flags(self) -> set[str]:
        return set(self._option_string_actions)

    def parse_args(self, args=None, namespace=None):
        argv = list(sys.argv[1:] if args is None else args)
        unknown = first_unknown_flag(argv, self.known_flags())
        if unknown is not None:
            self.error_unknown_flag(unknown)
        return super().parse_args(argv, namespace)

    def error_unknown_flag(self, name: str) -> None:
        exit_with_usage_error(self.prog, unknown_flag_message(name, self.known_flags()))
