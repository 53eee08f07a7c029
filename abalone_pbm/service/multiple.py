"""`multiple`: one mail, many command lines, one bounded answer (DESIGN §2.6).

At most ``multiple_max_lines`` lines run (pbmserv and Mailman cap it too); each runs in
a savepoint of its own, as a command with an empty body (a line has no comment, so
the rest of the mail, other lines' passwords included, never becomes one). The
sender gets ONE summary: each line masked, ``done`` or ``failed: why``, with the
answer the line would have mailed (help, lists, errors) folded in, and how many lines
were not processed. Mails to other people (the opponent's board) and the mover's own
board mails, which carry the reply address for the next move, go out as usual.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .. import protocol, render
from . import rates
from .context import CommandError, MailContext, Outgoing

#: Lines of a not-processed tail shown (masked) in the summary.
_SHOWN_SKIPPED = 5


@contextmanager
def _as_single_command(ctx: MailContext, line: str) -> Iterator[None]:
    """While one line runs it is the whole mail: its Subject, and no body."""
    subject, body = ctx.subject, ctx.body
    ctx.subject, ctx.body = line, ""
    try:
        yield
    finally:
        ctx.subject, ctx.body = subject, body


def _attempt(ctx: MailContext, action: Callable[[], None]) -> str | None:
    """Run one line in a savepoint: None when done, else why it failed (undone)."""
    mark = len(ctx.outgoing)
    savepoint = ctx.session.begin_nested()
    try:
        action()
        savepoint.commit()
        return None
    except CommandError as error:
        savepoint.rollback()
        del ctx.outgoing[mark:]
        ctx.session.expire_all()
        return error.message
    finally:
        ctx.write_kept()


def _is_folded(ctx: MailContext, mail: Outgoing) -> bool:
    """A plain answer to the sender (not a board mail with its reply address)."""
    sender = rates.normalise_address(ctx.sender)
    return (mail.reply_to is None and not mail.confirmation
            and rates.normalise_address(mail.to) == sender)


def _outcome(error_text: str | None) -> str:
    """``-> done``, or ``-> failed: why`` wrapped to the mail's 72 columns."""
    if error_text is None:
        return "-> done"
    lines = [line for line in error_text.strip().splitlines() if line.strip()]
    first = textwrap.fill(lines[0], 72, initial_indent="-> failed: ", subsequent_indent="   ",
                          break_long_words=False, break_on_hyphens=False)
    rest = [textwrap.fill(line, 72, initial_indent="   ", subsequent_indent="   ",
                          break_long_words=False, break_on_hyphens=False) for line in lines[1:]]
    return "\n".join([first, *rest])


def handle_multiple(ctx: MailContext, command: protocol.Multiple,
                    dispatch: Callable[[MailContext, protocol.Command], None]) -> None:
    lines = list(command.lines)
    if not lines:
        raise CommandError("A multiple mail holds one command per line of its body, and "
                           "this one has none.")
    most = ctx.settings.multiple_max_lines
    run, skipped = lines[:most], lines[most:]
    # Each line may bring its board mail (moves on many boards), and the summary comes.
    ctx.answer_allowance = len(run) + 1
    sections: list[str] = []
    done = 0
    seen_answers: dict[str, int] = {}
    for number, line in enumerate(run, start=1):
        # Each line quoted (masked) as the user wrote it, then what came of it.
        quoted = f"> {protocol.mask_passwords(line)}"
        try:
            inner = protocol.parse_command(line, "")
        except protocol.CommandSyntaxError as error:
            sections.append(f"{quoted}\n{_outcome(str(error))}")
            continue
        if isinstance(inner, protocol.Multiple):
            sections.append(f"{quoted}\n{_outcome('a multiple cannot hold another multiple')}")
            continue
        mark = len(ctx.outgoing)
        with _as_single_command(ctx, line):
            error_text = _attempt(ctx, lambda: dispatch(ctx, inner))
        answers = [m for m in ctx.outgoing[mark:] if _is_folded(ctx, m)]
        ctx.outgoing[mark:] = [m for m in ctx.outgoing[mark:] if not _is_folded(ctx, m)]
        done += error_text is None
        section = [f"{quoted}\n{_outcome(error_text)}"]
        for answer in answers:
            key = answer.subject + "\n" + answer.body
            if key in seen_answers:
                section.append(f"(the same answer as line {seen_answers[key]})")
                continue
            seen_answers[key] = number
            rule = "-" * min(len(answer.subject), 72)
            section.append(f"{answer.subject}\n{rule}\n{answer.body.strip()}")
        sections.append("\n\n".join(section))
    if skipped:
        shown = "".join(f"\n> {protocol.mask_passwords(line)}" for line in skipped[:_SHOWN_SKIPPED])
        more = "\n> ..." if len(skipped) > _SHOWN_SKIPPED else ""
        sections.append(
            render.wrap_text(
                f"{len(skipped)} more line{'s were' if len(skipped) != 1 else ' was'} not "
                f"processed: a multiple mail runs at most {most} lines.")
            + f"{shown}{more}"
        )
    failed = len(run) - done
    header = (f"Your multiple mail: {done} done, {failed} failed, {len(skipped)} not "
              "processed.")
    ctx.reply(*render.text_mail("Abalone multiple", header + "\n\n" + "\n\n".join(sections)))
