"""Replies as mail programs write them (DESIGN 2.8): a table of client shapes, each a
reply to a real board mail (rendered by the server's own templates) with the player's
move and comment, and what must be played and shown.

The shapes follow real client mail: the public fixture corpora of
github/email_reply_parser, mailgun/talon, crisp-oss/email-reply-parser,
discourse/email_reply_trimmer and discourse's email fixtures, willdurand/EmailReplyParser,
and mail of Gmail (web, Android, iOS), Outlook (desktop, web/365, iOS, Android), Apple
Mail and iPhone, Thunderbird, K-9, FairEmail, mutt, Evolution, Yahoo, AOL, Hotmail,
Zimbra and Zoho, in the languages named; written anew around our board mail.
"""

from __future__ import annotations


import pytest

from abalone_pbm import render
from abalone_pbm.protocol.comments import extract_comment
from abalone_pbm.protocol.reply import ReplyAction, choose_reply_text, parse_reply_body, read_reply
from abalone_pbm.render.views import Comment, GameView
from abalone_pbm.rules import Board

ADDRESS = "abalone+101.k3x9q7mf2a@pbm.example.org"


def _board_mail() -> str:
    """A real board mail for fred, with wilma's earlier comment naming a move."""
    board = Board()
    board.push_text("a1-c3,d4")
    board.push_text("g5,f5")
    game = GameView(101, ("fred", "wilma"), moves=((1, 1, "a1-c3,d4"), (2, 2, "g5,f5")),
                    comment=Comment("wilma", "Your move, Fred!\nc3-c5,d4 would be brave"))
    return render.board_mail(game, board, recipient="fred")[1]


BOARD = _board_mail()
QUOTED = "\n".join(("> " + line).rstrip() for line in BOARD.splitlines())
QUOTED_BARE = "\n".join(">" + line for line in BOARD.splitlines())


def _case(name: str, body: str, action: ReplyAction) -> object:
    return pytest.param(body.replace("{BOARD}", BOARD).replace("{QUOTED}", QUOTED)
                        .replace("{QUOTED_BARE}", QUOTED_BARE).replace("{ADDR}", ADDRESS),
                        action, id=name)


def move(text: str, comment: str = "", ply: int | None = None) -> ReplyAction:
    return ReplyAction("move", text, ply, comment)


