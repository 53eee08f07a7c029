"""Help mails, made from the protocol's command registry and the ``help*.txt`` templates."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping, Sequence

from ..config import Settings
from ..protocol.registry import find_command, game_commands, server_commands
from ..rules import Board, Rules, get_layout, layout_names
from .board_text import render_board
from .templating import render_body
from .text import tidy


#: Help topics besides the commands, with the template of each (aliases after the first six).
HELP_TOPICS = {
    "rules": "help_rules.txt",
    "notation": "help_notation.txt",
    "layouts": "help_layouts.txt",
    "variants": "help_variants.txt",
    "robots": "help_robots.txt",
    "reply": "help_reply.txt",
    "limits": "help_limits.txt",
    "abalone": "help_rules.txt",
    "security": "help_limits.txt",
    "moves": "help_notation.txt",
    "options": "help_variants.txt",
    "votes": "help_votes.txt",
    "propose": "help_votes.txt",
    "undo": "help_votes.txt",
    "draw": "help_votes.txt",
    "marks": "help_marks.txt",
    "**": "help_marks.txt",
    "*": "help_marks.txt",
    "comment": "help_marks.txt",
    "comments": "help_marks.txt",
}

#: Words that name more than one thing: each gives every help it may mean, so that
#: every word a mail suggests has help (accept a draw versus accept challenges).
WORD_TOPICS: dict[str, tuple[str, ...]] = {
    "accept": ("votes", "abalone accept"),
    "reject": ("votes", "abalone reject"),
    "resign": ("abalone resign", "reply"),
    "show": ("abalone show", "reply"),
    "change": ("change password", "change address"),
    "password": ("password reset", "password set", "change password"),
    "all": ("all show",),
}


#: The limits ``help limits`` tells when the server does not say its own.
_DEFAULT_LIMITS = asdict(Settings())

TOPIC_NAMES = ("rules", "notation", "layouts", "variants", "robots", "reply", "votes", "marks", "limits")


def help_mail(
    topics: Sequence[str] = (),
    *,
    game: bool = False,
    robots: Sequence[tuple[str, str]] = (),
    server_address: str = "abalone@localhost",
    limits: Mapping[str, Any] | None = None,
) -> tuple[str, str]:
    """Help, made from the command registry of :mod:`abalone_pbm.protocol.registry`.

    ``help`` (no topics): every command with its syntax and a summary; ``abalone help``
    (``game=True``): the rules, the notation and the game commands.  Topics are command
    names (``signup``, ``move``, ``change password``) or ``rules``, ``notation``,
    ``layouts``, ``variants``, ``robots`` (``robots``: (userid, description) of the
    computer players), ``reply``, ``limits`` (``limits``: the server's settings of
    that name, see config.Settings).
    """
    words = [t.lower() for t in topics]
    sections: list[str] = []
    titles: list[str] = []
    unknown: list[str] = []
    i = 0
    while i < len(words):
        # A lone word that means several things (not the first of a longer command).
        longer = len(words) - i >= 2 and find_command(" ".join(words[i : i + 2])) is not None
        if words[i] in WORD_TOPICS and not longer:
            for meaning in WORD_TOPICS[words[i]]:
                found = find_command(meaning)
                if found is not None:
                    sections.append(render_body("help_command.txt", spec=found).rstrip("\n"))
                else:
                    sections.append(_help_topic(meaning, robots, server_address).rstrip("\n"))
            titles.append(words[i])
            i += 1
            continue
        spec = None
        for length in (3, 2, 1):
            candidate = " ".join(words[i : i + length])
            if len(words) - i >= length:
                spec = find_command(candidate)
                if spec is not None:
                    break
        if spec is not None:
            sections.append(render_body("help_command.txt", spec=spec).rstrip("\n"))
            titles.append(spec.short_name)
            i += length
            continue
        topic = words[i]
        if topic in HELP_TOPICS:
            sections.append(_help_topic(topic, robots, server_address, limits).rstrip("\n"))
            titles.append(topic)
        else:
            unknown.append(topic)
        i += 1
    if not sections and not unknown:
        name = "help_abalone.txt" if game else "help.txt"
        body = render_body(
            name,
            server=server_commands(),
            games=game_commands(),
            topics=TOPIC_NAMES,
            address=server_address,
            rules=_help_topic("rules", robots, server_address).rstrip("\n") if game else "",
            notation=_help_topic("notation", robots, server_address).rstrip("\n")
            if game
            else "",
        )
        return "Abalone help", body
    if unknown:
        sections.append(
            render_body("help_unknown.txt",
                unknown=unknown,
                server=server_commands(),
                games=game_commands(),
                topics=TOPIC_NAMES,
            ).rstrip("\n")
        )
    subject = "Abalone help" + (": " + ", ".join(titles) if titles else "")
    return subject, tidy("\n\n".join(sections))


def _help_topic(topic: str, robots: Sequence[tuple[str, str]], address: str,
                limits: Mapping[str, Any] | None = None) -> str:
    context: dict[str, Any] = {"robots": list(robots), "address": address,
                               "limits": dict(limits or _DEFAULT_LIMITS)}
    if topic == "layouts":
        context["layouts"] = _layout_diagrams()
    return render_body(HELP_TOPICS[topic], **context)


def _layout_diagrams() -> list[dict[str, Any]]:
    out = []
    for name in ("standard", "bowl"):
        for players in range(2, 7):
            board = Board.from_layout(name, Rules(players=players))
            out.append({"title": f"{name}, {players} players", "diagram": render_board(board)})
    for name in layout_names()[2:]:
        board = Board.from_layout(name)
        layout = get_layout(name)
        out.append(
            {"title": f"{name}: {layout.description}".rstrip(": "), "diagram": render_board(board)}
        )
    return out
