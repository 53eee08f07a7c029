"""The mail protocol's command parser (DESIGN 2.1): every command, case rules,
Re:/Fwd: prefixes, aliases, #n, blanks in moves, and the usage line of every error."""

from __future__ import annotations

import pytest

from abalone_pbm import protocol as p
from abalone_pbm.protocol import CommandSyntaxError, parse_command


def syntax_of(name: str) -> str:
    return f'Syntax is "{p.COMMANDS[name].syntax}"'


def error_for(subject: str, body: str = "") -> CommandSyntaxError:
    with pytest.raises(CommandSyntaxError) as info:
        parse_command(subject, body)
    return info.value


# ----------------------------------------------------------------- server commands
@pytest.mark.parametrize(
    "subject, expected",
    [
        ("help", p.Help(())),
        ("help Signup", p.Help(("signup",))),
        ("help change password", p.Help(("change", "password"))),
        ("signup Fred Chocolate", p.Signup("fred", "Chocolate", ())),
        (
            "signup fred pw fred@example.org fred@work.example.com",
            p.Signup("fred", "pw", ("fred@example.org", "fred@work.example.com")),
        ),
        ("add fred pw f@x.org", p.AddAddress("fred", "pw", ("f@x.org",))),
        ("change password fred Old New", p.ChangePassword("fred", "Old", "New")),
        ("CHANGE ADDRESS fred pw a@b.org c@d.org", p.ChangeAddress("fred", "pw", ("a@b.org", "c@d.org"))),
        ("signoff fred pw", p.Signoff("fred", "pw")),
        ("delete fred pw", p.Delete("fred", "pw")),
        ("list", p.List()),
        ("message fred pw Wilma barney", p.Message("fred", "pw", ("wilma", "barney"), "")),
        ("broadcast fred pw", p.Broadcast("fred", "pw", "")),
        ("multiple", p.Multiple(())),
        ("all show fred", p.AllShow("fred", None)),
        ("all show fred NEXT", p.AllShow("fred", "next")),
        ("all show fred active", p.AllShow("fred", "active")),
        ("vacation fred pw on", p.Vacation("fred", "pw", True)),
        ("vacation fred pw OFF", p.Vacation("fred", "pw", False)),
        ("password reset Fred", p.PasswordReset("fred")),
        ("password set fred X7Y2 NewPw", p.PasswordSet("fred", "X7Y2", "NewPw")),
    ],
)
def test_server_commands(subject: str, expected: p.Command) -> None:
    assert parse_command(subject, "") == expected