CASES = [
    # ---------------------------------------------------------------- Gmail
    _case("gmail-web-en", "c3-c5,d4\nYour turn!\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <\n{ADDR}> wrote:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Your turn!")),
    _case("gmail-web-en-one-line", "c3-c5,d4\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("gmail-de-name-first-wrapped", "c3-c5,d4\nDu bist dran.\n\nAbalone <{ADDR}> schrieb am Fr., 27.\nNov. 2026, 12:19:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Du bist dran.")),
    _case("gmail-de-am", "c3-c5,d4\n\nAm Fr., 27. Nov. 2026 um 12:19 Uhr schrieb Abalone <\n{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("gmail-fr", "c3-c5,d4\nÀ toi !\n\nLe ven. 27 nov. 2026 à 12:19, Abalone <{ADDR}> a\nécrit :\n\n{QUOTED}\n",
          move("c3-c5,d4", "À toi !")),
    _case("gmail-es", "c3-c5,d4\n¡Te toca!\n\nEl vie, 27 nov 2026 a las 12:19, Abalone (<{ADDR}>)\nescribió:\n\n{QUOTED}\n",
          move("c3-c5,d4", "¡Te toca!")),
    _case("gmail-it", "c3-c5,d4\nTocca a te\n\nIl giorno ven 27 nov 2026 alle ore 12:19 Abalone <\n{ADDR}> ha scritto:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Tocca a te")),
    _case("gmail-pt", "c3-c5,d4\nSua vez\n\nEm sex., 27 de nov. de 2026 às 12:19, Abalone <\n{ADDR}> escreveu:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Sua vez")),
    _case("gmail-nl", "c3-c5,d4\nJij bent\n\nOp vr 27 nov 2026 om 12:19 schreef Abalone <{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Jij bent")),
    _case("gmail-ru-date-first", "c3-c5,d4\nТвой ход\n\nпт, 27 нояб. 2026 г. в 12:19, Abalone <{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Твой ход")),
    _case("gmail-sv", "c3-c5,d4\nDin tur\n\nDen fre 27 nov. 2026 kl 12:19 skrev Abalone <{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Din tur")),
    _case("gmail-no-date-first", "c3-c5,d4\nDin tur\n\nfre. 27. nov. 2026 kl. 12:19 skrev Abalone <\n{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Din tur")),
    _case("gmail-ja", "c3-c5,d4\nどうぞ\n\n2026年11月27日(金) 12:19 Abalone <{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4", "どうぞ")),
    _case("gmail-zh", "c3-c5,d4\n轮到你了\n\nAbalone <{ADDR}> 于2026年11月27日周五 12:19写道：\n\n{QUOTED}\n",
          move("c3-c5,d4", "轮到你了")),
    _case("gmail-pl", "c3-c5,d4\nTwój ruch\n\npt., 27 lis 2026 o 12:19 Abalone <{ADDR}> napisał(a):\n\n{QUOTED}\n",
          move("c3-c5,d4", "Twój ruch")),
    _case("gmail-tr", "c3-c5,d4\nSıra sende\n\nAbalone <{ADDR}>, 27 Kas 2026 Cum, 12:19 tarihinde şunu yazdı:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Sıra sende")),
    _case("gmail-android", "c3-c5,d4\n\nOn Fri, 27 Nov 2026, 12:19 Abalone, <{ADDR}> wrote:\n\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("gmail-ios-three-lines", "c3-c5,d4\nGood luck\n\nOn Fri, 27 Nov 2026 at 12:19, Abalone\n<{ADDR}>\nwrote:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Good luck")),
    _case("gmail-bottom-post", "On Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n\nc3-c5,d4\nthere you go\n",
          move("c3-c5,d4", "there you go")),
    # ---------------------------------------------------------------- Outlook
    _case("outlook-desktop-en", "c3-c5,d4\nYour move\n\n-----Original Message-----\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19 PM\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("outlook-365-underscores", "c3-c5,d4\n\nYour move\n\n________________________________\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: Fred <fred@example.org>\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("outlook-365-no-separator", "c3-c5,d4\nYour move\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: Fred <fred@example.org>\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("outlook-de", "c3-c5,d4\nDu bist dran\n\nVon: Abalone <{ADDR}>\nGesendet: Freitag, 27. November 2026 12:19\nAn: fred@example.org\nBetreff: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Du bist dran")),
    _case("outlook-nl", "c3-c5,d4\nJij bent\n\nVan: Abalone <{ADDR}>\nVerzonden: vrijdag 27 november 2026 12:19\nAan: fred@example.org\nOnderwerp: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Jij bent")),
    _case("outlook-es-mensaje-original", "c3-c5,d4\nTe toca\n\n-----Mensaje original-----\nDe: Abalone <{ADDR}>\nEnviado el: viernes, 27 de noviembre de 2026 12:19\nPara: fred@example.org\nAsunto: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Te toca")),
    _case("outlook-es-no-separator", "c3-c5,d4\nTe toca\n\nDe: Abalone <{ADDR}>\nEnviado: viernes, 27 de noviembre de 2026 12:19\nPara: fred@example.org\nAsunto: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Te toca")),
    _case("outlook-it", "c3-c5,d4\nTocca a te\n\nDa: Abalone <{ADDR}>\nInviato: venerdì 27 novembre 2026 12:19\nA: fred@example.org\nOggetto: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Tocca a te")),
    _case("outlook-sv", "c3-c5,d4\nDin tur\n\nFrån: Abalone <{ADDR}>\nSkickat: den 27 november 2026 12:19\nTill: fred@example.org\nÄmne: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Din tur")),
    _case("outlook-ru", "c3-c5,d4\nТвой ход\n\nОт: Abalone <{ADDR}>\nОтправлено: 27 ноября 2026 г. 12:19\nКому: fred@example.org\nТема: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Твой ход")),
    _case("outlook-fr-bold", "c3-c5,d4\nÀ toi\n\n*De :* Abalone <{ADDR}>\n*Envoyé :* vendredi 27 novembre 2026 12:19\n*À :* fred@example.org\n*Objet :* Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "À toi")),
    _case("outlook-web-quoted-header", "c3-c5,d4\n\n> From: Abalone <{ADDR}>\n> Sent: Friday, November 27, 2026 12:19\n> Subject: Abalone Board 101 fred\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("outlook-ios", "c3-c5,d4\nYour move\n\nGet Outlook for iOS<https://aka.ms/o0ukef>\n________________________________\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19:01 PM\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("outlook-ios-fr", "c3-c5,d4\nÀ toi\n\nEnvoyé à partir de Outlook pour iOS<https://aka.ms/o0ukef>\n________________________________\nDe : Abalone <{ADDR}>\nEnvoyé : vendredi, novembre 27, 2026 12:19 PM\nÀ : fred@example.org\nObjet : Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "À toi")),
    _case("outlook-android-de", "c3-c5,d4\nDu bist dran\n\nGesendet von Outlook für Android<https://aka.ms/AAb9ysg>\n________________________________\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19:01 PM\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Du bist dran")),
    _case("outlook-365-classification-banner", "[AMD Official Use Only - General]\n\nc3-c5,d4\nYour move\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("outlook-365-banner-above-and-below", "[Public]\n\nc3-c5,d4\n\nClassification: Internal\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("outlook-external-caution", "CAUTION: This email originated from outside of the organization. Do not click\nlinks or open attachments unless you recognize the sender.\n\nc3-c5,d4\nnice\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: fred@example.org\nSubject: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4", "nice")),
    _case("outlook-first-contact-tip", "You don't often get email from {ADDR}. Learn why this is important<https://aka.ms/LearnAboutSenderIdentification>\n\nresign\nWell played.\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19\nTo: fred@example.org\nSubject: Abalone Board 101 fred\n\n{BOARD}\n",
          ReplyAction("resign", comment="Well played.")),
    _case("external-tag", "[EXTERNAL]\nc3-c5,d4\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("outlook-unknown-language-copy", "c3-c5,d4\nkolejny ruch\n\nOd: Abalone <{ADDR}>\nWysłano: piątek, 27 listopada 2026 12:19\nDo: fred@example.org\nTemat: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "kolejny ruch")),
    _case("outlook-copy-without-any-header", "c3-c5,d4\ngg\n\n{BOARD}\n",
          move("c3-c5,d4", "gg")),
    _case("mail-for-windows-10", "c3-c5,d4\nYour move\n\nSent from Mail<https://go.microsoft.com/fwlink/?LinkId=550986> for Windows 10\n\nFrom: Abalone<mailto:{ADDR}>\nSent: Friday, 27 November 2026 12:19\nTo: fred@example.org<mailto:fred@example.org>\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    # ---------------------------------------------------------------- Apple
    _case("iphone", "c3-c5,d4\n\nSent from my iPhone\n\n> On 27 Nov 2026, at 12:19, Abalone <{ADDR}> wrote:\n>\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("iphone-signature-not-last", "c3-c5,d4\nGood luck\n\nSent from my iPhone\n\nOn 27 Nov 2026, at 12:19, Abalone <{ADDR}> wrote:\n\n{QUOTED}\n",
          move("c3-c5,d4", "Good luck")),
    _case("iphone-de", "c3-c5,d4\nViel Glück\n\nVon meinem iPhone gesendet\n\n> Am 27.11.2026 um 12:19 schrieb Abalone <{ADDR}>:\n>\n{QUOTED}\n",
          move("c3-c5,d4", "Viel Glück")),
    _case("ipad-no-unquoted", "c3-c5,d4\nDin tur\n\nSendt fra min iPad\n\nDen 27. nov. 2026 kl. 12:19 skrev Abalone <{ADDR}>:\n\n{BOARD}\n",
          move("c3-c5,d4", "Din tur")),
    _case("apple-mail-macos", "c3-c5,d4\n\n> On 27. Nov 2026, at 12:19, Abalone <{ADDR}> wrote:\n>\n{QUOTED}\n",
          move("c3-c5,d4")),
    # ---------------------------------------------------------------- desktop and Android clients
    _case("thunderbird", "c3-c5,d4\nYour turn\n\nOn 27.11.26 12:19, Abalone wrote:\n{QUOTED}\n",
          move("c3-c5,d4", "Your turn")),
    _case("thunderbird-bottom-post-sig", "On 27/11/2026 12:19, Abalone wrote:\n{QUOTED}\n\nc3-c5,d4\n\n-- \nFred Flintstone\nBedrock\n",
          move("c3-c5,d4")),
    _case("thunderbird-inline", "On 27/11/2026 12:19, Abalone wrote:\n> Summary of Abalone Board 101\n\nc3-c5,d4\n\n> wilma writes:\n> Your move, Fred!\n\nWe'll see about brave.\n",
          move("c3-c5,d4", "We'll see about brave.")),
    _case("k9-de", "c3-c5,d4\n\nDiese Nachricht wurde von meinem Android-Gerät mit K-9 Mail gesendet.\n\nAm 27. November 2026 12:19:01 MEZ schrieb Abalone <{ADDR}>:\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("k9-en", "c3-c5,d4\nyour go\n--\nSent from my Android device with K-9 Mail. Please excuse my brevity.\n\nAbalone <{ADDR}> wrote:\n{QUOTED}\n",
          move("c3-c5,d4", "your go")),
    _case("fairemail", "c3-c5,d4\n\n27 Nov 2026 12:19:01 Abalone <{ADDR}>:\n\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("mutt", "* Abalone <{ADDR}> [2026-11-27 12:19 +0100]:\n{QUOTED}\n\nc3-c5,d4\n\nCheers\n",
          move("c3-c5,d4", "Cheers")),
    _case("evolution", "c3-c5,d4\n\nOn Fri, 2026-11-27 at 12:19 +0100, Abalone wrote:\n{QUOTED}\n",
          move("c3-c5,d4")),
    _case("samsung-email", "c3-c5,d4\n\n\n\nSent from my Galaxy\n\n\n-------- Original message --------\nFrom: Abalone <{ADDR}>\nDate: 27/11/2026 12:19 (GMT+01:00)\nTo: fred@example.org\nSubject: Abalone Board 101 fred **\n\n{BOARD}\n",
          move("c3-c5,d4")),
    # ---------------------------------------------------------------- webmail
    _case("yahoo-desktop", "c3-c5,d4\nYour move\n\n\n    On Friday, November 27, 2026, 12:19:01 PM GMT+1, Abalone <{ADDR}> wrote:\n\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("yahoo-android", "c3-c5,d4\n\nSent from Yahoo Mail on Android\n \n  On Fri, Nov 27, 2026 at 12:19, Abalone<{ADDR}> wrote:   Summary of Abalone Board 101\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("yahoo-ios", "c3-c5,d4\ngg\n\nYahoo Mail: Search, organise, conquer\n\nOn Friday, November 27, 2026, 12:19 PM, Abalone <{ADDR}> wrote:\n\n{BOARD}\n",
          move("c3-c5,d4", "gg")),
    _case("aol", "c3-c5,d4\n\n\n-----Original Message-----\nFrom: Abalone <{ADDR}>\nTo: fred <fred@aol.com>\nSent: Fri, Nov 27, 2026 12:19 pm\nSubject: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("aol-app", "c3-c5,d4\n\nSent from the all new AOL app for iOS\n\nOn Friday, November 27, 2026, 12:19 PM, Abalone <{ADDR}> wrote:\n\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("hotmail", "c3-c5,d4\nNice one\n\n________________________________\nFrom: Abalone <{ADDR}>\nSent: 27 November 2026 12:19\nTo: fred@hotmail.com\nSubject: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4", "Nice one")),
    _case("zimbra", "c3-c5,d4\n\n----- Original Message -----\nFrom: \"Abalone\" <{ADDR}>\nTo: \"fred\" <fred@example.org>\nSent: Friday, 27 November, 2026 12:19:01\nSubject: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("zimbra-de", "c3-c5,d4\n\n----- Ursprüngliche Mail -----\nVon: \"Abalone\" <{ADDR}>\nAn: \"fred\" <fred@example.org>\nGesendet: Freitag, 27. November 2026 12:19:01\nBetreff: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4")),
    _case("zoho", "c3-c5,d4\nYour move\n\n\n---- On Fri, 27 Nov 2026 12:19:01 +0100 Abalone <{ADDR}> wrote ----\n\n{BOARD}\n",
          move("c3-c5,d4", "Your move")),
    _case("protonmail", "c3-c5,d4\n\nSent with Proton Mail secure email.\n\nOn Friday, November 27th, 2026 at 12:19, Abalone <{ADDR}> wrote:\n\n{QUOTED}\n",
          move("c3-c5,d4")),
    # ---------------------------------------------------------------- what players write
    _case("greeting-above", "Hi Fred,\n\nc3-c5,d4\n\nGood luck!\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n",
          move("c3-c5,d4", "Hi Fred,\n\nGood luck!")),
    _case("greeting-de-and-banner", "[EXTERN]\nHallo Wilma!\nc3-c5,d4\n\nVon: Abalone <{ADDR}>\nGesendet: Freitag, 27. November 2026 12:19\nAn: fred@example.org\nBetreff: Abalone Board 101 fred\n\n{BOARD}\n",
          move("c3-c5,d4", "Hallo Wilma!")),
    _case("move-number", "c3-c5,d4 #3\n\n{QUOTED}\n", move("c3-c5,d4", "", 3)),
    _case("move-with-blanks-and-dot", "  C3 - C5 , D4.\n\n{QUOTED}\n", move("c3-c5,d4")),
    _case("bold-move-from-html", "*c3-c5,d4*\n\n{QUOTED}\n", move("c3-c5,d4")),
    _case("no-break-and-zero-width", "c3\u200b-c5,\u00a0d4\n\u00a0\nwell\u00a0played\n\n{QUOTED}\n",
          move("c3-c5,d4", "well played")),
    _case("crlf-line-ends", "c3-c5,d4\r\nok\r\n\r\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\r\n{QUOTED}\r\n",
          move("c3-c5,d4", "ok")),
    _case("signature-block-after-comment", "c3-c5,d4\nHere we go.\n\n-- \nFred | +1 555 0100\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n",
          move("c3-c5,d4", "Here we go.")),
    _case("quote-without-blank", "undo\n{QUOTED_BARE}\n", ReplyAction("undo")),
    _case("accept-with-comment", "Accept!\nFair enough, a draw.\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n",
          ReplyAction("accept", comment="Fair enough, a draw.")),
]


