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
from abalone_pbm.protocol.reply import (ReplyAction, choose_reply_text, parse_reply_body, read_reply,
                                         subject_action)
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


# ------------------------------------------------------------------ sweeps of one rule
# Each rule of the reader, tried on its every form in the languages and clients it
# names: one form failing is the rule failing (see tests/mail/test_client_mails.py for
# the same shapes as whole mails through the worker).

#: Gmail's, Apple's, Thunderbird's and webmailers' attribution lines, as they write them.
ATTRIBUTIONS = {
    "en": "On Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:",
    "de": "Am Fr., 27. Nov. 2026 um 12:19 Uhr schrieb Abalone <{ADDR}>:",
    "fr": "Le ven. 27 nov. 2026 à 12:19, Abalone <{ADDR}> a écrit :",
    "es": "El vie, 27 nov 2026 a las 12:19, Abalone (<{ADDR}>) escribió:",
    "it": "Il giorno ven 27 nov 2026 alle ore 12:19 Abalone <{ADDR}> ha scritto:",
    "pt": "Em sex., 27 de nov. de 2026 às 12:19, Abalone <{ADDR}> escreveu:",
    "nl": "Op vr 27 nov 2026 om 12:19 schreef Abalone <{ADDR}>:",
    "sv": "Den fre 27 nov. 2026 kl 12:19 skrev Abalone <{ADDR}>:",
    "da": "Den fre. 27. nov. 2026 kl. 12.19 skrev Abalone <{ADDR}>:",
    "no": "fre. 27. nov. 2026 kl. 12:19 skrev Abalone <{ADDR}>:",
    "fi": "pe 27.11.2026 klo 12.19 Abalone (<{ADDR}>) kirjoitti:",
    "pl": "pt., 27 lis 2026 o 12:19 Abalone <{ADDR}> napisał(a):",
    "cs": "pá 27. 11. 2026 v 12:19 odesílatel Abalone <{ADDR}> napsal:",
    "sk": "pi 27. 11. 2026 o 12:19 Abalone <{ADDR}> napísal(a):",
    "ru": "пт, 27 нояб. 2026 г. в 12:19, Abalone <{ADDR}>:",
    "uk": "пт, 27 лист. 2026 р. о 12:19 Abalone <{ADDR}> пише:",
    "tr": "Abalone <{ADDR}>, 27 Kas 2026 Cum, 12:19 tarihinde şunu yazdı:",
    "hu": "Abalone <{ADDR}> ezt írta (időpont: 2026. nov. 27., P, 12:19):",
    "ro": "Abalone <{ADDR}> a scris (vin., 27 nov. 2026, 12:19):",
    "el": "Στις Παρ 27 Νοε 2026 στις 12:19 μ.μ., ο/η Abalone <{ADDR}> έγραψε:",
    "ja": "2026年11月27日(金) 12:19 Abalone <{ADDR}>:",
    "zh": "Abalone <{ADDR}> 于2026年11月27日周五 12:19写道：",
    "zh-tw": "Abalone <{ADDR}> 於 2026年11月27日 週五 下午12:19寫道：",
    "ko": "2026년 11월 27일 (금) 오후 12:19, Abalone <{ADDR}>님이 작성:",
    "ar": "في الجمعة، 27 نوفمبر 2026 في 12:19 م، كتب Abalone <{ADDR}>:",
    "he": "\u202bבתאריך יום ו׳, 27 בנוב׳ 2026 ב-12:19 מאת \u202aAbalone\u202c\u200f <\u202a{ADDR}\u202c\u200f>:\u202c",
    "th": "เมื่อ ศ. 27 พ.ย. 2026 เวลา 12:19 Abalone <{ADDR}> เขียนว่า:",
    "vi": "Vào Th 6, 27 thg 11, 2026 vào lúc 12:19 Abalone <{ADDR}> đã viết:",
    "id": "Pada tanggal Jum, 27 Nov 2026 pukul 12.19 Abalone <{ADDR}> menulis:",
    "fa": "در تاریخ جمعه ۲۷ نوامبر ۲۰۲۶ ساعت ۱۲:۱۹ Abalone <{ADDR}> نوشت:",
    "hi": "शुक्र, 27 नव॰ 2026 को 12:19 pm बजे को Abalone <{ADDR}> ने लिखा:",
    "thunderbird": "Abalone wrote:",
    "outlook-ios": 'On Fri, Nov 27, 2026 at 12:19 PM +0100, "Abalone" <{ADDR}> wrote:',
    "mutt-star": "* Abalone <{ADDR}> [2026-11-27 12:19]:",
    "mutt-quoting": "Quoting Abalone <{ADDR}>:",
    "gnus": "Abalone <{ADDR}> writes:",
    "horde": "Zitat von Abalone <{ADDR}>:",
    "roundcube": "On 2026-11-27 12:19, Abalone wrote:",
    "sogo": 'Le vendredi 27 novembre 2026 12:19 CET, "Abalone" <{ADDR}> a écrit:',
    "spark": "On 27. Nov 2026 at 12:19 +0100, Abalone <{ADDR}>, wrote:",
    "fairemail": "Op 27 nov. 2026 12:19, schreef Abalone:",
    "airmail": "On November 27, 2026 at 12:19:01 PM, Abalone (abalone@pbm.example.org) wrote:",
    "hey": "On November 27, 2026, Abalone <{ADDR}> wrote:",
    "fastmail": "On Fri, Nov 27, 2026, at 12:19, Abalone wrote:",
    "tuta": "27 Nov 2026, 12:19 by abalone@pbm.example.org:",
    "tuta-de": "27. Nov. 2026, 12:19 von abalone@pbm.example.org:",
    "lotus": "Abalone <{ADDR}> wrote on 27/11/2026 12:19:01:",
    "kmail": "On Friday, 27 November 2026 12:19:01 CET Abalone wrote:",
    "claws": "On Fri, 27 Nov 2026 12:19:01 +0100\nAbalone <{ADDR}> wrote:",
    "aol-it": "Il venerdì 27 novembre 2026, 12:19:01 CET, Abalone <{ADDR}> ha scritto:",
    "pt-pt": "Abalone <{ADDR}> escreveu (sexta, 27/11/2026 à(s) 12:19):",
    "es-419": "El vie, 27 nov 2026 a la(s) 12:19, Abalone (<{ADDR}>) escribió:",
    "fr-ca": "Le ven. 27 nov. 2026, à 12 h 19, Abalone <{ADDR}> a écrit :",
    "is": "fös., 27. nóv. 2026 kl. 12:19 skrifaði Abalone <{ADDR}>:",
    "et": "R, 27. nov 2026 kell 12:19 Abalone <{ADDR}> kirjutas:",
    "lt": "2026-11-27, pn, 12:19 Abalone <{ADDR}> rašė:",
    "lv": "Pk, 2026. gada 27. nov., plkst. 12:19 — lietotājs Abalone (<{ADDR}>) rakstīja:",
    "hr": "pet, 27. stu 2026. u 12:19 Abalone <{ADDR}> napisao je:",
    "sr": "пет, 27. нов 2026. у 12:19 Abalone <{ADDR}> је написао/ла:",
    "bg": "пт, 27.11.2026 г. в 12:19 ч. Abalone <{ADDR}> написа:",
    "ca": "El dv., 27 de nov. 2026, a les 12:19, Abalone (<{ADDR}>) va escriure:",
}