# ------------------------------------------------------------------- game commands
@pytest.mark.parametrize(
    "subject, expected",
    [
        ("abalone help", p.GameHelp(())),
        ("abalone help move", p.GameHelp(("move",))),
        ("abalone standings", p.Standings()),
        ("abalone ratings", p.Ratings()),
        ("abalone history", p.History(())),
        ("abalone history Fred", p.History(("fred",))),
        ("abalone games", p.Games((), None)),
        ("abalone games fred wilma", p.Games(("fred", "wilma"), None)),
        ("abalone games fred Next", p.Games(("fred",), "next")),
        ("abalone games inactive", p.Games((), "inactive")),
        ("abalone show 101", p.ShowBoards((p.ShowBoard(101, None),))),
        ("abalone show 101#5", p.ShowBoards((p.ShowBoard(101, 5),))),
        (
            "abalone show 101 102#0 103",
            p.ShowBoards((p.ShowBoard(101), p.ShowBoard(102, 0), p.ShowBoard(103))),
        ),
        ("abalone show Fred", p.ShowUser(("fred",), None)),
        ("abalone show fred wilma all", p.ShowUser(("fred", "wilma"), "all")),
        ("abalone showas fred pw", p.ShowAs("fred", "pw", (), None)),
        ("abalone showas fred pw 101 102", p.ShowAs("fred", "pw", (101, 102), None)),
        ("abalone showas fred pw next", p.ShowAs("fred", "pw", (), "next")),
        ("abalone challenge fred wilma", p.Challenge(("fred", "wilma"), {})),
        (
            "abalone challenge -bowl a b c d e f",
            p.Challenge(("a", "b", "c", "d", "e", "f"), {"bowl": True}),
        ),
        (
            "abalone challenge -layout=Belgian_Daisy -target=5 -ko Fred Wilma",
            p.Challenge(("fred", "wilma"), {"layout": "belgian-daisy", "target": "5", "ko": True}),
        ),
        (
            "abalone challenge -teams -movelimit=200 -nagtime=3 --forfeittime=10 -totaltime=60 a b c d",
            p.Challenge(
                ("a", "b", "c", "d"),
                {"teams": True, "movelimit": "200", "nagtime": "3", "forfeittime": "10",
                 "totaltime": "60"},
            ),
        ),
        (
            "abalone challenge -pillar a b",
            p.Challenge(("a", "b"), {"pillar": True}),
        ),
        ("abalone challenge -princess -soccer -thief a b",
         p.Challenge(("a", "b"), {"princess": True, "soccer": True, "thief": True})),
        ("abalone move 101 fred Secret c3-c5,d4", p.Move(101, "fred", "Secret", "c3-c5,d4", None)),
        ("abalone move 101 fred pw C3-C5,D4#7", p.Move(101, "fred", "pw", "c3-c5,d4", 7)),
        ("abalone move 101 fred pw c3 - c5 , d4", p.Move(101, "fred", "pw", "c3-c5,d4", None)),
        ("abalone move 101 fred pw c3 - c5 , d4 # 7", p.Move(101, "fred", "pw", "c3-c5,d4", 7)),
        ("abalone move 101 fred pw c5,d5 #12", p.Move(101, "fred", "pw", "c5,d5", 12)),
        ("abalone board 101 fred pw c5,d5", p.Move(101, "fred", "pw", "c5,d5", None)),
        ("abalone mvoe 101 fred pw c5,d5", p.Move(101, "fred", "pw", "c5,d5", None)),
        ("abalone move 101 fred pw propose", p.MoveAction(101, "fred", "pw", "propose")),
        ("abalone move 101 fred pw UNDO", p.MoveAction(101, "fred", "pw", "undo")),
        ("abalone move 101 fred pw accept", p.MoveAction(101, "fred", "pw", "accept")),
        ("abalone move 101 fred pw reject", p.MoveAction(101, "fred", "pw", "reject")),
        ("abalone move 101 fred pw resign", p.Resign(101, "fred", "pw")),
        ("abalone resign 101 fred pw", p.Resign(101, "fred", "pw")),
        ("abalone queue 101 fred pw c3-c5,d4#9", p.Queue(101, "fred", "pw", "c3-c5,d4", 9)),
        ("abalone submit 101 fred pw a1-c3,b2", p.Submit(101, "fred", "pw", "a1-c3,b2", None)),
        ("abalone confirm 101 fred pw", p.Confirm(101, "fred", "pw")),
        ("abalone preview 101", p.Preview(101, None, None, ())),
        (
            "abalone preview 101#4 c3-c5,d4 g5 - g7 , f4",
            p.Preview(101, 4, None, ("c3-c5,d4", "g5-g7,f4")),
        ),
        ("abalone preview new 3 c5,d5", p.Preview(None, None, 3, ("c5,d5",))),
        ("abalone preview NEW 2", p.Preview(None, None, 2, ())),
        ("abalone chat 101 fred pw", p.Chat(101, "fred", "pw", "")),
        ("abalone subscribe 101 fred pw", p.Subscribe(101, "fred", "pw")),
        ("abalone subscribe fred pw all", p.Subscribe("all", "fred", "pw")),
        ("abalone unsubscribe 101 fred pw", p.Unsubscribe(101, "fred", "pw")),
        ("abalone unsubscribe fred pw ALL", p.Unsubscribe("all", "fred", "pw")),
        ("abalone notify fred pw", p.Notify("fred", "pw", ())),
        ("abalone notify fred pw 101 102", p.Notify("fred", "pw", (101, 102))),
        ("abalone limit fred pw", p.Limit("fred", "pw", None)),
        ("abalone limit fred pw 5", p.Limit("fred", "pw", 5)),
        ("abalone limit fred pw Reject", p.Limit("fred", "pw", "reject")),
        ("abalone limit fred pw accept", p.Limit("fred", "pw", "accept")),
        ("abalone accept fred pw", p.AcceptChallenge("fred", "pw")),
        ("abalone reject fred pw", p.RejectChallenge("fred", "pw")),
        ("abalone seek fred pw 3", p.Seek("fred", "pw", 3)),
    ],
)
def test_game_commands(subject: str, expected: p.Command) -> None:
    assert parse_command(subject, "") == expected


