"""Every mail the server writes, rendered from Jinja2 templates (pure: no database).

The service layer prepares plain data (``views``: a GameView) and passes it with the
rules Board to a ``*_mail`` function, which returns ``(subject, body)``: ``game_mails``
(board, new game, game over, nag, preview, chat), ``answers`` (error, text, signup),
``help``, ``player_tables``.  The board is drawn by pure functions: ``board_text``
(the text diagram), with ``marks`` and ``legend`` for any drawing; ``summary`` and
``game_context`` make the rest of a board mail; ``text`` and ``templating`` serve all."""

from .answers import answer_mail, error_mail, signup_mail, syntax_error_mail, text_mail
from .board_text import render_board
from .game_context import board_subject
from .game_mails import (
    board_mail, chat_mail, game_over_mail, nag_mail, new_game_mail, preview_mail,
)
from .help import help_mail
from .legend import board_legend
from .marks import marble_marks, treasure_marks
from .player_tables import PlayerLine, player_table
from .summary import describe_options, move_table, score_table
from .shared import same_board, shared
from .templating import environment, render_template, template_dirs
from .text import RULE, and_list, shown_text, tidy, wrap_text
from .views import (
    RECENT_ROUNDS, Comment, GameView, RatingChange, Result, Unreachable, Vote, to_move,
)

__all__ = [
    "RECENT_ROUNDS", "RULE", "Comment", "GameView", "PlayerLine", "RatingChange", "Result", "Unreachable",
    "Vote", "and_list", "answer_mail", "board_legend", "board_mail", "board_subject",
    "chat_mail", "describe_options", "environment", "error_mail", "game_over_mail",
    "help_mail", "marble_marks", "move_table", "nag_mail", "new_game_mail", "player_table",
    "preview_mail", "render_board", "render_template", "same_board", "score_table",
    "shared", "shown_text", "signup_mail",
    "syntax_error_mail", "template_dirs", "text_mail", "tidy", "to_move", "treasure_marks",
    "wrap_text",
]