def _attribution_forms(attribution: str) -> dict[str, str]:
    """The reply shapes an attribution stands in: above a quote, wrapped before the
    address, above an unquoted copy, and above a quote the move is written under."""
    line = attribution.replace("{ADDR}", ADDRESS)
    forms = {
        "quoted": f"c3-c5,d4\nMine\n\n{line}\n\n{QUOTED}\n",
        "unquoted": f"c3-c5,d4\nMine\n\n{line}\n\n{BOARD}\n",
        "bottom-posted": f"{line}\n{QUOTED}\n\nc3-c5,d4\nMine\n",
    }
    if " <" in line:
        wrapped = line.replace(" <", "\n<", 1)
        forms["wrapped"] = f"c3-c5,d4\nMine\n\n{wrapped}\n\n{QUOTED}\n"
    return forms


@pytest.mark.parametrize("language", sorted(ATTRIBUTIONS))
def test_an_attribution_in_any_language_and_wrapping_is_not_the_comment(language: str) -> None:
    for form, body in _attribution_forms(ATTRIBUTIONS[language]).items():
        assert parse_reply_body(body) == move("c3-c5,d4", "Mine"), form


#: Outlook's header block above the old mail, in languages the vocabulary names and in
#: some it does not (then three "Label: value" lines naming an address or the board).
HEADER_BLOCKS = {
    "is": "Frá: Abalone <{ADDR}>\nSent: 27. nóvember 2026 12:19\nTil: Fred\nEfni: Abalone Board 101",
    "et": "Saatja: Abalone <{ADDR}>\nSaadetud: 27. november 2026 12:19\nAdressaat: Fred\nTeema: Abalone Board 101",
    "lt": "Nuo: Abalone <{ADDR}>\nIšsiųsta: 2026 m. lapkričio 27 d. 12:19\nKam: Fred\nTema: Abalone Board 101",
    "lv": "No: Abalone <{ADDR}>\nNosūtīts: piektdiena, 2026. gada 27. novembris 12:19\nKam: Fred\nTēma: Abalone Board 101",
    "ro": "De la: Abalone <{ADDR}>\nTrimis: vineri, 27 noiembrie 2026 12:19\nCătre: Fred\nSubiect: Abalone Board 101",
    "hr": "Šalje: Abalone <{ADDR}>\nPoslano: 27. studenoga 2026. 12:19\nPrima: Fred\nPredmet: Abalone Board 101",
    "sl": "Od: Abalone <{ADDR}>\nPoslano: petek, 27. november 2026 12:19\nZa: Fred\nZadeva: Abalone Board 101",
    "el": "Από: Abalone <{ADDR}>\nΣτάλθηκε: Παρασκευή, 27 Νοεμβρίου 2026 12:19 μμ\nΠρος: Fred\nΘέμα: Abalone Board 101",
    "he": "מאת: Abalone <{ADDR}>\nנשלח: יום שישי 27 נובמבר 2026 12:19\nאל: Fred\nנושא: Abalone Board 101",
    "ar": "من: Abalone <{ADDR}>\nتم الإرسال: الجمعة، 27 نوفمبر 2026 12:19 م\nإلى: Fred\nالموضوع: Abalone Board 101",
    "th": "จาก: Abalone <{ADDR}>\nส่ง: 27 พฤศจิกายน 2026 12:19\nถึง: Fred\nเรื่อง: Abalone Board 101",
    "vi": "Từ: Abalone <{ADDR}>\nĐã gửi: Thứ Sáu, 27 tháng 11, 2026 12:19\nĐến: Fred\nChủ đề: Abalone Board 101",
    "id": "Dari: Abalone <{ADDR}>\nDikirim: Jumat, 27 November 2026 12.19\nKepada: Fred\nPerihal: Abalone Board 101",
    "ca": "De: Abalone <{ADDR}>\nEnviat el: divendres, 27 de novembre de 2026 12:19\nPer a: Fred\nAssumpte: Abalone Board 101",
    "sk": "Od: Abalone <{ADDR}>\nOdoslané: piatok 27. novembra 2026 12:19\nKomu: Fred\nPredmet: Abalone Board 101",
    "hu": "Feladó: Abalone <{ADDR}>\nElküldve: 2026. november 27., péntek 12:19\nCímzett: Fred\nTárgy: Abalone Board 101",
    "ko": "보낸 사람: Abalone <{ADDR}>\n보낸 날짜: 2026년 11월 27일 금요일 오후 12:19\n받는 사람: Fred\n제목: Abalone Board 101",
    "fa": "از: Abalone <{ADDR}>\nارسال شده: جمعه، 27 نوامبر 2026 12:19\nبه: Fred\nموضوع: Abalone Board 101",
    "sr": "Од: Abalone <{ADDR}>\nПослато: петак, 27. новембар 2026. 12:19\nЗа: Fred\nТема: Abalone Board 101",
    "bg": "От: Abalone <{ADDR}>\nИзпратено: петък, 27 ноември 2026 г. 12:19\nДо: Fred\nТема: Abalone Board 101",
    "de-name-only": "Von: Abalone\nGesendet: Freitag, 27. November 2026 12:19\nAn: Fred\nBetreff: AW: Spiel",
    "en-from-wrapped": "From: Abalone \n<{ADDR}> \nSent: Friday\nTo: Fred\nSubject: Abalone Board 101",
}