def test_every_registered_command_is_covered_by_a_handler_and_has_help() -> None:
    assert len(p.COMMANDS) == 47  # 41 and the six tournament commands
    for spec in p.COMMANDS.values():
        assert spec.syntax.startswith(spec.name)
        assert spec.summary and len(spec.description) > 20
        assert spec.description.endswith(".")


# --------------------------------------------------------------------- case rules
def test_command_words_and_userids_ignore_case_passwords_do_not() -> None:
    cmd = parse_command("ABALONE MOVE 101 FRED SeCrEt C3-C5,D4")
    assert cmd == p.Move(101, "fred", "SeCrEt", "c3-c5,d4", None)
    assert parse_command("Change Password FRED OldPw NewPw") == p.ChangePassword(
        "fred", "OldPw", "NewPw"
    )
    assert parse_command("SIGNUP Fred.Flint_1-x PassWord") == p.Signup(
        "fred.flint_1-x", "PassWord", ()
    )


@pytest.mark.parametrize(
    "prefix",
    ["Re: ", "RE: ", "re:", "Fwd: ", "FW: ", "Fw: ", "AW: ", "WG: ", "Re: Re: Fwd: ", "Re[2]: ",
     "  Re:  AW:  ", "SV: "],
)
def test_reply_and_forward_prefixes_are_ignored(prefix: str) -> None:
    assert parse_command(prefix + "abalone move 101 fred pw c3-c5,d4") == p.Move(
        101, "fred", "pw", "c3-c5,d4", None
    )


def test_subject_of_a_board_mail_with_password_and_move_added_is_a_move() -> None:
    # pbmserv players reply to "Abalone Board 101 fred" adding password and move.
    assert parse_command("Re: Abalone Board 101 fred chocolate c3-c5,d4") == p.Move(
        101, "fred", "chocolate", "c3-c5,d4", None
    )


def test_tabs_and_multiple_blanks_separate_words() -> None:
    assert parse_command("abalone\tmove  101   fred\tpw   c5,d5") == p.Move(
        101, "fred", "pw", "c5,d5", None
    )


def test_a_move_that_is_not_a_move_is_kept_for_the_rules_to_explain() -> None:
    cmd = parse_command("abalone move 101 fred pw zz9")
    assert isinstance(cmd, p.Move) and cmd.move_text == "zz9"
    cmd = parse_command("abalone move 101 fred pw c3-c5,d4 nice move")
    assert isinstance(cmd, p.Move) and cmd.move_text == "c3-c5,d4 nice move"


def test_passwords_are_not_in_the_repr() -> None:
    text = repr(parse_command("abalone move 101 fred Secret99 c5,d5"))
    assert "Secret99" not in text
    assert "Secret99" not in repr(parse_command("change password fred Old11 New22"))
    assert "New22" not in repr(parse_command("change password fred Old11 New22"))
    assert "C0de" not in repr(parse_command("password set fred C0de Pw"))


def test_payload_commands_take_the_body() -> None:
    body = "Hello Wilma,\nshall we play?\n\n-- \nFred\n"
    assert parse_command("message fred pw wilma", body).text == "Hello Wilma,\nshall we play?"  # type: ignore[attr-defined]
    assert parse_command("broadcast fred pw", body).text.startswith("Hello")  # type: ignore[attr-defined]
    assert parse_command("abalone chat 101 fred pw", "> old\ngg\n").text == "gg"  # type: ignore[attr-defined]
    multiple = parse_command(
        "multiple",
        "abalone move 101 fred pw c5,d5\n\n  abalone show 102  \n> quoted line\n-- \nsignup x y\n",
    )
    assert multiple == p.Multiple(("abalone move 101 fred pw c5,d5", "abalone show 102"))