@pytest.mark.parametrize("body, expected", CASES)
def test_each_client_shape_plays_the_move_and_shows_the_comment(
    body: str, expected: ReplyAction
) -> None:
    assert parse_reply_body(body) == expected


def test_the_table_is_large() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    "body, found",
    [
        pytest.param("Thanks for the game!\nc3-c5,d4\n\n{QUOTED}\n", "Thanks for the game!", id="prose-above"),
        pytest.param("c3-c5,d4 and good luck\n{QUOTED}\n", "c3-c5,d4 and good luck", id="move-with-words"),
        pytest.param("\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n", None, id="only-quote"),
        pytest.param("Sent from my iPhone\n\nFrom: Abalone <{ADDR}>\nSent: Friday\nTo: fred@example.org\nSubject: Abalone Board 101 fred\n\n{BOARD}\n", None, id="only-outlook-copy"),
        pytest.param("{BOARD}\n", None, id="only-unquoted-board"),
        pytest.param("[EXTERNAL]\n\n-- \nc3-c5,d4\n", None, id="banner-then-signature"),
    ],
)
def test_no_move_is_played_that_the_player_did_not_write(body: str, found: str | None) -> None:
    body = body.replace("{BOARD}", BOARD).replace("{QUOTED}", QUOTED).replace("{ADDR}", ADDRESS)
    reading = read_reply(body)
    assert reading.action is None
    assert reading.found == found