@pytest.mark.parametrize("language", sorted(HEADER_BLOCKS))
def test_a_header_block_in_any_language_ends_the_new_text(language: str) -> None:
    block = HEADER_BLOCKS[language].replace("{ADDR}", ADDRESS)
    for old_mail in (BOARD, "Some old text that is not a board mail\n"):
        body = f"c3-c5,d4\nMine\n\n{block}\n\n{old_mail}"
        assert parse_reply_body(body) == move("c3-c5,d4", "Mine"), old_mail[:20]


CLIENT_LINES = (
    "Enviado desde mi iPhone", "Envoyé de mon iPhone", "Inviato da iPhone",
    "Enviado do meu iPhone", "Verstuurd vanaf mijn iPhone", "Skickat från min iPhone",
    "Sendt fra min iPhone", "Lähetetty iPhonesta", "Wysłane z iPhone'a", "Odesláno z iPhonu",
    "Отправлено с iPhone", "iPhone'umdan gönderildi", "iPhoneから送信", "发自我的iPhone",
    "從我的 iPhone 傳送", "나의 iPhone에서 보냄", "Gửi từ iPhone của tôi", "Dikirim dari iPhone saya",
    "Poslano s mog iPhonea", "Poslato sa mog iPhone-a", "Trimis de pe iPhone-ul meu",
    "Elküldve az iPhone-omról", "Αποστολή από το iPhone μου", "Надіслано з iPhone",
    "נשלח מה-iPhone שלי", "أرسلت من الـ iPhone", "ส่งจาก iPhone ของฉัน", "Enviat des del meu iPhone",
    "Saadetud minu iPhone'ist", "Išsiųsta iš mano iPhone", "Nosūtīts no mana iPhone",
    "Von meinem Samsung Galaxy Smartphone gesendet.", "Obtenha o Outlook para Android",
    "Sent with Spark", "Sent from Edison Mail", "Sent from my BlackBerry 10 smartphone.",
    "Wysłane z aplikacji Outlook dla Androida", "Skickat från E-post för Windows",
)