def test_the_lines_of_a_multiple_body_parse_on_their_own() -> None:
    multiple = parse_command("multiple", "signup fred pw\nabalone challenge fred wilma\n")
    assert isinstance(multiple, p.Multiple)
    assert [type(parse_command(line)) for line in multiple.lines] == [p.Signup, p.Challenge]


# ------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "subject, name, fragment",
    [
        ("abalone move 101 fred secret", "abalone move", "needs a move"),
        ("abalone move 101 fred", "abalone move", "needs a password"),
        ("abalone move 101", "abalone move", "needs a userid"),
        ("abalone move", "abalone move", "needs a board number"),
        ("abalone move fred pw c3-c5,d4", "abalone move", '"fred" is not a board number'),
        ("abalone move 0 fred pw c3-c5,d4", "abalone move", '"0" is not a board number'),
        ("abalone board 101 fred", "abalone move", "needs a password"),
        ("abalone mvoe 101 fred", "abalone move", "needs a password"),
        ("abalone move 101 fred pw c3-c5,d4#x", "abalone move", '"#x" is not a move number'),
        ("abalone move 101 fred pw c3-c5,d4#0", "abalone move", '"#0" is not a move number'),
        ("abalone move 101 fred pw #7", "abalone move", "needs a move before #7"),
        ("abalone move 101 fred pw resign#3", "abalone move", "takes no move number"),
        ("abalone resign 101 fred", "abalone resign", "needs a password"),
        ("abalone resign 101 fred pw now", "abalone resign", "Too many words"),
        ("abalone queue 101 fred pw", "abalone queue", "needs a move"),
        ("abalone submit 101 fred", "abalone submit", "needs a password"),
        ("abalone confirm 101", "abalone confirm", "needs a userid"),
        ("abalone chat x fred pw", "abalone chat", "is not a board number"),
        ("abalone preview", "abalone preview", "needs a board number or new"),
        ("abalone preview new 7", "abalone preview", "not a number of players"),
        ("abalone preview 101 c3-c5,d4 hello", "abalone preview", '"hello" is not a move'),
        ("abalone preview 101#x", "abalone preview", "is not a move number"),
        ("abalone subscribe 101 fred", "abalone subscribe", "needs a password"),
        ("abalone subscribe fred pw some", "abalone subscribe", 'is not "all"'),
        ("abalone unsubscribe 101", "abalone unsubscribe", "needs a userid"),
        ("abalone notify fred pw x1", "abalone notify", "is not a board number"),
        ("abalone notify fred", "abalone notify", "needs a password"),
        ("abalone limit fred pw lots", "abalone limit", "is not a number of games"),
        ("abalone limit fred pw 3 4", "abalone limit", "Too many words"),
        ("abalone accept fred", "abalone accept", "needs a password"),
        ("abalone reject fred pw x", "abalone reject", "Too many words"),
        ("abalone seek fred pw", "abalone seek", "needs the number of players"),
        ("abalone seek fred pw 9", "abalone seek", "not a number of players"),
        ("abalone show", "abalone show", "needs a board number or a userid"),
        ("abalone show 101 fred", "abalone show", '"fred" is not a board number'),
        ("abalone show fred 101", "abalone show", "not both"),
        ("abalone showas fred pw 101 next", "abalone showas", "not both"),
        ("abalone showas fred pw later", "abalone showas", "is not a board number"),
        ("abalone showas fred", "abalone showas", "needs a password"),
        ("abalone challenge fred", "abalone challenge", "2 to 6 players, not one userid"),
        ("abalone challenge", "abalone challenge", "not no userid"),
        ("abalone challenge a b c d e f g", "abalone challenge", "not 7 userids"),
        ("abalone challenge -foo a b", "abalone challenge", 'Unknown challenge option "-foo"'),
        ("abalone challenge -bowel a b", "abalone challenge", "did you mean -bowl?"),
        ("abalone challenge -target a b", "abalone challenge", "-target needs a value"),
        ("abalone challenge -target=x a b", "abalone challenge", "positive whole number"),
        ("abalone challenge -target=0 a b", "abalone challenge", "positive whole number"),
        ("abalone challenge -ko=1 a b", "abalone challenge", "-ko takes no value"),
        ("abalone challenge -layout=spiral a b", "abalone challenge", 'Unknown layout "spiral"'),
        ("abalone challenge -bowl -layout=pyramid a b", "abalone challenge", "cannot be used together"),
        ("abalone challenge 1fred wilma", "abalone challenge", "must start with a letter"),
        ("abalone standings now", "abalone standings", "Too many words"),
        ("abalone ratings x", "abalone ratings", "Too many words"),
        ("abalone games fred@x", "abalone games", "may only contain"),
        ("signup", "signup", "needs a userid"),
        ("signup fred", "signup", "needs a password"),
        ("signup fred pw notanaddress", "signup", '"notanaddress" is not a mail address'),
        ("add fred pw", "add", "at least one mail address"),
        ("change password fred old", "change password", "needs the new password"),
        ("change password fred old new extra", "change password", "Too many words"),
        ("change address fred pw", "change address", "at least one mail address"),
        ("signoff fred", "signoff", "needs a password"),
        ("delete fred pw now", "delete", "Too many words"),
        ("list all", "list", "Too many words"),
        ("message fred pw", "message", "needs the userids"),
        ("broadcast fred", "broadcast", "needs a password"),
        ("multiple x", "multiple", "Too many words"),
        ("all show", "all show", "needs a userid"),
        ("all show fred later", "all show", 'neither "next" nor "active"'),
        ("vacation fred pw", "vacation", '"on" or "off"'),
        ("vacation fred pw maybe", "vacation", 'neither "on" nor "off"'),
        ("password reset", "password reset", "needs a userid"),
        ("password set fred code", "password set", "needs the new password"),
    ],
)
def test_syntax_errors_name_the_usage_of_the_command(subject: str, name: str, fragment: str) -> None:
    error = error_for(subject)
    assert error.syntax == syntax_of(name)
    assert error.usage == p.COMMANDS[name].syntax
    assert fragment in error.message
    assert str(error) == f"{error.message}\n{error.syntax}"


