"""The pbmserv mail protocol, pure (no database, no network): DESIGN.md section 2.

``commands`` (the dataclasses), ``grammar`` (``parse_command``; ``arguments`` reads the
words), ``registry`` (usage, help text, password places), ``comments`` (the comment in a
body), ``reply`` (moving by reply), ``masking`` (passwords hidden), ``words`` (userids,
moves, ``Re:``)."""

from .commands import (
    AcceptChallenge, AddAddress, AllShow, Analyze, Broadcast, Challenge, ChangeAddress,
    ChangePassword, Chat, Command, CommandSyntaxError, Confirm, ConfirmAddress, Delete, Digest,
    Format, GameHelp, Games, Help, History, Limit,
    List, Message, Move, MoveAction, Multiple, Notify, PasswordReset, PasswordSet, Preview,
    Queue, Ratings, RejectChallenge, Resign, Seek, ShowAs, ShowBoard, ShowBoards, ShowUser,
    Signoff, Signup, Standings, Submit, Subscribe, Unsubscribe, Vacation,
)
from .comments import extract_comment, multiple_lines
from .grammar import parse_command
from .masking import (
    PASSWORD_MASK, find_passwords, hide_passwords, mask_passwords, quote_original,
)
from .registry import (
    COMMANDS, CommandSpec, find_command, game_commands, nearest_command, server_commands, usage,
)
from .reply import (
    ReplyAction, first_reply_line, parse_reply_address, parse_reply_body, reply_local_part,
)
from .words import (
    GAME_WORD, is_valid_userid, looks_like_move, strip_subject_prefixes, userid_problem,
)

__all__ = [
    "AcceptChallenge", "AddAddress", "AllShow", "Analyze", "Broadcast", "COMMANDS", "Challenge",
    "ChangeAddress", "ChangePassword", "Chat", "Command", "CommandSpec", "CommandSyntaxError",
    "Confirm", "ConfirmAddress", "Delete", "Digest", "Format", "GAME_WORD", "GameHelp", "Games", "Help", "History", "Limit", "List",
    "Message", "Move", "MoveAction", "Multiple", "Notify", "PASSWORD_MASK", "PasswordReset",
    "PasswordSet", "Preview", "Queue", "Ratings", "RejectChallenge", "ReplyAction", "Resign",
    "Seek", "ShowAs", "ShowBoard", "ShowBoards", "ShowUser", "Signoff", "Signup", "Standings",
    "Submit", "Subscribe", "Unsubscribe", "Vacation", "extract_comment", "find_command",
    "first_reply_line", "game_commands", "is_valid_userid", "looks_like_move", "mask_passwords", "find_passwords", "hide_passwords",
    "multiple_lines", "nearest_command", "parse_command", "parse_reply_address",
    "parse_reply_body", "quote_original", "reply_local_part", "server_commands",
    "strip_subject_prefixes", "usage", "userid_problem",
]