def test_no_line_of_the_board_mail_reaches_a_comment() -> None:
    """Whatever follows a move in an unquoted copy of a board mail is cut before any of
    its lines: the comment of wilma, the example move, the move list."""
    for line in BOARD.splitlines():
        if line.strip():
            assert parse_reply_body(f"c3-c5,d4\n{line}\n{BOARD}\n") in (
                move("c3-c5,d4"), move("c3-c5,d4", line.rstrip())), line
    assert extract_comment(f"good game\n\n{BOARD}") == "good game"


def test_html_part_is_read_when_only_it_holds_the_new_text() -> None:
    plain = "On Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n".replace(
        "{QUOTED}", QUOTED).replace("{ADDR}", ADDRESS)
    html = "c3-c5,d4\nyour go\n\n" + QUOTED + "\n"
    assert choose_reply_text(plain, html) == html
    assert choose_reply_text("c5,d5\n", html) == "c5,d5\n"
    assert choose_reply_text(None, html) == html
    assert choose_reply_text(plain, None) == plain


#: What a 256 KB reply may be made of after its move (its cost is measured by
#: benchmarks/mail_cost.py, which reads the same shapes; speed is not a test's matter).
HOSTILE_FILLERS = {
    "quote": QUOTED + "\n",
    "lines": "a line of prose: with words, 12:19 and <x@y>\n",
    "colons": "On 2026 a <b@c> wrote:\n",
    "long line": "x" * 1000,
    "dashes": "-- " * 50 + "\n",
    "headers": "From: a@b\nTo: c@d\n",
    "banner": "[" + "internal " * 30 + "]\n",
    "client lines": "Sent from my iPhone\n",
    "quote marks": ">\n",
    "indented quote marks": " >\n",
    "blank lines": "\n",
    "quotes between words": "x\n>\n\n",
    "no-break spaces": "\u00a0\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FILLERS))
def test_a_reply_at_the_size_limit_is_read_whatever_follows_the_move(name: str) -> None:
    """A 256 KB reply made of one shape after its move: the move is played, and the
    comment is bounded (never the whole mail) and holds no quoted line."""
    filler = HOSTILE_FILLERS[name]
    body = "c3-c5,d4\ngg\n\n" + filler * (256 * 1024 // len(filler))
    action = parse_reply_body(body)
    assert action is not None and action.action == "move"
    assert action.move_text == "c3-c5,d4"
    assert action.comment.startswith("gg")
    assert len(action.comment) <= 33 * 1024
    assert not any(line.lstrip().startswith(">") for line in action.comment.splitlines())