def test_the_move_usage_line_is_exactly_pbmservs() -> None:
    error = error_for("abalone move 101 fred secret")
    assert error.syntax == 'Syntax is "abalone move <board> <userid> <password> <move>"'


@pytest.mark.parametrize(
    "userid, fragment",
    [
        ("1fred", "must start with a letter"),
        ("_fred", "must start with a letter"),
        ("fred!", 'may only contain letters, digits, "_", "-" and "."'),
        ("fréd", "may only contain"),
        ("a" * 21, "longer than 20 characters"),
    ],
)
def test_invalid_userids_get_a_specific_message(userid: str, fragment: str) -> None:
    error = error_for(f"signup {userid} pw")
    assert fragment in error.message
    assert f'"{userid}" is not a valid userid' in error.message
    assert p.is_valid_userid("a" * 20)
    assert p.is_valid_userid("F.red-1_x")


@pytest.mark.parametrize(
    "subject, name",
    [
        ("abalone moev 101 fred pw c5,d5", "abalone move"),
        ("abalone chalenge fred wilma", "abalone challenge"),
        ("abalone resing 101 fred pw", "abalone resign"),
        ("sigup fred pw", "signup"),
        ("singoff fred pw", "signoff"),
        ("vaction fred pw on", "vacation"),
        ("abalone standing", "abalone standings"),
    ],
)
def test_unknown_commands_get_the_nearest_usage(subject: str, name: str) -> None:
    error = error_for(subject)
    assert "Unknown command" in error.message
    assert error.syntax == syntax_of(name)


def test_game_command_without_the_game_word() -> None:
    error = error_for("move 101 fred pw c3-c5,d4")
    assert 'begin with the word "abalone"' in error.message
    assert "fred" not in error.message and "pw" not in error.message  # words not echoed
    assert error.syntax == syntax_of("abalone move")
    assert error_for("challenge fred wilma").syntax == syntax_of("abalone challenge")


def test_two_word_commands_with_a_wrong_second_word() -> None:
    error = error_for("change passwd fred a b")
    assert error.syntax == syntax_of("change password")
    assert error_for("change adress fred pw a@b.org").syntax == syntax_of("change address")
    assert error_for("password sett fred c n").syntax == syntax_of("password set")
    assert error_for("all shwo fred").syntax == syntax_of("all show")


