"""The registry of the protocol's commands: words, usage line, help texts and where the
passwords stand, of every command.

The command grammar reads commands by it, the password masking finds the password words
by it, and the help mails are made from it.  :func:`nearest_command` finds the usage of
the command a mistyped line was most probably meant to be.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from .words import GAME_WORD


@dataclass(frozen=True)
class CommandSpec:
    """One command of the protocol, for parsing, masking and the help texts.

    ``name`` is the command words (``"change password"``, ``"abalone move"``);
    ``syntax`` the bare usage line; ``secret`` the positions of the password words
    counted from the first word after the command words.
    """

    name: str
    syntax: str
    summary: str
    description: str
    aliases: tuple[str, ...] = ()
    secret: tuple[int, ...] = ()

    @property
    def game(self) -> bool:
        return self.name.startswith(GAME_WORD + " ")

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    @property
    def short_name(self) -> str:
        """The name without the game word (``move`` for ``abalone move``)."""
        return self.name.split(" ", 1)[1] if self.game else self.name


_SPECS = (
    # ---------------------------------------------------------------- server
    CommandSpec(
        "help",
        "help [<topic>...]",
        "get help on the server or on one command",
        "Mails you help.  Without a topic you get the list of all commands; with a "
        "command name (help signup, help move) you get how that command is written and "
        "what it does.  'help abalone' explains the game, its notation and options.",
    ),
    CommandSpec(
        "signup",
        "signup <userid> <password> [<address>...]",
        "register a userid",
        "Registers a new userid with its password.  The userid is 1 to 20 letters, "
        "digits, '_', '-' or '.', starting with a letter; it is not case-sensitive, the "
        "password is.  Mail for the userid goes to the address you write from, or to the "
        "addresses you list (at most 3 by default; each one other than the address you "
        "write from first gets a mail asking its owner to confirm, see 'help limits').  Pick a "
        "password you use nowhere else: it travels in the Subject of your mails.",
        secret=(1,),
    ),
    CommandSpec(
        "add",
        "add <userid> <password> <address>...",
        "add mail addresses to your userid",
        "Adds one or more mail addresses to your userid.  Each new address other than the "
        "one you write from gets a mail asking its owner to confirm; once confirmed, "
        "board mails go to it and you may reply from it.",
        secret=(1,),
    ),
    CommandSpec(
        "change password",
        "change password <userid> <old-password> <new-password>",
        "change your password",
        "Replaces your password.  Both the old and the new password are case-sensitive.",
        secret=(1, 2),
    ),
    CommandSpec(
        "change address",
        "change address <userid> <password> <address>...",
        "replace your mail addresses",
        "Replaces all the mail addresses of your userid with the ones you list; a new "
        "address other than the one you write from must be confirmed first.",
        secret=(1,),
    ),
    CommandSpec(
        "signoff",
        "signoff <userid> <password>",
        "stop playing for now",
        "Marks your userid as inactive: nobody can challenge you and you get no mail "
        "until you send a command again.  Your games and ratings are kept.",
        secret=(1,),
    ),
    CommandSpec(
        "delete",
        "delete <userid> <password>",
        "remove your userid for good",
        "Removes your userid and addresses for good.  Games you are still playing are "
        "resigned.  Finished games keep your userid in their records.",
        secret=(1,),
    ),
    CommandSpec(
        "list",
        "list",
        "list the registered userids",
        "Mails you the list of registered userids.",
    ),
    CommandSpec(
        "message",
        "message <userid> <password> <to-userid>...",
        "send a message to other players",
        "Sends the body of your mail to the players you name, signed with your userid. "
        "Their addresses are not shown to you, nor yours to them.  The number of "
        "messages a day is limited ('help limits').",
        secret=(1,),
    ),
    CommandSpec(
        "broadcast",
        "broadcast <userid> <password>",
        "send a message to every player",
        "Sends the body of your mail to every registered player.  Only for established "
        "players (enough rated games, an account some days old), once a day; see "
        "'help limits'.",
        secret=(1,),
    ),
    CommandSpec(
        "multiple",
        "multiple",
        "several commands in one mail",
        "Each line of the body is read as one full command (as you would write it in a "
        "Subject) and carried out on its own, in order, at most 50 lines by default "
        "(see 'help limits').  One summary mail answers them all: done, failed and why, or not "
        "processed; the boards of your moves come as usual.",
    ),
    CommandSpec(
        "all show",
        "all show <userid> [next|active]",
        "the boards of a player in every game",
        "Mails you the boards of all games of a player: those where it is their turn "
        "(next) or all unfinished ones (active, the default).",
    ),
    CommandSpec(
        "vacation",
        "vacation <userid> <password> on|off",
        "pause your clocks while you are away",
        "While on vacation you are neither reminded nor forfeited in any game, and "
        "nobody can challenge you.  Turn it off when you are back.",
        secret=(1,),
    ),
    CommandSpec(
        "format",
        "format <userid> <password> text|html",
        "board mails with a picture of the board, or text only",
        "Board mails come with two versions: the text with the ASCII board, and a "
        "picture of the board (HTML) that most mail programs show instead.  'text' "
        "sends the text version only; 'html' (the default) both again.",
        secret=(1,),
    ),
    CommandSpec(
        "digest",
        "digest <userid> <password> on|off",
        "one mail a day with every board awaiting your move",
        "With the digest on, you get one mail a day that lists every board where it is "
        "your move, each with its diagram and its reply address.  The board mails of "
        "each move still come as before.  'off' stops the digest.",
        secret=(1,),
    ),
    CommandSpec(
        "password reset",
        "password reset <userid>",
        "forgot your password? get a one-time code",
        "Mails a one-time code to the addresses registered for the userid.  Use it with "
        "'password set' to choose a new password.  The code expires after a day.",
    ),
    CommandSpec(
        "confirm address",
        "confirm address <code>",
        "confirm that an address may get mail",
        "An address named in signup, add or change address (other than the one the mail "
        "came from) gets one mail whose Subject is 'confirm address <code>', and nothing "
        "else until its owner replies to that mail (or sends that Subject).",
        secret=(0,),
    ),
    CommandSpec(
        "password set",
        "password set <userid> <code> <new-password>",
        "set a new password with a one-time code",
        "Sets a new password with the code that 'password reset' mailed you.",
        secret=(1, 2),
    ),
    # ------------------------------------------------------------------ game
    CommandSpec(
        "abalone help",
        "abalone help [<topic>...]",
        "rules, notation and options of Abalone",
        "Mails you the Abalone help: the rules, how moves are written, the layouts and "
        "the challenge options.  Topics: rules, notation, layouts, variants, robots, or "
        "the name of a command.",
    ),
    CommandSpec(
        "abalone standings",
        "abalone standings",
        "wins and losses of every player",
        "Mails you the table of players with their wins, losses and draws.",
    ),
    CommandSpec(
        "abalone ratings",
        "abalone ratings",
        "the rating list",
        "Mails you the rating list.  Everybody starts at 1600; ratings stay provisional "
        "for the first 20 games.",
    ),
    CommandSpec(
        "abalone history",
        "abalone history [<userid>...]",
        "finished games",
        "Mails you the list of finished games, all of them or those of the players you "
        "name, with their results.",
    ),
    CommandSpec(
        "abalone games",
        "abalone games [<userid>...] [all|active|inactive|next]",
        "list games",
        "Lists games: all of them or those of the players you name; 'active' are the "
        "unfinished games (the default), 'inactive' the finished ones, 'next' those "
        "where the named player is to move.",
    ),
    CommandSpec(
        "abalone show",
        "abalone show <board>[#<n>]...",
        "show a board",
        "Mails you the current board of each game you list.  With #n you get the "
        "position after move n instead (show 101#0 is the starting position).  "
        "'abalone show <userid>... [all|active|inactive|next]' shows the boards of "
        "those players' games.",
    ),
    CommandSpec(
        "abalone analyze",
        "abalone analyze <board>[#<n>]",
        "the computer's view of a position",
        "Mails you what the strongest computer player makes of a board: who stands "
        "better and by how much, and the line of play it expects, in words.  With #n "
        "it analyses the position after move n.  Only for finished games and for games "
        "with a computer player: a game between people that is still running cannot "
        "be analysed.  The analysis comes a few seconds later in a mail of its own; "
        "several from one sender are searched one after another.",
        aliases=("abalone analyse",),
    ),
    CommandSpec(
        "abalone showas",
        "abalone showas <userid> <password> [<board>...|all|active|inactive|next]",
        "show boards as a player sees them",
        "Mails you the boards of your games as you would get them after a move, with "
        "your own reply address, so that you can move by replying.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone challenge",
        "abalone challenge [-<option>...] <userid1> <userid2> [... <userid6>]",
        "start a new game",
        "Starts a game between 2 to 6 players; the first userid listed is player 1 and "
        "moves first.  No password is needed and you need not play yourself, but every "
        "player must be registered and accept challenges.  Options: -bowl, "
        "-layout=NAME, -teams (4 or 6 players), -ko, -target=N (marbles to push off), "
        "-movelimit=N, -nagtime=D, -forfeittime=D, -totaltime=D (days), -think=S (seconds "
        "a computer player thinks per move, up to 60), and the variants -pillar, "
        "-princess, -soccer, -thief.",
    ),
    CommandSpec(
        "abalone move",
        "abalone move <board> <userid> <password> <move>",
        "make a move",
        "Plays your move on a board.  A move is written c5,d5 (one marble) or c3-c5,d4 "
        "(a line of two or three); blanks are allowed.  Add #n (c3-c5,d4#7) to make sure "
        "it is only played as move number n.  Instead of a move you may write propose "
        "(offer a draw), undo (ask to take back the last move), accept or reject (answer "
        "such a request), or resign.  Easier: reply to the board mail with your move on "
        "the first line.",
        aliases=("abalone board", "abalone mvoe"),
        secret=(2,),
    ),
    CommandSpec(
        "abalone resign",
        "abalone resign <board> <userid> <password>",
        "give up a game",
        "Resigns from a game.  Before the first round is over this withdraws you and the "
        "game goes on without you; with two players it is then removed.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone queue",
        "abalone queue <board> <userid> <password> <move>",
        "play a move in advance",
        "Stores one move that is played for you as soon as it is your turn, if it is "
        "legal then.  A new queue command replaces the stored move.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone submit",
        "abalone submit <board> <userid> <password> <move>",
        "a move that waits for confirmation",
        "Checks a move and shows you the resulting board without playing it; it is "
        "played when you send 'abalone confirm' for the same board.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone confirm",
        "abalone confirm <board> <userid> <password>",
        "play the submitted move",
        "Plays the move you sent with 'abalone submit'.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone preview",
        "abalone preview <board>[#<n>] <move>...",
        "try moves without playing them",
        "Mails you the board after the moves you list, from the current position of a "
        "board (or after move n with #n) or, with 'abalone preview new <players> "
        "<move>...', from a new game's starting position.  Nothing is played.",
    ),
    CommandSpec(
        "abalone chat",
        "abalone chat <board> <userid> <password>",
        "talk to the players of a game",
        "Sends the body of your mail to the players and observers of a game, without "
        "making a move.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone subscribe",
        "abalone subscribe <board> <userid> <password>",
        "watch a game",
        "Sends you every board of a game you do not play in.  'abalone subscribe "
        "<userid> <password> all' subscribes you to every game started from then on.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone unsubscribe",
        "abalone unsubscribe <board> <userid> <password>",
        "stop watching a game",
        "Stops the board mails of a game you watch ('all' instead of the board number "
        "stops them all, as in subscribe).",
        secret=(2,),
    ),
    CommandSpec(
        "abalone notify",
        "abalone notify <userid> <password> [<board>...]",
        "the result of a game only",
        "With boards, you get only the final result of those games, not every move; "
        "without boards, the result of every game that ends (as pbmserv).  "
        "'abalone unsubscribe <userid> <password> all' stops them.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone limit",
        "abalone limit <userid> <password> [<N>|accept|reject]",
        "limit how many games you play",
        "Sets the number of games you play at most at one time (further challenges are "
        "refused); 0 refuses every challenge that names you.  'accept' accepts every "
        "challenge again, with no limit; 'reject' refuses them all.  Without a value it "
        "tells you the current setting.  The word abalone may be left out.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone accept",
        "abalone accept <userid> <password>",
        "accept challenges",
        "Lets other players challenge you again.  To accept a draw or undo request on "
        "a board instead, reply accept to its board mail, or send 'abalone accept "
        "<board> <userid> <password>' (the same as 'abalone move <board> <userid> "
        "<password> accept').",
        secret=(1,),
    ),
    CommandSpec(
        "abalone reject",
        "abalone reject <userid> <password>",
        "refuse challenges",
        "Refuses all challenges until you send 'abalone accept'.  To reject a draw or "
        "undo request on a board instead, reply reject to its board mail, or send "
        "'abalone reject <board> <userid> <password>'.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone tournaments",
        "abalone tournaments",
        "the tournaments open for sign-up and running",
        "Mails you the list of tournaments: those you can join, those being played, "
        "and the last ones finished, each with its format and number of players.",
    ),
    CommandSpec(
        "abalone tournament show",
        "abalone tournament show <name>",
        "a tournament's rules, players and games",
        "Mails you what a tournament is: its format, the options and time limits of its "
        "games, its players, and the boards of each round with their results.",
    ),
    CommandSpec(
        "abalone tournament join",
        "abalone tournament join <name> <userid> <password> [once]",
        "enter a tournament",
        "Enters you in a tournament while its sign-up is open.  Its games start by "
        "themselves (your limit and reject settings do not refuse them) and are rated "
        "as usual; they nag after a day and forfeit after a week unless the "
        "tournament says otherwise.  A championship enters you in its next edition too "
        "unless you add 'once'.",
        secret=(2,),
        # Written without the game word too, so that masking knows its password.
        aliases=("tournament join",),
    ),
    CommandSpec(
        "abalone tournament withdraw",
        "abalone tournament withdraw <name> <userid> <password>",
        "leave a tournament",
        "Takes you out of a tournament (and out of a championship's next editions).  "
        "Before the start you are simply no longer entered; after it, every game of "
        "yours still running in the tournament is resigned, and you are paired no more.",
        secret=(2,),
        # Written without the game word too, so that masking knows its password.
        aliases=("tournament withdraw",),
    ),
    CommandSpec(
        "abalone tournament standings",
        "abalone tournament standings <name>",
        "a tournament's table with its tie-breaks",
        "Mails you a tournament's standings: points (1 a win, 1/2 a draw; a bye or an "
        "opponent who never moved 1), and each tie-break in its own column: "
        "Sonneborn-Berger in round robins and championships, Buchholz in a Swiss, the "
        "round reached in a knockout, then head-to-head, marble difference and the "
        "rating at the start.  A line under the table says how ties are broken.",
    ),
    CommandSpec(
        "abalone tournament mail",
        "abalone tournament mail <name> <userid> <password> on|off",
        "standings after each round, or not",
        "Every entrant gets the standings after each round and at the end; 'off' stops "
        "those mails for you in that tournament, 'on' starts them again.  The board "
        "mails of your games still come.",
        secret=(2,),
        # Written without the game word too, so that masking knows its password.
        aliases=("tournament mail",),
    ),
    CommandSpec(
        "abalone seek",
        "abalone seek <userid> <password> <N>",
        "look for opponents",
        "Puts you on the list of players looking for an N-player game (2 to 6).  As soon "
        "as enough players are waiting, the game starts.  Everyone sees who is "
        "waiting in 'abalone games' and 'list'.  The word abalone may be left out.",
        secret=(1,),
    ),
)

#: Every command by name (``"signup"``, ``"abalone move"``), in help order.
COMMANDS: dict[str, CommandSpec] = {spec.name: spec for spec in _SPECS}
#: Command words and aliases (``"abalone mvoe"``) to their spec.
COMMAND_WORDS: dict[tuple[str, ...], CommandSpec] = {
    words: spec
    for spec in _SPECS
    for words in (spec.words, *(tuple(alias.split()) for alias in spec.aliases))
}
#: The second words of the two-word game commands (``move``, ``mvoe``, ``board``): each
#: names a command by itself after the game word (``tournament`` does not: its third
#: word does).
GAME_COMMAND_WORDS = {words[1] for words in COMMAND_WORDS
                      if words[0] == GAME_WORD and len(words) == 2}
#: The first words of the server commands (``signup``, ``change``, ``password``).
SERVER_FIRST_WORDS = {words[0] for words in COMMAND_WORDS if words[0] != GAME_WORD}


def server_commands() -> list[CommandSpec]:
    return [spec for spec in _SPECS if not spec.game]


def game_commands() -> list[CommandSpec]:
    return [spec for spec in _SPECS if spec.game]


def find_command(topic: str) -> CommandSpec | None:
    """The spec a help topic names: ``move``, ``abalone move``, ``mvoe``, ``change password``."""
    words = tuple(topic.lower().split())
    if not words:
        return None
    if words in COMMAND_WORDS:
        return COMMAND_WORDS[words]
    if words[0] != GAME_WORD and (GAME_WORD, *words) in COMMAND_WORDS:
        return COMMAND_WORDS[(GAME_WORD, *words)]
    return None


def usage(name: str) -> str:
    """The bare usage line of a command by name."""
    return COMMANDS[name].syntax


#: The most characters of a typed word compared with command words.
_LONGEST_COMPARED = 32


def nearest_command(words: Sequence[str]) -> str:
    """The usage line of the command ``words`` (a mistyped command line) most resembles.

    Compares the first one to three words with every command name and alias, also as if
    the game word had been left out; after the game word, the words after it with each
    command's own words. Falls back to the usage of ``help`` (``abalone help`` after the
    game word).
    """
    # Words cut at a length no command word comes near: difflib's cost grows with the
    # product of the lengths, and a longer word resembles no command anyway.
    lowered = [w[:_LONGEST_COMPARED].lower() for w in words[:3]]
    if not lowered:
        return COMMANDS["help"].syntax
    after_game_word = lowered[0] == GAME_WORD and len(lowered) > 1
    fallback = COMMANDS["abalone help" if after_game_word else "help"]
    best, best_score = fallback, 0.0
    for key, spec in COMMAND_WORDS.items():
        if after_game_word:
            # After the game word a command's own words are compared (the game word
            # they share made "abalone singup" look like "abalone resign", not like
            # "signup"); a server command, written after it by mistake, a little less.
            own = key[1:] if key[0] == GAME_WORD else key
            candidates = [(" ".join(lowered[1: 1 + len(own)]), " ".join(own),
                           0.0 if key[0] == GAME_WORD else 0.05)]
        else:
            candidates = [(" ".join(lowered[: len(key)]), " ".join(key), 0.0)]
        if key[0] == GAME_WORD and lowered[0] != GAME_WORD:
            candidates.append((" ".join(lowered[: len(key) - 1]), " ".join(key[1:]), 0.05))
        for typed, name, penalty in candidates:
            score = difflib.SequenceMatcher(None, typed, name).ratio() - penalty
            if typed.split()[:1] == name.split()[:1]:
                score += 0.1  # the first word is right; the rest decides
            if score > best_score:
                best, best_score = spec, score
    return best.syntax if best_score >= 0.6 else fallback.syntax




def match_spec(lowered: Sequence[str]) -> CommandSpec | None:
    """The command that the lower-case words of a line begin with (longest words first)."""
    for length in (3, 2, 1):
        if len(lowered) >= length and tuple(lowered[:length]) in COMMAND_WORDS:
            return COMMAND_WORDS[tuple(lowered[:length])]
    return None


def matched_length(spec: CommandSpec, lowered: Sequence[str]) -> int:
    """How many of the words ``spec``'s name or alias took (``abalone mvoe``: 2)."""
    for words in (spec.words, *(tuple(a.split()) for a in spec.aliases)):
        if tuple(lowered[: len(words)]) == words:
            return len(words)
    return len(spec.words)