@pytest.mark.parametrize("line", CLIENT_LINES)
def test_a_client_line_in_any_language_is_not_the_comment(line: str) -> None:
    body = f"c3-c5,d4\nMine\n\n{line}\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDRESS}> wrote:\n{QUOTED}\n"
    assert parse_reply_body(body) == move("c3-c5,d4", "Mine")


BANNERS = (
    "[EXTERNAL]", "[EXT]", "*EXTERNAL*", "EXTERNAL EMAIL", "[AMD Official Use Only - General]",
    "[Public]", "Sensitivity: Internal", "Classification: General", "Internal Use Only",
    "Confidential", "Highly Confidential", "For internal use only", "Restricted - Internal",
    "General Business",
    "CAUTION: This email originated from outside of the organization. Do not click links or "
    "open attachments unless you recognize the sender and know the content is safe.",
    "This message is from an external sender. Be cautious, especially with links.",
    "Achtung: Diese E-Mail wurde von außerhalb der Organisation gesendet.",
    "ATTENTION : Ce courriel provient de l'extérieur de l'organisation.",
    "PRECAUCIÓN: Este correo electrónico se originó fuera de la organización.",
    "Let op: deze e-mail is afkomstig van buiten de organisatie.",
    "You don't often get email from abalone@pbm.example.org. Learn why this is "
    "important<https://aka.ms/LearnAboutSenderIdentification>",
)