def test_empty_subject_and_lone_game_word() -> None:
    assert error_for("").syntax == syntax_of("help")
    assert error_for("Re: ").syntax == syntax_of("help")
    assert error_for("abalone").syntax == syntax_of("abalone help")


def test_nearest_command_returns_bare_usage() -> None:
    assert p.nearest_command(["abalone", "mvoe"]) == p.COMMANDS["abalone move"].syntax
    assert p.nearest_command(["resgin", "101"]) == p.COMMANDS["abalone resign"].syntax
    assert p.nearest_command([]) == p.COMMANDS["help"].syntax
    assert p.nearest_command(["xyzzy", "plugh"]) == p.COMMANDS["help"].syntax


def test_find_command_for_help_topics() -> None:
    assert p.find_command("move").name == "abalone move"  # type: ignore[union-attr]
    assert p.find_command("mvoe").name == "abalone move"  # type: ignore[union-attr]
    assert p.find_command("abalone board").name == "abalone move"  # type: ignore[union-attr]
    assert p.find_command("Change Password").name == "change password"  # type: ignore[union-attr]
    assert p.find_command("help").name == "help"  # type: ignore[union-attr]
    assert p.find_command("nothing") is None


def test_commands_report_their_registry_name() -> None:
    assert parse_command("abalone move 101 fred pw c5,d5").name == "abalone move"
    assert parse_command("abalone board 101 fred pw c5,d5").name == "abalone move"
    assert parse_command("signup fred pw").name == "signup"
    assert parse_command("abalone show 101").name == "abalone show"


def test_strip_subject_prefixes() -> None:
    assert p.strip_subject_prefixes("Re: Fwd: AW: WG: FW: x y") == "x y"
    assert p.strip_subject_prefixes("Regarding the game") == "Regarding the game"
    assert p.strip_subject_prefixes("Remove me") == "Remove me"


def test_multiple_skips_attributions_and_old_mail() -> None:
    body = (
        "abalone show 101\n"
        "On Mon, 1 Jan 2024, Abalone <abalone@example.org> wrote:\n"
        "> abalone resign 101 fred pw\n"
        "signoff fred pw\n"
        "-----Original Message-----\n"
        "abalone resign 102 fred pw\n"
    )
    assert p.multiple_lines(body) == ["abalone show 101", "signoff fred pw"]


def test_a_players_own_settings_need_not_begin_with_the_game_word() -> None:
    from abalone_pbm.protocol import AcceptChallenge, Limit, Notify, Seek, parse_command

    assert parse_command("limit wilma pw 0") == Limit("wilma", "pw", 0)
    assert isinstance(parse_command("notify wilma pw"), Notify)
    assert parse_command("seek wilma pw 2") == Seek("wilma", "pw", 2)
    assert isinstance(parse_command("accept wilma pw"), AcceptChallenge)
    # Commands about a board still need it.
    assert 'begin with the word "abalone"' in error_for("move 101 fred pw c3-c5,d4").message


def test_analyze_reads_a_board_and_an_optional_move_number() -> None:
    assert parse_command("abalone analyze 101") == p.Analyze(101, None)
    assert parse_command("Abalone Analyse 101#12") == p.Analyze(101, 12)
    for subject, words in (("abalone analyze", "Too few words"),
                           ("abalone analyze fred", "not a board number"),
                           ("abalone analyze 101#x", "not a move number"),
                           ("abalone analyze 101 5", "Too many words")):
        with pytest.raises(p.CommandSyntaxError, match=words):
            parse_command(subject)


def test_think_is_a_whole_number_of_seconds() -> None:
    command = parse_command("abalone challenge -think=20 fred boulder")
    assert command == p.Challenge(("fred", "boulder"), {"think": "20"})
    with pytest.raises(p.CommandSyntaxError, match="positive whole number"):
        parse_command("abalone challenge -think=2.5 fred boulder")


def test_an_unknown_command_quotes_only_words_it_can_read() -> None:
    assert 'Unknown command "frobnicate"' in error_for("frobnicate fred pw").message
    for line in ("=?us-ascii?Q?add_fred_Pw11zQx7325_x", "change\ufffd\ufffdfred\ufffdPw9zQx1460"):
        message = error_for(line).message
        assert "zQx" not in message and "[text the server cannot read" in message
