"""Passwords never come back in a quoted mail (DESIGN 2.3)."""

from __future__ import annotations

import pytest

from abalone_pbm.protocol.masking import (
    find_passwords, hide_passwords, mask_passwords, quote_original,
)

M = "********"


@pytest.mark.parametrize(
    "line, masked",
    [
        ("signup fred Secret", f"signup fred {M}"),
        ("signup fred Secret fred@example.org", f"signup fred {M} fred@example.org"),
        ("add fred Secret f@x.org", f"add fred {M} f@x.org"),
        ("change password fred Old New", f"change password fred {M} {M}"),
        ("change address fred Secret a@b.org", f"change address fred {M} a@b.org"),
        ("signoff fred Secret", f"signoff fred {M}"),
        ("delete fred Secret", f"delete fred {M}"),
        ("message fred Secret wilma", f"message fred {M} wilma"),
        ("broadcast fred Secret", f"broadcast fred {M}"),
        ("vacation fred Secret on", f"vacation fred {M} on"),
        ("password set fred C0DE NewPw", f"password set fred {M} {M}"),
        ("password reset fred", "password reset fred"),
        ("abalone showas fred Secret 101", f"abalone showas fred {M} 101"),
        ("abalone move 101 fred Secret c3-c5,d4", f"abalone move 101 fred {M} c3-c5,d4"),
        ("abalone board 101 fred Secret c3-c5,d4", f"abalone board 101 fred {M} c3-c5,d4"),
        ("abalone mvoe 101 fred Secret c3-c5,d4", f"abalone mvoe 101 fred {M} c3-c5,d4"),
        ("abalone resign 101 fred Secret", f"abalone resign 101 fred {M}"),
        ("abalone queue 101 fred Secret c5,d5", f"abalone queue 101 fred {M} c5,d5"),
        ("abalone submit 101 fred Secret c5,d5", f"abalone submit 101 fred {M} c5,d5"),
        ("abalone confirm 101 fred Secret", f"abalone confirm 101 fred {M}"),
        ("abalone chat 101 fred Secret", f"abalone chat 101 fred {M}"),
        ("abalone subscribe 101 fred Secret", f"abalone subscribe 101 fred {M}"),
        ("abalone subscribe fred Secret all", f"abalone subscribe fred {M} all"),
        ("abalone unsubscribe 101 fred Secret", f"abalone unsubscribe 101 fred {M}"),
        ("abalone unsubscribe fred Secret all", f"abalone unsubscribe fred {M} all"),
        ("abalone notify fred Secret 101", f"abalone notify fred {M} 101"),
        ("abalone limit fred Secret 5", f"abalone limit fred {M} 5"),
        ("abalone accept fred Secret", f"abalone accept fred {M}"),
        ("abalone reject fred Secret", f"abalone reject fred {M}"),
        ("abalone seek fred Secret 2", f"abalone seek fred {M} 2"),
        # commands without passwords stay as they are
        ("abalone show 101", "abalone show 101"),
        ("abalone challenge fred wilma", "abalone challenge fred wilma"),
        ("help signup", "help signup"),
        ("just a comment about the game", "just a comment about the game"),
    ],
)
def test_every_password_position_is_masked(line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


@pytest.mark.parametrize(
    "line, masked",
    [
        # the brief's example: the move is bad, the password is still hidden
        ("abalone move 101 fred secret zz9", f"abalone move 101 fred {M} zz9"),
        ("abalone move 101 fred secret", f"abalone move 101 fred {M}"),
        # the board number is missing
        ("abalone move fred secret c3-c5,d4", f"abalone move fred {M} c3-c5,d4"),
        # the userid is missing: the word before the move is the password
        ("abalone move 101 secret c3-c5,d4", f"abalone move 101 {M} c3-c5,d4"),
        ("abalone move 101 secret c3 - c5 , d4", f"abalone move 101 {M} c3 - c5 , d4"),
        ("abalone move 101 secret resign", f"abalone move 101 {M} resign"),
        # a misspelt game word or command, a missing game word
        ("ablone move 101 fred secret c5,d5", f"ablone move 101 fred {M} c5,d5"),
        ("abalone moev 101 fred secret c5,d5", f"abalone moev 101 fred {M} c5,d5"),
        ("move 101 fred secret c5,d5", f"move 101 fred {M} c5,d5"),
        ("sigunp fred secret", f"sigunp fred {M}"),
        # too many words
        ("signoff fred secret now", f"signoff fred {M} now"),
        # any case, any spacing, prefixes, quote marks and a Subject: label
        ("ABALONE MOVE 101 Fred SeCret c5,d5", f"ABALONE MOVE 101 Fred {M} c5,d5"),
        ("abalone   move\t101  fred   secret  c5,d5", f"abalone   move\t101  fred   {M}  c5,d5"),
        ("Re: Fwd: abalone move 101 fred secret c5,d5", f"Re: Fwd: abalone move 101 fred {M} c5,d5"),
        ("> > abalone resign 101 fred secret", f"> > abalone resign 101 fred {M}"),
        ("Subject: signup fred secret", f"Subject: signup fred {M}"),
        ("  change password fred a b", f"  change password fred {M} {M}"),
        # a board number that is not one: the password still stands after it
        ("abalone move board#99999999999 fred secret c3-c5,d4",
         f"abalone move board#99999999999 fred {M} c3-c5,d4"),
        ("mvoe -1 fred secret c3-c5", f"mvoe -1 fred {M} c3-c5"),
        ("abalone move -1 fred secret undo", f"abalone move -1 fred {M} undo"),
        # an address the server cannot use: the password is hidden all the same
        ("change address fred secret <>", f"change address fred {M} <>"),
        ("signup fred secret Fred <fred@example.org>", f"signup fred {M} Fred <fred@example.org>"),
        ("change address fred secret undisclosed-recipients:;",
         f"change address fred {M} undisclosed-recipients:;"),
    ],
)
def test_passwords_are_masked_in_lines_that_do_not_parse(line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


def test_every_line_of_a_multiple_body_is_masked_and_line_ends_kept() -> None:
    text = (
        "multiple\r\n"
        "signup fred pw1\r\n"
        "abalone move 101 fred pw2 c3-c5,d4\n"
        "change password fred pw3 pw4\n"
        "abalone move 102 fred pw5 nonsense words\n"
        "just text\n"
    )
    masked = mask_passwords(text)
    for secret in ("pw1", "pw2", "pw3", "pw4", "pw5"):
        assert secret not in masked
    assert masked.count("\r\n") == 2
    assert masked.endswith("just text\n")
    assert masked.splitlines()[2] == f"abalone move 101 fred {M} c3-c5,d4"


def test_quote_original_masks_and_quotes() -> None:
    quoted = quote_original(
        "Re: abalone move 101 fred Secret zz9",
        "My comment\n\nmultiple-like line: signup wilma Pw\n-- \nFred\n",
    )
    assert quoted.splitlines() == [
        f"> Subject: Re: abalone move 101 fred {M} zz9",
        ">",
        "> My comment",
        ">",
        "> multiple-like line: signup wilma Pw",
        "> --",
        "> Fred",
    ]
    assert "Secret" not in quoted


def test_a_line_no_charset_made_readable_is_not_quoted() -> None:
    """Undecoded encoded words, quoted-printable escapes, replacement characters and
    blanks read in the wrong charset: the masking cannot find the words of such a
    line for certain, so it is left out of the quote; readable lines stay."""
    quoted = quote_original(
        "=?x-bogus?Q?RE:_re:_change_address_wilma_Pw10zQx9379_new@example.org",
        "Grüße aus Köln, schöne Partie!\n"
        "11111=E2=80=8Bfred=E2=80=8BPw0zQx0000\n"
        "abalone move \ufffd fred Pw4zQx1757 accept\n"
        "vacation\u0411\u2500\u2580barney\u0411\u2500\u2580Pw11zQx7325\n"
        "\u0412\u00a0\u041c\u043e\u0441\u043a\u0432\u0435 fine\n",
    )
    assert quoted.splitlines() == [
        "> Subject: [text the server cannot read, not quoted]",
        ">",
        "> Grüße aus Köln, schöne Partie!",
        "> [text the server cannot read, not quoted]",
        "> [text the server cannot read, not quoted]",
        "> [text the server cannot read, not quoted]",
        "> \u0412\u00a0\u041c\u043e\u0441\u043a\u0432\u0435 fine",
    ]
    assert "zQx" not in quoted


def test_quote_original_of_a_multiple_mail() -> None:
    quoted = quote_original("multiple", "signup fred S1\nabalone move 101 fred S2 c5,d5\n")
    assert "S1" not in quoted and "S2" not in quoted
    assert all(line.startswith(">") for line in quoted.splitlines())


def test_quote_original_cuts_long_bodies() -> None:
    quoted = quote_original("help", "\n".join(f"line {i}" for i in range(500)), max_lines=10)
    lines = quoted.splitlines()
    assert lines[-1] == "> [... 490 more lines not quoted]"
    assert len(lines) == 1 + 1 + 10 + 1


def test_quote_original_without_body() -> None:
    assert quote_original("signup fred pw", "") == f"> Subject: signup fred {M}"


# ------------------------------------------------ exact in both directions (§2.6)
@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ("change pasword fred Old1 New2", f"change pasword fred {M} {M}"),
        ("chnage password fred Old1 New2", f"chnage password fred {M} {M}"),
        ("pasword set fred Code1 New2", f"pasword set fred {M} {M}"),
        ("change adress fred Pw1 x@example.org", f"change adress fred {M} x@example.org"),
        ("singup fred Pw1", f"singup fred {M}"),
        ("vaction fred Pw1 on", f"vaction fred {M} on"),
        ("vacation fred Pw1 of", f"vacation fred {M} of"),
        ("abalnoe move 101 fred Pw1 c3-c5,d4", f"abalnoe move 101 fred {M} c3-c5,d4"),
        ("move fred Pw1 c3-c5,d4", f"move fred {M} c3-c5,d4"),
        ("confirm address k3x9q7mf2a", f"confirm address {M}"),
        ("format fred Pw1 pictures", f"format fred {M} pictures"),
        ("limit fred Pw1 lots", f"limit fred {M} lots"),
        ("accept 101 fred Pw1", f"accept 101 fred {M}"),
    ],
)
def test_misspelt_commands_are_masked(line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


@pytest.mark.parametrize(
    "line",
    [
        "Abalone Board 101 fred **",
        "Re: Abalone Board 101 wilma **",
        "Abalone Board 101 Error",
        "    abalone move 101 fred <password> <move>",
        "    abalone queue 101 wilma <password> <move>",
        "move 1.  Instead of a move you may reply with resign, propose (offer a",
        "Board 101 is great fun",
        "resign 101 if you want to",
        "signup for the tournament now",
        "vacation in June was great",
        "Messages from fred are nice",
        "deleted fred yesterday",
        "move your marbles to the centre",
        "        limit how many games you play",
    ],
)
def test_ordinary_words_are_never_masked(line: str) -> None:
    assert mask_passwords(line) == line


def test_no_line_of_the_servers_help_is_masked() -> None:
    from abalone_pbm.protocol import COMMANDS
    from abalone_pbm.render import help_mail

    topics = ["", "rules", "notation", "reply", "votes", "marks", "limits", *COMMANDS]
    texts = [help_mail([t] if t else [])[1] for t in topics] + [help_mail([], game=True)[1]]
    for text in texts:
        assert mask_passwords(text) == text


def test_a_command_cut_over_lines_is_masked_across_them() -> None:
    assert mask_passwords("abalone move\n101 fred Pw1 c3-c5,d4\n") == (
        f"abalone move\n101 fred {M} c3-c5,d4\n"
    )
    assert mask_passwords("change password fred\nOld1 New2") == f"change password fred\n{M} {M}"
    quoted = quote_original("abalone move", "101 fred Pw1 c3-c5,d4")
    assert "Pw1" not in quoted and f"101 fred {M} c3-c5,d4" in quoted


# --------------------------------------- a word after a userid, invisible blanks (§2.6)
@pytest.mark.parametrize(
    ("line", "masked"),
    [
        # commands without a password, written with one
        ("all pebbles Pw1", f"all pebbles {M}"),
        ("chat dino Pw1", f"chat dino {M}"),
        ("ratings fred Pw1", f"ratings fred {M}"),
        ("abalone show 101 fred Pw1", f"abalone show 101 fred {M}"),
        ("help dino Pw1", f"help dino {M}"),
        ("abalone wilma Pw1", f"abalone wilma {M}"),
        ("Re: list betty Pw1", f"Re: list betty {M}"),
        # blanks a mail program or a charset made of other characters
        ("signup\u200bfred\u200bPw1", f"signup\u200bfred\u200b{M}"),
        ("signup\ufefffred\ufeffPw1 fred@example.org", f"signup\ufefffred\ufeff{M} fred@example.org"),
        ("signup\u3000fred\u3000Pw1", f"signup\u3000fred\u3000{M}"),
        ("signup?fred?Pw1", f"signup?fred?{M}"),
        ("password\u00e2\x80\x83set\u00e2\x80\x83fred\u00e2\x80\x83123\u00e2\x80\x83Pw1",
         f"password\u00e2\x80\x83set\u00e2\x80\x83fred\u00e2\x80\x83{M}\u00e2\x80\x83{M}"),
        # an ideographic space in UTF-8 read as KOI8-R, a no-break space read as CP1251
        ("passwordЦ──setЦ──fredЦ──123Ц──Pw1",
         f"passwordЦ──setЦ──fredЦ──{M}"
         f"Ц──{M}"),
        ("passwordЦ──setЦ──fredЦ──9999≥9Ц──Pw1",
         f"passwordЦ──setЦ──fredЦ──{M}"
         f"Ц──{M}"),
        ("signupВ fredВ Pw1", f"signupВ fredВ {M}"),
        ("=?us-ascii?Q?abalone_move_101_fred_Pw1_c3c5", f"=?us-ascii?Q?abalone_move_101_fred_{M}_c3c5"),
        ("<p>change password dino Pw1 Pw2</p>", f"<p>change password dino {M} {M}</p>"),
        ("=E9=0broadcast fred Pw1", f"=E9=0broadcast fred {M}"),
        ("=ZZ\ufffd\x0cwd: signoff fred Pw1", f"=ZZ\ufffd\x0cwd: signoff fred {M}"),
        ("=?utf-7?Q?message+IAs-barney+IAs-Pw1+IAs-dino",
         f"=?utf-7?Q?message+IAs-barney+IAs-{M}+IAs-dino"),
        ("change address barney Pw1 Barney", f"change address barney {M} Barney"),
        ("ll barney Pw1", f"ll barney {M}"),
        ("password\u200b\u3d73\u6500\u7400\u0b00\u200bPw1", f"password\u200b\u3d73\u6500\u7400\u0b00\u200b{M}"),
        ("Subject: mvoe\n \u00d9\u00a1\u00d9\u00a0\u00d9\u00a1\n barney\n Pw1 c3-c5",
         f"Subject: mvoe\n \u00d9\u00a1\u00d9\u00a0\u00d9\u00a1\n barney\n {M} c3-c5"),
        ("abalone\n move\n 102\n dino Pw1 c3-c5,d4", f"abalone\n move\n 102\n dino {M} c3-c5,d4"),
        # a command written twice on a line, run together
        ("vacation fred Pw1 maybevacation fred Pw1 maybe",
         f"vacation fred {M} maybevacation fred {M} maybe"),
        ("signup wilma Pw1signup wilma Pw1signup wilma Pw1",
         f"signup wilma {M} wilma {M} wilma {M}"),
        ("mvoe 102 wilma Pw1 c3-c5Fwd: mvoe 102 wilma Pw1 c3-c5",
         f"mvoe 102 wilma {M} c3-c5Fwd: mvoe 102 wilma {M} c3-c5"),
        ("change password barney Pw1 Pw2Fwd: change password barney Pw1 Pw2",
         f"change password barney {M} {M} change password barney {M} {M}"),
        ("vacation barney Pw1 maybe Bcc: x@y", f"vacation barney {M} maybe Bcc: x@y"),
    ],
)
def test_a_word_after_a_userid_in_a_command_line_is_masked(line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


@pytest.mark.parametrize(
    "line",
    [
        "fred played well, nice game",
        "all fred wants is a draw",
        "Board 101 is great fun",
        "show fred some respect",
        "help me please",
        "move it now",
        "Games are fun with fred and wilma",
        "history fred",
        "abalone games fred all",
        "abalone games fred active",
        "help rules notation",
        "that starts at c5 and points at d5 moves one cell that way.",
        "I think fred played a great game today",
        "delete fred from the list",
        "    digest <userid> <password> on|off \u2014 a digest",
    ],
)
def test_prose_after_a_command_word_is_never_masked(line: str) -> None:
    assert mask_passwords(line) == line


@pytest.mark.parametrize("line", ["Held og lykke", "Hell og lykke!", "gmaes fred wants"])
def test_prose_after_a_slip_of_a_command_without_a_password_is_not_masked(line: str) -> None:
    assert mask_passwords(line) == line


@pytest.mark.parametrize("line, masked", [
    ("hlep fred Secret1", f"hlep fred {M}"),
    ("Help og lykke", f"Help og {M}"),  # (the command itself: rule 3 as it stands)
    ("signpu fred lykke", f"signpu fred {M}"),  # (a slip of a command with a password)
])
def test_a_slip_keeps_rule_3_for_what_may_be_a_password(line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


def test_a_further_userid_is_masked_only_when_it_names_nobody() -> None:
    users = {"fred", "wilma"}
    # Without the users known, "games fred wilma" and "games fred secret" look alike.
    assert mask_passwords("abalone games fred wilma") == "abalone games fred wilma"
    assert mask_passwords("abalone games fred wilma", users.__contains__) == (
        "abalone games fred wilma")
    assert mask_passwords("games fred Secret1", users.__contains__) == f"games fred {M}"
    assert mask_passwords("challenge fred Secret1", users.__contains__) == f"challenge fred {M}"
    assert find_passwords("history dino Secret1\nok", users.__contains__) == {"Secret1"}
    assert find_passwords("abalone history dino Secret1", users.__contains__) == {"Secret1"}
    # pbmserv's way, the password between the userids: the known user after it is the
    # command going on, not prose; a name that is none is still named back.
    assert mask_passwords("abalone challenge fred Choc0late7 wilma", users.__contains__) == (
        f"abalone challenge fred {M} wilma")
    assert mask_passwords("abalone challenge fred ghost wilma", users.__contains__) == (
        "abalone challenge fred ghost wilma")
    assert mask_passwords("abalone challenge fred wilma", users.__contains__) == (
        "abalone challenge fred wilma")


def test_a_password_found_is_hidden_everywhere_in_the_text() -> None:
    text = "signup fred Pw1zzq\nmy password Pw1zzq is secret; Pw1zzqsignup too"
    assert "Pw1zzq" not in mask_passwords(text)
    assert mask_passwords(text).splitlines()[1] == f"my password {M} is secret; {M}signup too"
    assert hide_passwords(f"Unknown command \"x Pw1zzq\"", {"Pw1zzq"}) == f'Unknown command "x {M}"'
    # a short password is hidden as a word only, not inside other words nor addresses,
    # and only in text for its writer (for others, "nice ********" would tell it)
    assert hide_passwords("pw and pwned", {"pw"}, short_too=True) == f"{M} and pwned"
    assert hide_passwords("at fred@new.example", {"new"}, short_too=True) == "at fred@new.example"
    assert hide_passwords("nice game", {"game"}) == "nice game"


def test_a_control_character_inside_a_userid_does_not_move_the_password() -> None:
    # Read both ways (a blank, or nothing): the password is hidden either way.
    masked = mask_passwords("mvoe board#9 wilm\x15a Pw1 c3-c5")
    assert "Pw1" not in masked and masked.startswith("mvoe board#9 wilm") and "c3-c5" in masked


def test_a_folded_subject_quoted_in_a_body_is_masked() -> None:
    text = "To: x\nSubject: Re:\n signup\n \n wilma  Pw1\nMessage-ID: <f>"
    assert "Pw1" not in mask_passwords(text)
    folded = "Subject: challenge\n barney\n Pw1\nMessage-ID: "
    assert find_passwords(folded, {"barney"}.__contains__) == {"Pw1"}
    # a command and a paragraph after a blank line are two things
    assert mask_passwords("signup fred\n\nhello there") == "signup fred\n\nhello there"


def test_a_command_cut_at_soft_line_breaks_is_masked_across_them() -> None:
    # An encoded word cut by a bare CR: the Subject ends at "=", the body goes on.
    board = "1" * 60
    subject = f"=?utf-8?Q?abalone_move_{board}="
    body = f"{board}=\n{board}_betty_Pw6zQx7622_propose\n?="
    assert "Pw6zQx7622" in find_passwords(f"{subject}\n{body}")
    quoted = quote_original(subject, body)
    assert "Pw6zQx7622" not in quoted and "propose" in quoted
    # the password itself cut at the break: found whole, and its pieces hidden
    assert "Pw2zQx5865" in find_passwords("password set fred Pw2z=\nQx5865")
    assert "Qx5865" not in mask_passwords("password set fred Pw2z=\nQx5865 ok")
    # a line of prose that ends in "=" changes nothing; a command line that does is
    # masked as it stands
    assert mask_passwords("x =\ny is all fred wants") == "x =\ny is all fred wants"
    assert "Pw1zq" not in mask_passwords("signup fred Pw1zq =\nI hope this works out")


def test_punctuation_alone_between_the_words_of_a_command_is_no_word() -> None:
    line = "password  set  pebbles  999999 = Pw11zQx7325"
    assert {"999999", "Pw11zQx7325"} <= find_passwords(line)
    assert "Pw11zQx7325" not in mask_passwords(f"Subject: {line}")
    assert "Pw1zz" not in mask_passwords("signup -- fred : Pw1zz")
    # ... and prose with dashes stays as written
    assert mask_passwords("all fred - wants is a draw") == "all fred - wants is a draw"


def test_an_unknown_userid_is_shown_and_a_password_shaped_word_is_not() -> None:
    users = {"fred", "wilma"}.__contains__
    # A word written as names are, where the command takes userids: the answer about
    # it ("there is no user ghost") names it.
    for line in ("abalone games fred ghost", "challenge fred wilma2", "history fred Ghost",
                 "abalone challenge fred barney.rubble"):
        assert mask_passwords(line, users) == line
        assert find_passwords(line, users) == set()
    # Written as passwords are, it is read as one.
    assert mask_passwords("abalone games fred Pw1zQx7919", users) == f"abalone games fred {M}"
    assert mask_passwords("challenge fred SECRET7", users) == f"challenge fred {M}"


@pytest.mark.parametrize(
    "line, masked",
    [
        # misspelt, or a word missing: every password-shaped word after the command
        ("signoff FredPw77", f"signoff {M}"),
        ("delete Pw1zQx", f"delete {M}"),
        ("abalone showas FredPw77", f"abalone showas {M}"),
        ("signup fr ed Secret99", f"signup fr {M} {M}"),
        ("change passwd fred OldPw1 NewPw2", f"change passwd {M} {M} {M}"),
        ("singup fred Secret99 fred@example.org", f"singup fred {M} fred@example.org"),
        # the word in the password's place is what comes after it: the one before is
        ("digest Zq1Pw on", f"digest {M} on"),
        ("add Zq1Pw fred@example.org", f"add {M} fred@example.org"),
        ("abalone seek Zq1Pw 3", f"abalone seek {M} 3"),
        ("abalone notify Zq1Pw 101", f"abalone notify {M} 101"),
        # a second command on the line, with its own password
        ("signup fred pw1 signoff fred pw2", f"signup fred {M} signoff fred {M}"),
        ("abalone move 101 fred pw1 c3-c5 abalone resign 101 fred pw2",
         f"abalone move 101 fred {M} c3-c5 abalone resign 101 fred {M}"),
        # ... and what is not a password stays
        ("SIGNUP Fred.Flint2 PassWord", f"SIGNUP Fred.Flint2 {M}"),
        ("abalone tournament join spring fred Pw1 once", f"abalone tournament join spring fred {M} once"),
        ("Change of plans: meet at 5PM on A1", "Change of plans: meet at 5PM on A1"),
        ("see you at ten, I will use MyPw1 then", "see you at ten, I will use MyPw1 then"),
        ("abalone move 101 fred Pw1 A1B2C3-D4#9", f"abalone move 101 fred {M} A1B2C3-D4#9"),
    ],
)
def test_misspelt_incomplete_and_doubled_commands_hide_their_passwords(
        line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


def test_a_userid_the_server_does_not_know_is_no_cover_for_a_password() -> None:
    users = {"fred", "wilma"}.__contains__
    # "message Pw wilma": the userid left out, the password stands where it would be
    assert find_passwords("message Zq40Pw1x wilma", users) == {"Zq40Pw1x"}
    assert find_passwords("change password Zq33Pw1x Zq33Pw2x", users) == {
        "Zq33Pw1x", "Zq33Pw2x"}


def test_masking_is_linear_and_small_whatever_the_mail_holds() -> None:
    import time

    flood = "\n".join(f"signup fred pw{n} =" for n in range(12_000))  # ~250 KB
    start = time.process_time()
    masked = mask_passwords(flood)
    spent = time.process_time() - start
    assert "pw11999" not in masked and "pw0 " not in masked
    assert spent < 4.0, spent  # was 8 s and more: one scan per password found
    thread = "\n".join(f"> > {line}" for line in (
        "Reply to this mail with your move on the first line, for example",
        "    abalone move 101 fred <password> <move>",
        "How to move", "Players, in the order they move:") * 2000)
    start = time.process_time()
    assert mask_passwords(thread) == thread
    assert time.process_time() - start < 0.5


def test_a_word_of_a_quarter_million_digits_is_read_in_linear_time_and_kept():
    """A hostile mail's one long word (an HTML numeric reference of 250,000 digits, a
    line of one letter): shaped or not is told in one scan (a pattern with ".*" on both
    sides of a choice took minutes on it); such a word is no password."""
    from abalone_pbm.protocol.masking import password_shaped

    assert not password_shaped("9" * 250_000)
    assert password_shaped("a" * 100_000 + "B")
    line = "signoff " + "9" * 250_000
    assert mask_passwords(line) == line


def test_a_placeholder_as_html_writes_it_is_no_password():
    """The reply instructions of a board mail's HTML part, quoted back in a mail
    program's HTML reply: "&lt;password&gt;" is a placeholder, as "<password>" is."""
    line = "abalone move 101 wilma &lt;password&gt; &lt;move&gt;"
    assert mask_passwords(line) == line
    assert mask_passwords("abalone move 101 wilma Secret9 c3-c5,d4") == (
        "abalone move 101 wilma ******** c3-c5,d4")