@pytest.mark.parametrize("banner", BANNERS)
def test_a_banner_above_the_move_is_passed_over(banner: str) -> None:
    body = f"{banner}\n\nc3-c5,d4\nMine\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDRESS}> wrote:\n{QUOTED}\n"
    assert parse_reply_body(body) == move("c3-c5,d4", "Mine")


@pytest.mark.parametrize("line", ["The general idea", "Public transport is late", "Internal affairs",
                                  "Confidential: c3 is weak", "Use it well"])
def test_a_sentence_with_a_classification_word_is_the_comment(line: str) -> None:
    assert parse_reply_body(f"c3-c5,d4\n{line}\n") == move("c3-c5,d4", line)


GREETINGS = (
    "Hi Wilma,", "Hello Wilma", "Dear Wilma,", "Wilma,", "Wilma:", "Wilma -", "Hi all,",
    "Good morning Wilma,", "Hallo Wilma,", "Moin,", "Salut Wilma !", "Bonjour Wilma,",
    "Hola Wilma:", "Buenas tardes,", "Ciao Wilma,", "Olá Wilma,", "Hej Wilma!", "Cześć Wilma,",
    "Привет, Вильма!", "Merhaba Wilma,", "こんにちは", "你好，", "안녕하세요,", "Szia Wilma!",
    "Γεια σου Wilma,", "שלום וילמה,", "مرحبا", "Xin chào Wilma,", "Halo Wilma,", "Salam",
)


@pytest.mark.parametrize("greeting", GREETINGS)
def test_a_greeting_above_the_move_is_part_of_the_comment(greeting: str) -> None:
    assert parse_reply_body(f"{greeting}\n\nc3-c5,d4\n\nCheers\n") == move(
        "c3-c5,d4", f"{greeting}\n\nCheers")


@pytest.mark.parametrize("typed", ["ａ１－ｃ３，ｄ４", "a1–c3,d4", "a1 – c3, d4", "a1‑c3,d4",
                                   "a1−c3,d4", "a1-c3，d4"])
def test_a_move_is_read_as_typed_whatever_the_input_method_or_autocorrection(typed: str) -> None:
    assert parse_reply_body(f"{typed}\n") == move("a1-c3,d4")


@pytest.mark.parametrize("subject", [
    "a1-c3,d4", "New Abalone Board 101 fred a1-c3,d4", "a1-c3,d4 Re: New Abalone Board 101 fred",
    "New Abalone Board 101 fred - a1-c3,d4", "New Abalone Board 101 fred: a1-c3,d4",
    "[New Abalone Board 101 fred] a1-c3,d4", "New Abalone Board 101 fred (a1-c3,d4)",
    "New Abalone Board 101 fred — a1-c3,d4", "回复：New Abalone Board 101 fred a1-c3,d4",
    "Odp: New Abalone Board 101 fred a1-c3,d4", "[EXTERNAL] Re: New Abalone Board 101 fred a1-c3,d4",
    "[EXTERNAL] New Abalone Board 101 fred a1-c3,d4", "a1-c3,d4 - Re: New Abalone Board 101 fred",
])
def test_a_move_typed_in_the_subject_is_found(subject: str) -> None:
    action = subject_action(subject, 101, ["fred", "wilma"])
    assert action is not None and action.move_text == "a1-c3,d4"


@pytest.mark.parametrize("subject", [
    "New Abalone Board 101 fred", "Abalone Board 101 wilma **", "New Abalone Board 102 fred a1-c3,d4",
    "resign Re: New Abalone Board 101 fred a1-c3,d4", "I think Re: New Abalone Board 101 fred a1-c3,d4",
])
def test_a_subject_without_one_command_of_the_player_carries_none(subject: str) -> None:
    assert subject_action(subject, 101, ["fred", "wilma"]) is None
