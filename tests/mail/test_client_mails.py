"""Whole replies as mail programs write them (DESIGN 2.2, 2.8): headers and MIME as the
client sends them (multipart/alternative text and HTML, HTML only, quoted-printable and
base64, format=flowed with and without DelSp, legacy charsets), each a reply to the board
mail of a running game, stored in the inbox and processed by the real worker (the service
harness).  Each must play exactly the move the player wrote and show the opponent exactly
the comment they wrote, or none.

The shapes are those of the public fixture corpora of reply parsers (crisp-oss/
email-reply-parser test/fixtures, discourse/email_reply_trimmer test/emails, mailgun/talon
tests/fixtures, github/email_reply_parser test/emails) and of the clients they come from,
written anew around our board mail; none repeats a shape of the text-only table
(tests/protocol/test_client_replies.py).  One harness (SQLite) for the module: each case
starts a game of its own, so a case never depends on another.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.header import Header
from email.utils import parseaddr
from pathlib import Path

import pytest
from sqlalchemy import select

from abalone_pbm.db.models import Game
from tests.mail.client_mail_parts import Part, bare_part, multipart, text_part, whole_mail
from tests.service.harness import Harness, Sent, make_harness

FRED, WILMA = "fred@example.org", "wilma@example.org"
#: fred's first move in the standard layout (a legal one: the game takes it, ply 1).
MOVE = "a1-c3,d4"


@dataclass(frozen=True)
class BoardMail:
    """The board mail fred answers: what a mail program quotes and where it replies."""

    board: int
    address: str  # the reply address
    subject: str
    message_id: str
    text: str
    html_body: str  # the HTML part's <body> content
    move: str = MOVE  # the move fred plays in answer

    def fill(self, template: str, *, quote: str = "> ") -> str:
        """``template`` with its placeholders filled: {MOVE} {ADDR} {SUBJECT} {BOARD}
        (the text copied), {QUOTED} (each line behind ``quote``), {HTMLBOARD}."""
        quoted = "\n".join((quote + line).rstrip() for line in self.text.splitlines())
        return (template.replace("{MOVE}", self.move).replace("{ADDR}", self.address)
                .replace("{SUBJECT}", self.subject).replace("{QUOTED}", quoted)
                .replace("{HTMLBOARD}", self.html_body).replace("{BOARD}", self.text))


Build = Callable[[BoardMail], bytes]


def _headers(mail: BoardMail, subject: str, client: tuple[tuple[str, str], ...],
             charset: str) -> list[tuple[str, str]]:
    """The headers of a reply: fred's address, the reply address, a Subject as the
    client writes it (encoded when not ASCII), and the thread's references."""
    written = mail.fill(subject)
    encoded = written if written.isascii() else Header(written, charset).encode()
    return [
        ("From", f"Fred Flintstone <{FRED}>"),
        ("To", f"Abalone <{mail.address}>"),
        ("Subject", encoded),
        ("Date", "Fri, 27 Nov 2026 12:31:07 +0100"),
        ("Message-ID", f"<reply-{mail.board}@mail.example.org>"),
        ("In-Reply-To", mail.message_id),
        ("References", mail.message_id),
        *client,
    ]


def plain(text: str, *, charset: str = "utf-8", transfer: str = "quoted-printable",
          params: str = "", subject: str = "Re: {SUBJECT}", quote: str = "> ",
          client: tuple[tuple[str, str], ...] = (), label: str | None = None) -> Build:
    """A text/plain reply (its text in ``charset``, named ``label`` if given)."""
    def build(mail: BoardMail) -> bytes:
        body = text_part("plain", mail.fill(text, quote=quote), charset, transfer, params,
                         label)
        return whole_mail(_headers(mail, subject, client, charset), body)
    return build


def html(markup: str, *, charset: str = "utf-8", transfer: str = "quoted-printable",
         subject: str = "Re: {SUBJECT}", client: tuple[tuple[str, str], ...] = ()) -> Build:
    """An HTML-only reply."""
    def build(mail: BoardMail) -> bytes:
        body = text_part("html", mail.fill(markup), charset, transfer)
        return whole_mail(_headers(mail, subject, client, charset), body)
    return build


def alternative(text: str, markup: str, *, charset: str = "utf-8",
                transfer: str = "quoted-printable", params: str = "",
                subject: str = "Re: {SUBJECT}", quote: str = "> ",
                client: tuple[tuple[str, str], ...] = ()) -> Build:
    """A multipart/alternative reply: the text part, then the HTML part."""
    def build(mail: BoardMail) -> bytes:
        body: Part = multipart(
            "alternative", f"=_alt_{mail.board}_boundary",
            text_part("plain", mail.fill(text, quote=quote), charset, transfer, params),
            text_part("html", mail.fill(markup), charset, transfer))
        return whole_mail(_headers(mail, subject, client, charset), body)
    return build


@dataclass(frozen=True)
class Shape:
    name: str
    origin: str  # the corpus fixture or the client the shape is taken from
    build: Build
    comment: str  # exactly what the opponent is shown ("" for no comment)
    move: str = MOVE


GMAIL = (("X-Mailer", "Gmail"),)  # (Gmail sets none; kept to name the client)
OUTLOOK = (("X-Mailer", "Microsoft Outlook 16.0"), ("Thread-Index", "AQHZ0abc1234"),
           ("Content-Language", "en-us"))
THUNDERBIRD = (("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 "
                              "Thunderbird/128.5.0"),)
APPLE = (("X-Mailer", "Apple Mail (2.3774.200.91.1.1)"),)
IPHONE = (("X-Mailer", "iPhone Mail (22B91)"),)

GMAIL_ATTRIBUTION = "On Fri, Nov 27, 2026 at 12:19 PM Abalone &lt;{ADDR}&gt; wrote:"


def gmail_markup(new: str, attribution: str = GMAIL_ATTRIBUTION) -> str:
    """Gmail's HTML part: the new text in a div, the old mail in div.gmail_quote."""
    return (f'<div dir="ltr">{new}</div><br><div class="gmail_quote"><div dir="ltr" '
            f'class="gmail_attr">{attribution}<br></div><blockquote class="gmail_quote" '
            'style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);'
            'padding-left:1ex">{HTMLBOARD}</blockquote></div>\n')


def outlook_markup(new: str, header_block: str) -> str:
    """Outlook desktop's HTML part: WordSection1, the header block in a bordered div."""
    return ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
            '<style><!-- p.MsoNormal {margin:0cm;} --></style></head><body lang="EN-US">'
            f'<div class="WordSection1"><p class="MsoNormal">{new}</p><p class="MsoNormal">'
            '&nbsp;</p><div><div style="border:none;border-top:solid #E1E1E1 1.0pt;'
            f'padding:3.0pt 0cm 0cm 0cm"><p class="MsoNormal">{header_block}</p></div></div>'
            '{HTMLBOARD}</div></body></html>\n')


SHAPES: list[Shape] = [
    # ------------------------------------------------------------ Gmail, web and apps
    Shape("gmail-alternative-qp", "github/email_reply_parser email_1_2, Gmail web",
          alternative("{MOVE}\nGood luck with that one!\n\nOn Fri, Nov 27, 2026 at 12:19 PM "
                      "Abalone <{ADDR}> wrote:\n\n{QUOTED}\n",
                      gmail_markup("{MOVE}<div>Good luck with that one!</div>"), client=GMAIL),
          "Good luck with that one!"),
    Shape("gmail-finnish-wrapped", "crisp-oss email_finnish",
          alternative("{MOVE}\nSinun vuorosi.\n\npe 27. marrask. 2026 klo 12.19 Abalone\n"
                      "<{ADDR}> kirjoitti:\n\n{QUOTED}\n",
                      gmail_markup("{MOVE}<div>Sinun vuorosi.</div>", "pe 27. marrask. 2026 "
                                   "klo 12.19 Abalone &lt;{ADDR}&gt; kirjoitti:"),
                      charset="iso-8859-15"),
          "Sinun vuorosi."),
    Shape("gmail-hungarian-name-first", "crisp-oss email_custom_quote_header, Gmail hu",
          plain("{MOVE}\nTe jössz!\n\nAbalone <{ADDR}> ezt írta (időpont: 2026. nov. 27., P, "
                "12:19):\n\n{QUOTED}\n", charset="iso-8859-2", transfer="base64"),
          "Te jössz!"),
    Shape("thunderbird-hungarian-keltezessel", "crisp-oss email_custom_quote_header",
          plain('{MOVE}\nKöszönöm\n\n2026.11.27. 12:19 keltezéssel, "Abalone" írta:\n{QUOTED}\n',
                transfer="8bit", params="; format=flowed", client=THUNDERBIRD),
          "Köszönöm"),
    Shape("gmail-czech-windows-1250", "email_reply_trimmer embedded_email_* (cs)",
          plain("{MOVE}\nHodně štěstí\n\nDne pá 27. 11. 2026 12:19 uživatel Abalone <{ADDR}> "
                "napsal:\n\n{QUOTED}\n", charset="windows-1250"),
          "Hodně štěstí"),
    Shape("gmail-greek-iso-8859-7", "talon reply patterns (el), Gmail el",
          plain("{MOVE}\nΚαλή τύχη\n\nΣτις Παρ 27 Νοε 2026 στις 12:19 μ.μ., ο/η Abalone <{ADDR}> "
                "έγραψε:\n\n{QUOTED}\n", charset="iso-8859-7", transfer="base64"),
          "Καλή τύχη"),
    Shape("gmail-vietnamese-wrapped", "Gmail vi",
          plain("{MOVE}\nChúc may mắn\n\nVào Th 6, 27 thg 11, 2026 vào lúc 12:19 Abalone <\n"
                "{ADDR}> đã viết:\n\n{QUOTED}\n", transfer="base64"),
          "Chúc may mắn"),
    Shape("gmail-hebrew-bidi-marks", "Gmail he (direction marks around the name)",
          plain("{MOVE}\nבהצלחה\n\n\u202bבתאריך יום ו׳, 27 בנוב׳ 2026 ב-12:19 מאת \u202aAbalone"
                "\u202c\u200f <\u202a{ADDR}\u202c\u200f>:\u202c\n\n{QUOTED}\n", transfer="base64"),
          "בהצלחה"),
    Shape("gmail-korean-euc-kr", "Gmail ko",
          plain("{MOVE}\n행운을 빌어요\n\n2026년 11월 27일 (금) 오후 12:19, Abalone <{ADDR}>님이 "
                "작성:\n\n{QUOTED}\n", charset="euc-kr", transfer="base64"),
          "행운을 빌어요"),
    Shape("gmail-indonesian", "Gmail id",
          plain("{MOVE}\nGiliranmu\n\nPada tanggal Jum, 27 Nov 2026 pukul 12.19 Abalone <{ADDR}> "
                "menulis:\n\n{QUOTED}\n"),
          "Giliranmu"),
    Shape("gmail-ukrainian-koi8-u", "email_reply_trimmer embedded_email_ukrainian, Gmail uk",
          plain("{MOVE}\nТвій хід\n\nпт, 27 лист. 2026 р. о 12:19 Abalone <{ADDR}> пише:\n\n"
                "{QUOTED}\n", charset="koi8-u", transfer="base64"),
          "Твій хід"),
    Shape("gmail-greeting-then-move", "top posting with a greeting (issue 25)",
          alternative("Hi Wilma,\n\n{MOVE}\n\nCheers,\nFred\n\nOn Fri, Nov 27, 2026 at 12:19 PM "
                      "Abalone <{ADDR}> wrote:\n\n{QUOTED}\n",
                      gmail_markup("Hi Wilma,<div><br></div><div>{MOVE}</div><div><br></div>"
                                   "<div>Cheers,</div><div>Fred</div>")),
          "Hi Wilma,\n\nCheers,\nFred"),
    Shape("gmail-inline-answers", "github/email_reply_parser email_2_1 (inline replies)",
          plain("On Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n\n"
                "> It is fred's turn (o); the next move is move #1.\n\n{MOVE}\n\n"
                "> Whatever you write below the move is shown to the other players as your\n"
                "> comment.\n\nThanks for explaining\n"),
          "Thanks for explaining"),
    Shape("gmail-subject-move-after-empty-body", "the move typed in the Subject (issue 25)",
          alternative("\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n\n{QUOTED}\n",
                      gmail_markup("<br>"), subject="Re: {SUBJECT} {MOVE}"),
          ""),
    Shape("outlook-subject-move-before", "the move typed in the Subject, Outlook copy",
          plain("\n\n________________________________\nFrom: Abalone <{ADDR}>\nSent: Friday, "
                "November 27, 2026 12:19 PM\nTo: Fred Flintstone <fred@example.org>\nSubject: "
                "{SUBJECT}\n\n{BOARD}\n", subject="{MOVE} RE: {SUBJECT}", client=OUTLOOK),
          ""),
    Shape("apple-subject-only-html", "iOS Mail, the Subject replaced by the move",
          html('<html><body><div dir="auto"></div><div dir="auto"><br><blockquote type="cite">'
               'On 27 Nov 2026, at 12:19, Abalone &lt;{ADDR}&gt; wrote:<br><br></blockquote>'
               '</div><blockquote type="cite">{HTMLBOARD}</blockquote></body></html>',
               subject="{MOVE}", client=IPHONE),
          ""),
    # ------------------------------------------------------------ Outlook and Exchange
    Shape("outlook-desktop-windows-1252", "crisp-oss email_tricky_15, Outlook desktop",
          alternative("{MOVE}\nThat’s my move – your turn\n\nFrom: Abalone <{ADDR}>\nSent: Friday,"
                      " November 27, 2026 12:19 PM\nTo: Fred Flintstone <fred@example.org>\n"
                      "Subject: {SUBJECT}\n\n{BOARD}\n",
                      outlook_markup("{MOVE}<br>That’s my move – your turn",
                                     "<b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday,"
                                     " November 27, 2026 12:19 PM<br><b>To:</b> Fred<br><b>Subject:"
                                     "</b> {SUBJECT}"),
                      charset="windows-1252", client=OUTLOOK),
          "That’s my move – your turn"),
    Shape("outlook-split-from-line", "crisp-oss email_outlook_split_line_from",
          plain("{MOVE}\nSplit header below\n\nFrom: Abalone \n<{ADDR}> \nSent: Friday, November"
                " 27, 2026 12:19 PM\nTo: Fred Flintstone <fred@example.org>\nSubject: {SUBJECT}"
                "\n\n{BOARD}\n", client=OUTLOOK),
          "Split header below"),
    Shape("outlook-msn-rule-without-blank", "crisp-oss email_msn",
          plain("{MOVE}\nno blank above the rule\n________________________________\nFrom: "
                "Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19 PM\nTo: "
                "fred@example.org <fred@example.org>\nSubject: {SUBJECT}\n\n{BOARD}\n"),
          "no blank above the rule"),
    Shape("outlook-2003-mailto", "talon tests/fixtures (Outlook 2003)",
          plain("{MOVE}\nOld Outlook\n\n-----Original Message-----\nFrom: Abalone "
                "[mailto:{ADDR}] \nSent: Friday, November 27, 2026 12:19 PM\nTo: Fred\n"
                "Subject: {SUBJECT}\n\n{BOARD}\n", charset="us-ascii", transfer="7bit"),
          "Old Outlook"),
    Shape("gmx-gesendet-first", "email_reply_trimmer embedded_email_german_*, GMX/web.de",
          plain("{MOVE}\nGrüße aus Köln\n\nGesendet: Freitag, 27. November 2026 um 12:19 Uhr\n"
                'Von: "Abalone" <{ADDR}>\nAn: fred@example.org\nBetreff: {SUBJECT}\n\n{BOARD}\n',
                charset="iso-8859-15", subject="Aw: {SUBJECT}"),
          "Grüße aus Köln"),
    Shape("outlook-polish-iso-8859-2", "email_reply_trimmer embedded_email_polish_1",
          plain("{MOVE}\nTwój ruch, powodzenia!\n\nOd: Abalone <{ADDR}>\nWysłano: piątek, 27 "
                "listopada 2026 12:19\nDo: Fred\nTemat: {SUBJECT}\n\n{BOARD}\n",
                charset="iso-8859-2", subject="Odp: {SUBJECT}", client=OUTLOOK),
          "Twój ruch, powodzenia!"),
    Shape("outlook-turkish", "Outlook tr",
          plain("{MOVE}\nSıra sende\n\nKimden: Abalone <{ADDR}>\nGönderildi: 27 Kasım 2026 Cuma "
                "12:19\nKime: Fred\nKonu: {SUBJECT}\n\n{BOARD}\n", charset="iso-8859-9",
                subject="YNT: {SUBJECT}", client=OUTLOOK),
          "Sıra sende"),
    Shape("outlook-japanese-shift-jis", "Outlook ja",
          plain("{MOVE}\nよろしくお願いします\n\n差出人: Abalone <{ADDR}>\n送信日時: 2026年11月27日 12:19\n"
                "宛先: Fred\n件名: {SUBJECT}\n\n{BOARD}\n", charset="shift_jis",
                transfer="base64", subject="RE: {SUBJECT}", client=OUTLOOK),
          "よろしくお願いします"),
    Shape("outlook-traditional-chinese-big5", "email_reply_trimmer embedded_email_chinese",
          plain("{MOVE}\n輪到你了\n\n寄件者: Abalone <{ADDR}>\n寄件日期: 2026年11月27日 下午 12:19\n"
                "收件者: Fred\n主旨: {SUBJECT}\n\n{BOARD}\n", charset="big5", transfer="base64",
                subject="回覆: {SUBJECT}", client=OUTLOOK),
          "輪到你了"),
    Shape("foxmail-qq-gbk", "QQ Mail / Foxmail (zh)",
          plain('{MOVE}\n该你了\n\n\n------------------ 原始邮件 ------------------\n发件人: '
                '"Abalone"<{ADDR}>;\n发送时间: 2026年11月27日(星期五) 中午12:19\n收件人: "Fred"'
                '<fred@example.org>;\n主题: {SUBJECT}\n\n{BOARD}\n', charset="gbk",
                transfer="base64", subject="回复：{SUBJECT}"),
          "该你了"),
    Shape("outlook-web-pt-br-divrplyfwdmsg", "Outlook on the web (pt-BR)",
          alternative("{MOVE}\nBoa sorte\n________________________________\nDe: Abalone <{ADDR}>\n"
                      "Enviado: sexta-feira, 27 de novembro de 2026 12:19\nPara: Fred\nAssunto: "
                      "{SUBJECT}\n\n{BOARD}\n",
                      '<html><body><div class="elementToProof">{MOVE}</div><div class="element'
                      'ToProof">Boa sorte</div><div id="appendonsend"></div><hr style="display:'
                      'inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" dir="ltr">'
                      '<font face="Calibri, sans-serif"><b>De:</b> Abalone &lt;{ADDR}&gt;<br><b>'
                      'Enviado:</b> sexta-feira, 27 de novembro de 2026 12:19<br><b>Para:</b> '
                      'Fred<br><b>Assunto:</b> {SUBJECT}</font><div>&nbsp;</div></div>'
                      '{HTMLBOARD}</body></html>', subject="RE: {SUBJECT}"),
          "Boa sorte"),
    Shape("outlook-web-html-only-es", "Outlook on the web (es), HTML only",
          html('<html><body><div class="elementToProof" style="font-family:Aptos">{MOVE}</div>'
               '<div class="elementToProof">Suerte</div><div id="appendonsend"></div><hr '
               'tabindex="-1"><div id="divRplyFwdMsg"><b>De:</b> Abalone &lt;{ADDR}&gt;<br><b>'
               'Enviado:</b> viernes, 27 de noviembre de 2026 12:19<br><b>Para:</b> Fred<br><b>'
               'Asunto:</b> {SUBJECT}</div>{HTMLBOARD}</body></html>'),
          "Suerte"),
    Shape("outlook-ios-italian", "crisp-oss email_ios_outlook (it)",
          plain("{MOVE}\n\nOttieni Outlook per iOS<https://aka.ms/o0ukef>\n"
                "________________________________\nDa: Abalone <{ADDR}>\nInviato: venerdì, "
                "novembre 27, 2026 12:19 PM\nA: Fred\nOggetto: {SUBJECT}\n\n{BOARD}\n"),
          ""),
    Shape("outlook-android-dutch", "Outlook for Android (nl)",
          plain("{MOVE}\n\nOutlook voor Android downloaden<https://aka.ms/AAb9ysg>\n"
                "________________________________\nVan: Abalone <{ADDR}>\nVerzonden: vrijdag, "
                "november 27, 2026 12:19:01 PM\nAan: Fred\nOnderwerp: {SUBJECT}\n\n{BOARD}\n"),
          ""),
    Shape("outlook-mac-date-label", "Outlook for Mac",
          alternative("{MOVE}\nPlaying from my Mac\n\nFrom: Abalone <{ADDR}>\nDate: Friday, 27 "
                      "November 2026 at 12:19\nTo: Fred Flintstone <fred@example.org>\nSubject: "
                      "{SUBJECT}\n\n{BOARD}\n",
                      outlook_markup("{MOVE}<br>Playing from my Mac",
                                     "<b>From: </b>Abalone &lt;{ADDR}&gt;<br><b>Date: </b>Friday, "
                                     "27 November 2026 at 12:19<br><b>To: </b>Fred<br><b>Subject: "
                                     "</b>{SUBJECT}"),
                      client=(("User-Agent", "Microsoft-MacOutlook/16.91.24111020"),)),
          "Playing from my Mac"),
    Shape("lotus-notes-tab-labels", "talon tests/fixtures (Lotus Notes)",
          plain("{MOVE}\nNotes user here\n\n\n\nFrom:\tAbalone <{ADDR}>\nTo:\tfred@example.org\n"
                "Date:\t27/11/2026 12:19\nSubject:\t{SUBJECT}\n\n\n\n{BOARD}\n",
                charset="us-ascii", transfer="7bit"),
          "Notes user here"),
    Shape("samsung-spanish-dashes", "crisp-oss email_danish_dash_separator (Samsung es)",
          plain("{MOVE}\n\n\n\nEnviado desde mi smartphone Samsung Galaxy.\n\n\n-------- Mensaje "
                "original --------\nDe: Abalone <{ADDR}> \nFecha: 27/11/26 12:19 (GMT+01:00) \n"
                "Para: fred@example.org \nAsunto: {SUBJECT} \n\n{BOARD}\n"),
          ""),
    Shape("danish-dash-separator", "crisp-oss email_danish_dash_separator",
          plain("{MOVE}\nDin tur, Wilma\n\n-------- Oprindelig besked --------\nFra: Abalone "
                "<{ADDR}>\nDato: 27.11.2026  12.19  (GMT+01:00)\nTil: fred@example.org\nEmne: "
                "{SUBJECT} \n\n{BOARD}\n", charset="iso-8859-1"),
          "Din tur, Wilma"),
    Shape("zimbra-french-mail-original", "talon tests/fixtures (Zimbra fr)",
          plain('{MOVE}\nÀ toi de jouer\n\n----- Mail original -----\nDe: "Abalone" <{ADDR}>\n'
                'À: "Fred" <fred@example.org>\nEnvoyé: Vendredi 27 Novembre 2026 12:19:01\n'
                "Objet: {SUBJECT}\n\n{BOARD}\n", charset="iso-8859-1"),
          "À toi de jouer"),
    Shape("yahoo-fr-indented-header", "crisp-oss email_customer_quote_header_3",
          plain("{MOVE}\nbonne chance\n\n      De : Abalone <{ADDR}>\n À : Fred\n Envoyé le : "
                "Vendredi 27 novembre 2026 12h19\n Objet : {SUBJECT}\n\n{BOARD}\n",
                charset="windows-1252"),
          "bonne chance"),
    Shape("yahoo-web-yahoo-quoted", "Yahoo Mail web, text and HTML",
          alternative("{MOVE}\nYahoo here\n\n    On Friday, November 27, 2026 at 12:19:01 PM GMT+1,"
                      " Abalone <{ADDR}> wrote:  \n \n \n{QUOTED}\n",
                      '<html><body><div class="ydp1 yahoo-style-wrap"><div dir="ltr">{MOVE}</div>'
                      '<div dir="ltr">Yahoo here</div></div><div id="yahoo_quoted_1" class='
                      '"yahoo_quoted"><div style="font-family:Helvetica"><div>On Friday, November'
                      ' 27, 2026 at 12:19:01 PM GMT+1, Abalone &lt;{ADDR}&gt; wrote:</div><div>'
                      '<br></div>{HTMLBOARD}</div></div></body></html>', quote=" "),
          "Yahoo here"),
    Shape("mailru-koi8-r", "talon tests/fixtures (Mail.ru)",
          plain("{MOVE}\nУдачи!\n\n\nПятница, 27 ноября 2026, 12:19 +01:00 от Abalone <{ADDR}>:\n"
                "\n{QUOTED}\n", charset="koi8-r", transfer="8bit"),
          "Удачи!"),
    Shape("outlook-ukrainian-windows-1251", "email_reply_trimmer embedded_email_ukrainian",
          plain("{MOVE}\nУдачі\n\nВід: Abalone <{ADDR}>\nНадіслано: 27 листопада 2026 р. 12:19\n"
                "Кому: Fred\nТема: {SUBJECT}\n\n{BOARD}\n", charset="windows-1251"),
          "Удачі"),
    # ------------------------------------------------------------ mutt, Thunderbird, Apple
    Shape("mutt-star-attribution-bottom-post", "mutt/neomutt '* name [date]:' attribution",
          plain("* Abalone <{ADDR}> [2026-11-27 12:19 +0100]:\n"
                "> Summary of Abalone Board 1\n>\n> It is fred's turn (o).\n\n{MOVE}\n\n"
                "Bottom-posted\n\n-- \nFred\n", charset="us-ascii", transfer="7bit",
                client=(("User-Agent", "NeoMutt/20241002"),)),
          "Bottom-posted"),
    Shape("thunderbird-flowed-moz-cite", "discourse fixtures (Thunderbird, format=flowed)",
          alternative("{MOVE}\nThunderbird umbricht \ndiesen Kommentar.\n\nAm 27.11.26 um 12:19 "
                      "schrieb Abalone:\n{QUOTED}\n",
                      '<html><body><p>{MOVE}<br>Thunderbird umbricht diesen Kommentar.</p><div '
                      'class="moz-cite-'
                      'prefix">Am 27.11.26 um 12:19 schrieb Abalone:<br></div><blockquote type='
                      '"cite" cite="mid:x">{HTMLBOARD}</blockquote></body></html>',
                      transfer="8bit", params="; format=flowed", client=THUNDERBIRD),
          "Thunderbird umbricht diesen Kommentar."),
    Shape("apple-mail-flowed-delsp", "Apple Mail (format=flowed; delsp=yes)",
          plain("{MOVE}\nMerci beaucoup pour la  \npartie\n\n> Le 27 nov. 2026 à 12:19, Abalone "
                "<{ADDR}> a écrit :\n> \n{QUOTED}\n", params="; format=flowed; delsp=yes",
                client=APPLE),
          "Merci beaucoup pour la partie"),
    Shape("apple-html-only-blockquote-cite", "iOS Mail, HTML only",
          html('<html><head></head><body dir="auto"><div dir="ltr">{MOVE}</div><div dir="ltr">'
               'Bonne partie</div><div dir="ltr"><br><blockquote type="cite">Le 27 nov. 2026 à '
               '12:19, Abalone &lt;{ADDR}&gt; a écrit&nbsp;:<br><br></blockquote></div><blockquote'
               ' type="cite"><div dir="ltr">{HTMLBOARD}</div></blockquote></body></html>',
               client=IPHONE),
          "Bonne partie"),
    Shape("iphone-japanese-iso-2022-jp", "iPhone Mail (ja)",
          plain("{MOVE}\nよろしく\n\niPhoneから送信\n\n2026/11/27 12:19、Abalone <{ADDR}>のメール:\n\n"
                "{QUOTED}\n", charset="iso-2022-jp", transfer="7bit", client=IPHONE),
          "よろしく"),
    Shape("iphone-dutch-het-volgende", "iPhone Mail (nl)",
          plain("{MOVE}\n\nVerstuurd vanaf mijn iPhone\n\nOp 27 nov. 2026 om 12:19 heeft Abalone "
                "<{ADDR}> het volgende geschreven:\n\n{QUOTED}\n", client=IPHONE),
          ""),
    Shape("ipad-move-number", "iPad Mail, the move with #1",
          plain("{MOVE}#1\n\nSent from my iPad\n\n> On 27 Nov 2026, at 12:19, Abalone <{ADDR}> "
                "wrote:\n> \n{QUOTED}\n", charset="us-ascii", transfer="7bit", client=IPHONE),
          ""),
    Shape("proton-html-only", "Proton Mail web, HTML only",
          html('<div style="font-family: Arial">{MOVE}</div><div style="font-family: Arial">'
               'Proton here</div><div class="protonmail_signature_block"><div class="protonmail_'
               'signature_block-proton">Sent with <a href="https://proton.me/mail/home">Proton '
               'Mail</a> secure email.</div></div><br><div class="protonmail_quote">On Friday, '
               'November 27th, 2026 at 12:19, Abalone &lt;{ADDR}&gt; wrote:<br><blockquote class='
               '"protonmail_quote" type="cite">{HTMLBOARD}</blockquote></div>'),
          "Proton here"),
    # ------------------------------------------------------------ banners, signatures, blanks
    Shape("banner-german-achtung", "Exchange external-sender banner (de)",
          plain("ACHTUNG: Diese E-Mail stammt von außerhalb der Organisation. Klicken Sie nicht "
                "auf Links oder öffnen Sie keine Anhänge, es sei denn, Sie kennen den Absender.\n"
                "\n{MOVE}\nmit Banner\n\nVon: Abalone <{ADDR}>\nGesendet: Freitag, 27. November "
                "2026 12:19\nAn: Fred\nBetreff: {SUBJECT}\n\n{BOARD}\n", charset="iso-8859-1",
                subject="AW: {SUBJECT}", client=OUTLOOK),
          "mit Banner"),
    Shape("banner-public-label-html", "Microsoft Purview label [Public], text and HTML",
          alternative("[Public]\n\n{MOVE}\nBanner above\n\nFrom: Abalone <{ADDR}>\nSent: Friday, "
                      "November 27, 2026 12:19 PM\nTo: Fred\nSubject: {SUBJECT}\n\n{BOARD}\n",
                      outlook_markup('</p><p style="font-family:Calibri;font-size:10pt;color:'
                                     '#008000;margin:5pt" align="Left">[Public]<br></p><p '
                                     'class="MsoNormal">{MOVE}<br>Banner above',
                                     "<b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday"),
                      client=OUTLOOK),
          "Banner above"),
    Shape("signature-dash-space-qp", "talon tests/fixtures, '-- ' as --=20 in QP",
          plain("{MOVE}\nSee you\n-- \nFred Flintstone\nBedrock Quarry & Gravel\n\nOn Fri, Nov 27,"
                " 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n{QUOTED}\n"),
          "See you"),
    Shape("signature-dashes-without-blank", "crisp-oss sig_no_empty_line",
          plain("{MOVE}\nbye\n--\nFred\n+1 555 0123\n\n{QUOTED}\n", charset="us-ascii",
                transfer="7bit"),
          "bye"),
    Shape("no-break-and-zero-width-plain", "pasted move with U+00A0 and U+200B around it",
          plain("\u00a0{MOVE}\u200b\n\u200bNo\u00a0break\u00a0here\n\nOn Fri, Nov 27, 2026 at "
                "12:19 PM Abalone <{ADDR}> wrote:\n\n{QUOTED}\n"),
          "No break here"),
    Shape("no-break-and-zero-width-html", "Outlook on the web, &nbsp; and &#8203;",
          html('<div class="elementToProof">&nbsp;{MOVE}&#8203;</div><div>&nbsp;</div><div '
               'class="elementToProof">&#8203;Zero&nbsp;width</div><div id="appendonsend"></div>'
               '<hr tabindex="-1"><div id="divRplyFwdMsg"><b>From:</b> Abalone &lt;{ADDR}&gt;'
               '<br><b>Sent:</b> Friday<br><b>To:</b> Fred<br><b>Subject:</b> {SUBJECT}</div>'
               '{HTMLBOARD}'),
          "Zero width"),
    Shape("html-bold-upper-case-move", "Outlook desktop, the move in bold capitals",
          html(outlook_markup("<b>A1 - C3, D4</b>", "<b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>"
                              "Sent:</b> Friday<br><b>To:</b> Fred<br><b>Subject:</b> {SUBJECT}"),
               client=OUTLOOK),
          "", move="a1-c3,d4"),
]


EXTRA: list[Shape] = [
    Shape("outlook-inline-image-signature", "talon tests/fixtures (Outlook, cid image)",
          plain("{MOVE}\nWith a logo\n\nFred Flintstone\n[cid:image001.png@01DB4053.5A7B2C10]\n\n"
                "From: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19 PM\nTo: Fred\n"
                "Subject: {SUBJECT}\n\n{BOARD}\n", client=OUTLOOK),
          "With a logo\n\nFred Flintstone"),
    Shape("gmail-image-signature", "Gmail, an image in the signature",
          plain("{MOVE}\nLogo below\n\n[image: Bedrock Quarry logo]\n\nOn Fri, Nov 27, 2026 at "
                "12:19 PM Abalone <{ADDR}> wrote:\n\n{QUOTED}\n"),
          "Logo below"),
    Shape("gmail-html-signature-div", "Gmail HTML only, gmail_signature",
          html(gmail_markup('{MOVE}<div>Signed below</div><br><span class="gmail_signature_prefix">'
                            '-- </span><br><div dir="ltr" class="gmail_signature">Fred Flintstone'
                            '<br>Bedrock</div>')),
          "Signed below"),
    Shape("outlook-web-signature-div", "Outlook on the web HTML only, id=Signature",
          html('<div class="elementToProof">{MOVE}</div><div class="elementToProof">Signed'
               '</div><div id="Signature"><p>Fred Flintstone</p><p>Bedrock Quarry</p></div>'
               '<div id="appendonsend"></div><hr tabindex="-1"><div id="divRplyFwdMsg"><b>From:'
               '</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday</div>{HTMLBOARD}'),
          "Signed"),
    Shape("outlook-msonormal-html-only", "Outlook desktop HTML only, o:p and &nbsp; lines",
          html('<html xmlns:o="urn:schemas-microsoft-com:office:office"><body><div class='
               '"WordSection1"><p class="MsoNormal">{MOVE}<o:p></o:p></p><p class="MsoNormal">'
               '<o:p>&nbsp;</o:p></p><p class="MsoNormal">Word wrote this<o:p></o:p></p><p '
               'class="MsoNormal"><o:p>&nbsp;</o:p></p><div style="border:none;border-top:solid '
               '#E1E1E1 1.0pt"><p class="MsoNormal"><b>From:</b> Abalone &lt;{ADDR}&gt; <br><b>'
               'Sent:</b> Friday, November 27, 2026 12:19 PM<br><b>To:</b> Fred<br><b>Subject:'
               '</b> {SUBJECT}<o:p></o:p></p></div>{HTMLBOARD}</div></body></html>',
               client=OUTLOOK),
          "Word wrote this"),
    Shape("outlook-caution-table-html", "Exchange banner as a table, HTML only",
          html('<table style="border:1px solid #9C6500;background:#FFEB9C"><tr><td><b>CAUTION:'
               '</b> This email originated from outside of the organization. Do not click links '
               'or open attachments unless you recognize the sender.</td></tr></table><div>'
               '{MOVE}</div><div>Behind a banner</div><hr><div id="divRplyFwdMsg"><b>From:</b> '
               'Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday</div>{HTMLBOARD}'),
          "Behind a banner"),
    Shape("subject-move-with-comment", "the move in the Subject, a comment in the body",
          plain("Your turn now\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> wrote:\n\n"
                "{QUOTED}\n", subject="Re: {SUBJECT} {MOVE}"),
          "Your turn now"),
    Shape("french-outlook-nbsp-colons", "Outlook fr (no-break space before the colons)",
          plain("{MOVE}\nÀ toi\n\nDe\u00a0: Abalone <{ADDR}>\nEnvoyé\u00a0: vendredi 27 "
                "novembre 2026 12:19\nÀ\u00a0: Fred\nObjet\u00a0: {SUBJECT}\n\n{BOARD}\n",
                charset="windows-1252", subject="RE : {SUBJECT}", client=OUTLOOK),
          "À toi"),
    Shape("qp-soft-break-inside-move", "Outlook QP, a soft line break inside the move",
          lambda mail: whole_mail(
              _headers(mail, "RE: {SUBJECT}", OUTLOOK, "utf-8"),
              Part(('Content-Type: text/plain; charset="utf-8"',
                    "Content-Transfer-Encoding: quoted-printable"),
                   mail.fill("a1-c3,=\r\nd4\r\nSoft=20break\r\n\r\nFrom: Abalone <{ADDR}>\r\n"
                             "Sent: Friday\r\nTo: Fred\r\nSubject: {SUBJECT}\r\n\r\n")
                   .encode("ascii"))),
          "Soft break"),
    Shape("zero-width-joiner-inside-move", "a pasted move with U+200D and U+2060 in it",
          plain("a1\u200d-c3,\u2060d4\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> "
                "wrote:\n{QUOTED}\n", transfer="base64"),
          ""),

    Shape("thunderbird-html-only-moz-cite", "Thunderbird HTML only",
          html('<html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8">'
               "</head><body><p>{MOVE}</p><p>Thunderbird HTML<br></p><div "
               'class="moz-cite-prefix">On 27/11/2026 12:19, Abalone wrote:<br></div>'
               '<blockquote type="cite" cite="mid:x@y">{HTMLBOARD}</blockquote><div '
               'class="moz-signature">-- <br>Fred</div></body></html>',
               client=THUNDERBIRD),
          "Thunderbird HTML"),
    Shape("yahoo-html-only", "Yahoo HTML only",
          html('<html><head></head><body><div class="ydp3 yahoo-style-wrap" '
               'style="font-family:Helvetica"><div></div><div dir="ltr" data-setdir="false">'
               '{MOVE}</div><div dir="ltr">Yahoo HTML</div></div><div id="ydp_yahoo_quoted" '
               'class="yahoo_quoted"><div style="font-family:Helvetica"><div>On Friday, '
               "November 27, 2026 at 12:19:01 PM GMT+1, Abalone &lt;{ADDR}&gt; wrote:</div><div>"
               "<br></div><div><br></div><div><div>{HTMLBOARD}</div></div></div></div></body>"
               "</html>"),
          "Yahoo HTML"),
    Shape("gmail-html-external-banner", "Gmail for Workspace HTML, an [EXTERNAL] paragraph",
          html(gmail_markup('<p style="color:red">[EXTERNAL] This email originated from outside '
                            "the organization.</p><div>{MOVE}</div><div>Under the banner</div>")),
          "Under the banner"),
    Shape("html-greeting-nbsp-move", "HTML: greeting, then the move with &nbsp; inside",
          html(gmail_markup("<div>Hi Wilma,</div><div><br></div><div>a1-c3,&nbsp;d4</div><div>"
                            "<br></div><div>Cheers</div>")),
          "Hi Wilma,\n\nCheers"),
    Shape("html-sent-from-iphone-div", "iOS HTML, Sent from my iPhone as a div",
          html('<html><body dir="auto">{MOVE}<div>Nice<br id="lineBreakAtBeginningOfSignature">'
               '<div dir="ltr">Sent from my iPhone</div><div dir="ltr"><br><blockquote '
               'type="cite">On 27 Nov 2026, at 12:19, Abalone &lt;{ADDR}&gt; wrote:<br><br>'
               '</blockquote></div><blockquote type="cite"><div dir="ltr">{HTMLBOARD}</div>'
               "</blockquote></div></body></html>",
               client=IPHONE),
          "Nice"),
    Shape("outlook-html-classification-header", "Outlook HTML only, MSIP label paragraph",
          html("<html><body><p "
               'style="font-family:Arial;font-size:10pt;color:#0000FF;margin:15pt;" '
               'align="Left">Classification: Internal<br></p><br><div><div class="WordSection1">'
               '<p class="MsoNormal">{MOVE}<o:p></o:p></p><p class="MsoNormal">Labelled<o:p>'
               '</o:p></p><div><div style="border:none;border-top:solid #E1E1E1 1.0pt"><p '
               'class="MsoNormal"><b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday<br>'
               "<b>To:</b> Fred<br><b>Subject:</b> {SUBJECT}</p></div></div>{HTMLBOARD}</div>"
               "</div></body></html>",
               client=OUTLOOK),
          "Labelled"),
    Shape("alternative-text-lacks-new-text-outlook", "Outlook: text part holds only the copy",
          alternative("\n\nFrom: Abalone <{ADDR}>\nSent: Friday\nTo: Fred\nSubject: {SUBJECT}\n"
                      "\n{BOARD}\n",
                      outlook_markup("{MOVE}<br>Only in HTML",
                                     "<b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> "
                                     "Friday<br><b>To:</b> Fred<br><b>Subject:</b> {SUBJECT}")),
          "Only in HTML"),
    Shape("german-greeting-banner-html", "HTML: Hallo, then the move",
          html("<div>Hallo Wilma,</div><div>{MOVE}</div><div>Viel Glück</div><div "
               'class="gmail_quote">Am Fr., 27. Nov. 2026 um 12:19 Uhr schrieb Abalone '
               '&lt;{ADDR}&gt;:<blockquote class="gmail_quote">{HTMLBOARD}</blockquote></div>'),
          "Hallo Wilma,\nViel Glück"),
    Shape("plain-move-in-bold-stars", "K-9 plain text, *move*",
          plain("*{MOVE}*\n\nStars\n\nAm 27. November 2026 12:19:01 MEZ schrieb Abalone <{ADDR}>"
                ":\n{QUOTED}\n"),
          "Stars"),
    Shape("plain-greeting-and-sent-from", "Android: Hi, move, Sent from my Galaxy",
          plain("Hi Wilma,\n{MOVE}\n\n\nSent from my Galaxy\n\n\n-------- Original message "
                "--------\nFrom: Abalone <{ADDR}> \nDate: 27/11/2026 12:19 (GMT+01:00) \nTo: "
                "fred@example.org \nSubject: {SUBJECT} \n\n{BOARD}\n"),
          "Hi Wilma,"),
    Shape("ios-default-folded-headers", "discourse spec/fixtures/emails/ios_default.eml",
          lambda mail: mail.fill(
              "From: Fred Flintstone <fred@example.org>\r\nContent-Type: multipart/alternative;"
              "\r\n  boundary=Apple-Mail-B41C7F8E-3639\r\nContent-Transfer-Encoding: 7bit\r\n"
              "Mime-Version: 1.0 (1.0)\r\nSubject: Re: {SUBJECT}\r\nDate: Fri, 27 Nov 2026 "
              "12:41:41 +0100\r\nTo: Abalone <{ADDR}>\r\nX-Mailer: iPhone Mail (12B436)\r\n"
              "\r\n\r\n--Apple-Mail-B41C7F8E-3639\r\nContent-Type: text/plain;\r\n  charset="
              "us-ascii\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n{MOVE}\r\nWell "
              "play=\r\ned=20\r\n\r\n\r\n> On Nov 27, 2026, at 12:19 PM, Abalone <{ADDR}> wr=\r\n"
              "ote:\r\n>=20\r\n>=20\r\n> \tSummary of Abalone Board 1\r\n>=20\r\n\r\n"
              "--Apple-Mail-B41C7F8E-3639\r\nContent-Type: text/html;\r\n  charset=utf-8\r\n"
              "Content-Transfer-Encoding: 7bit\r\n\r\n<html><body dir=\"auto\"><div>{MOVE}"
              "</div><div>Well played&nbsp;</div><div><br>On Nov 27, 2026, at 12:19 PM, Abalone "
              "&lt;{ADDR}&gt; wrote:<br><br></div><blockquote type=\"cite\">{HTMLBOARD}"
              "</blockquote></body></html>\r\n--Apple-Mail-B41C7F8E-3639--\r\n").encode(),
          "Well played"),
    Shape("android-gmail-attribution-without-blank", "discourse android_gmail.eml",
          lambda mail: whole_mail(
              _headers(mail, "Re: {SUBJECT}", (), "utf-8"),
              multipart("alternative", "089e0149cfa485c6630508f173df",
                        bare_part("text/plain; charset=UTF-8", mail.fill(
                            "{MOVE}\nFrom my phone\nOn Nov 27, 2026 12:19 PM, \"Abalone\" "
                            "<{ADDR}> wrote:\n\n{QUOTED}\n")),
                        text_part("html", mail.fill(
                            '<p dir="ltr">{MOVE}</p>\n<p dir="ltr">From my phone</p>\n<div '
                            'class="gmail_quote">On Nov 27, 2026 12:19 PM, &quot;Abalone&quot; '
                            '&lt;{ADDR}&gt; wrote:<br type="attribution"><blockquote class='
                            '"gmail_quote">{HTMLBOARD}</blockquote></div>\n')))),
          "From my phone"),
    Shape("exchange-message-reply-section", "discourse exchange_html_reply.eml",
          html('<div>\n  <div name="messageReplySection">\n    <p>{MOVE}</p>\n    <p>Exchange '
               '<b>body</b></p>\n  </div>\n</div>\n<div name="messageReplyHeader"><b>From:</b> '
               'Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday</div>{HTMLBOARD}'),
          "Exchange body"),
    Shape("iphone-vietnamese", "iPhone Mail (vi)",
          plain("{MOVE}\nChơi hay lắm\n\nGửi từ iPhone của tôi\n\n> Vào 27 thg 11, 2026, lúc 12:19, "
                "Abalone <{ADDR}> đã viết:\n> \n{QUOTED}\n", client=IPHONE),
          "Chơi hay lắm"),
    Shape("iphone-traditional-chinese-big5", "iPhone Mail (zh-TW)",
          plain("{MOVE}\n\n從我的 iPhone 傳送\n\n> Abalone <{ADDR}> 於 2026年11月27日 下午12:19 寫道："
                "\n> \n{QUOTED}\n", charset="big5", transfer="base64", client=IPHONE),
          ""),
    Shape("iphone-korean-euc-kr", "iPhone Mail (ko)",
          plain("{MOVE}\n좋은 게임\n\n나의 iPhone에서 보냄\n\n2026. 11. 27. 오후 12:19, Abalone <{ADDR}> "
                "작성:\n\n{QUOTED}\n", charset="euc-kr", transfer="base64", client=IPHONE),
          "좋은 게임"),
    Shape("iphone-romanian", "iPhone Mail (ro)",
          plain("{MOVE}\nMult noroc\n\nTrimis de pe iPhone-ul meu\n\n> Pe 27 nov. 2026, la 12:19, "
                "Abalone <{ADDR}> a scris:\n> \n{QUOTED}\n", charset="iso-8859-2", client=IPHONE),
          "Mult noroc"),
    Shape("spark-indonesian", "Spark and Android (id)",
          plain("{MOVE}\n\nSent with Spark\nDikirim dari iPhone saya\n\nPada 27 Nov 2026 12.19 "
                "+0100, Abalone <{ADDR}>, menulis:\n{QUOTED}\n"),
          ""),
    Shape("outlook-slovenian-od", "email_reply_trimmer embedded_email_* (sl), Outlook sl",
          plain("{MOVE}\nVeliko sreče\n\nOd: Abalone <{ADDR}>\nPoslano: petek, 27. november 2026 "
                "12:19\nZa: Fred\nZadeva: {SUBJECT}\n\n{BOARD}\n", charset="windows-1250",
                subject="RE: {SUBJECT}", client=OUTLOOK),
          "Veliko sreče"),
    Shape("outlook-catalan-de", "Outlook ca",
          plain("{MOVE}\nBona sort\n\nDe: Abalone <{ADDR}>\nEnviat el: divendres, 27 de novembre "
                "de 2026 12:19\nPer a: Fred\nAssumpte: {SUBJECT}\n\n{BOARD}\n",
                charset="iso-8859-1", subject="RE: {SUBJECT}", client=OUTLOOK),
          "Bona sort"),
    Shape("outlook-hebrew-windows-1255", "Outlook he",
          plain("{MOVE}\nבהצלחה לך\n\nמאת: Abalone <{ADDR}>\nנשלח: יום שישי 27 נובמבר 2026 12:19\n"
                "אל: Fred\nנושא: {SUBJECT}\n\n{BOARD}\n", charset="windows-1255",
                subject="RE: {SUBJECT}", client=OUTLOOK),
          "בהצלחה לך"),
    Shape("outlook-greek-windows-1253", "Outlook el",
          plain("{MOVE}\nΣειρά σου\n\nΑπό: Abalone\nΣτάλθηκε: Παρασκευή, 27 Νοεμβρίου 2026 12:19 "
                "μμ\nΠρος: Fred\nΘέμα: {SUBJECT}\n\n{BOARD}\n", charset="windows-1253",
                subject="ΑΠ: {SUBJECT}", client=OUTLOOK),
          "Σειρά σου"),
    Shape("gmail-turkish-name-first-wrapped", "crisp-oss email_gmail_split_line_from (tr)",
          plain("{MOVE}\nSıra sende\n\nAbalone\n<{ADDR}>, 27 Kas 2026 Cum, 12:19 tarihinde şunu "
                "yazdı:\n\n{QUOTED}\n", charset="iso-8859-9", transfer="base64"),
          "Sıra sende"),
    Shape("gmail-chinese-name-first-wrapped", "Gmail zh-CN, the address wrapped",
          plain("{MOVE}\n该你了\n\nAbalone\n<{ADDR}> 于2026年11月27日周五 12:19写道：\n\n{QUOTED}\n",
                charset="gb2312", transfer="base64"),
          "该你了"),
    Shape("horde-zitat-von-wrapped", "Horde IMP (de), the address wrapped",
          plain("{MOVE}\nGrüße\n\nZitat von Abalone\n<{ADDR}>:\n\n{QUOTED}\n",
                charset="iso-8859-1", client=(("User-Agent", "Horde Application Framework 5"),)),
          "Grüße"),
    Shape("banner-internal-use-only-plain", "Microsoft Purview header marking as plain text",
          alternative("Internal Use Only\n\n{MOVE}\nMarked\n\nFrom: Abalone <{ADDR}>\nSent: "
                      "Friday, November 27, 2026 12:19 PM\nTo: Fred\nSubject: {SUBJECT}\n\n"
                      "{BOARD}\n",
                      outlook_markup('Internal Use Only</p><p class="MsoNormal">{MOVE}<br>Marked',
                                     "<b>From:</b> Abalone &lt;{ADDR}&gt;<br><b>Sent:</b> Friday"),
                      charset="windows-1252", client=OUTLOOK),
          "Marked"),
    Shape("banner-spanish-precaucion", "Exchange external-sender banner (es)",
          plain("PRECAUCIÓN: Este correo electrónico se originó fuera de la organización. No haga "
                "clic en vínculos ni abra archivos adjuntos.\n\n{MOVE}\nCon aviso\n\nDe: Abalone "
                "<{ADDR}>\nEnviado: viernes, 27 de noviembre de 2026 12:19\nPara: Fred\nAsunto: "
                "{SUBJECT}\n\n{BOARD}\n", charset="iso-8859-1", subject="RE: {SUBJECT}",
                client=OUTLOOK),
          "Con aviso"),
    Shape("banner-ext-tag-and-confidential-footer", "[EXT] tag above, a label line below",
          plain("[EXT]\n{MOVE}\nTagged\n\nHighly Confidential\n\nOn Fri, Nov 27, 2026 at 12:19 PM "
                "Abalone <{ADDR}> wrote:\n\n{QUOTED}\n"),
          "Tagged"),
    Shape("greeting-chinese-fullwidth-comma", "top posting with a greeting (zh), QQ Mail",
          plain("你好，\n\n{MOVE}\n\n祝好\n\n------------------ 原始邮件 ------------------\n发件人: "
                '"Abalone"<{ADDR}>;\n发送时间: 2026年11月27日(星期五) 中午12:19\n收件人: "Fred"'
                "<fred@example.org>;\n主题: {SUBJECT}\n\n{BOARD}\n", charset="gb18030",
                transfer="base64"),
          "你好，\n\n祝好"),
    Shape("greeting-name-and-colon", "top posting with the name and a colon",
          alternative("Wilma:\n\n{MOVE}\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <{ADDR}> "
                      "wrote:\n\n{QUOTED}\n",
                      gmail_markup("Wilma:<div><br></div><div>{MOVE}</div>")),
          "Wilma:"),
    Shape("greeting-arabic", "top posting with a greeting (ar), Gmail",
          plain("مرحبا\n{MOVE}\n\nفي الجمعة، 27 نوفمبر 2026 في 12:19 م، كتب Abalone <{ADDR}>:\n\n"
                "{QUOTED}\n", charset="windows-1256"),
          "مرحبا"),
    Shape("subject-move-after-a-dash", "the move in the Subject after a dash, Outlook copy",
          plain("\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, 2026 12:19 PM\nTo: Fred\n"
                "Subject: {SUBJECT}\n\n{BOARD}\n", subject="RE: {SUBJECT} - {MOVE}", client=OUTLOOK),
          ""),
    Shape("subject-move-polish-prefix", "the move in the Subject under Gmail's Odp: (pl)",
          alternative("\npt., 27 lis 2026 o 12:19 Abalone <{ADDR}> napisał(a):\n\n{QUOTED}\n",
                      gmail_markup("<br>", "pt., 27 lis 2026 o 12:19 Abalone &lt;{ADDR}&gt; "
                                   "napisał(a):"),
                      subject="Odp: {SUBJECT} {MOVE}"),
          ""),
    Shape("subject-move-external-tag", "the move in the Subject behind an [EXTERNAL] tag",
          plain("Sent from my iPhone\n\n> On 27 Nov 2026, at 12:19, Abalone <{ADDR}> wrote:\n> \n"
                "{QUOTED}\n", subject="[EXTERNAL] Re: {SUBJECT} ({MOVE})", client=IPHONE),
          ""),
    Shape("outlook-autoformat-en-dash", "Outlook AutoFormat: a typed ' - ' made an en dash",
          alternative("a1 – c3, d4\nDash\n\nFrom: Abalone <{ADDR}>\nSent: Friday, November 27, "
                      "2026 12:19 PM\nTo: Fred\nSubject: {SUBJECT}\n\n{BOARD}\n",
                      outlook_markup("a1 – c3, d4<br>Dash", "<b>From:</b> Abalone &lt;{ADDR}&gt;"
                                     "<br><b>Sent:</b> Friday"),
                      charset="windows-1252", client=OUTLOOK),
          "Dash"),
    Shape("japanese-full-width-move", "a move typed with a Japanese input method",
          plain("ａ１−ｃ３，ｄ４\nお願いします\n\n2026年11月27日(金) 12:19 Abalone <{ADDR}>:\n\n{QUOTED}\n",
                charset="iso-2022-jp", transfer="7bit"),
          "お願いします"),
    Shape("apple-mail-related-inline-image", "discourse apple_mail_attachment.eml",
          lambda mail: whole_mail(
              _headers(mail, "Re: {SUBJECT}", APPLE, "utf-8"),
              multipart("alternative", "Apple-Mail=_E26F2E97",
                        text_part("plain", mail.fill(
                            "{MOVE}\nPicture below.\n\n<IMG_6625.jpeg>\n\n> On 27 Nov 2026, at "
                            "12:19, Abalone <{ADDR}> wrote:\n> \n{QUOTED}\n")),
                        multipart("related", "Apple-Mail=_43FB3540",
                                  text_part("html", mail.fill(
                                      '<html><body>{MOVE}<div>Picture below.</div><div>&nbsp;'
                                      '<img apple-inline="yes" src="cid:0340C3C3"></div><div>'
                                      '<br><blockquote type="cite">On 27 Nov 2026, at 12:19, '
                                      'Abalone &lt;{ADDR}&gt; wrote:<br><br></blockquote></div>'
                                      '<blockquote type="cite">{HTMLBOARD}</blockquote></body>'
                                      '</html>')),
                                  Part(("Content-Type: image/jpeg; name=\"IMG_6625.jpeg\"",
                                        "Content-Transfer-Encoding: base64",
                                        "Content-Disposition: inline; filename=IMG_6625.jpeg",
                                        "Content-Id: <0340C3C3>"),
                                       b"/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////////////\r\n")))),
          "Picture below."),
    Shape("windows-text-labelled-iso-8859-1", "Outlook Express / Windows: cp1252 bytes "
          "labelled iso-8859-1", plain("{MOVE}\nThat’s it – “nice”\n\n-----Original Message-----\n"
                                        "From: Abalone <{ADDR}>\nSent: Friday\nTo: Fred\nSubject: "
                                        "{SUBJECT}\n\n{BOARD}\n", charset="cp1252",
                                        label="iso-8859-1",
                                        client=(("X-Mailer", "Microsoft Outlook Express 6.00"),)),
          "That’s it – “nice”"),
    Shape("outlook-thai-windows-874", "Outlook th",
          plain("{MOVE}\nโชคดีนะ\n\nจาก: Abalone <{ADDR}>\nส่ง: 27 พฤศจิกายน 2026 12:19\nถึง: Fred\n"
                "เรื่อง: {SUBJECT}\n\n{BOARD}\n", charset="cp874", label="windows-874",
                transfer="base64", client=OUTLOOK),
          "โชคดีนะ"),
    Shape("outlook-korean-ks-c-5601", "Outlook ko (ks_c_5601-1987 is code page 949)",
          plain("{MOVE}\n똠방각하 화이팅\n\n-----Original Message-----\n보낸 사람: Abalone <{ADDR}>\n"
                "보낸 날짜: 2026년 11월 27일 금요일 오후 12:19\n받는 사람: Fred\n제목: {SUBJECT}\n\n"
                "{BOARD}\n", charset="cp949", label="ks_c_5601-1987", transfer="base64",
                client=OUTLOOK),
          "똠방각하 화이팅"),
    Shape("japanese-shift-jis-nec-characters", "Windows mail (ja): cp932 bytes as Shift_JIS",
          plain("{MOVE}\n①手目です\n\n-----Original Message-----\n差出人: Abalone <{ADDR}>\n"
                "件名: {SUBJECT}\n\n{BOARD}\n", charset="cp932", label="shift_jis",
                transfer="base64"),
          "①手目です"),
    Shape("hebrew-iso-8859-8-i", "Thunderbird he, logical-order ISO-8859-8-I",
          plain("{MOVE}\nשלום\n\nAbalone כתב:\n{QUOTED}\n", charset="iso-8859-8",
                label="iso-8859-8-i", transfer="8bit", client=THUNDERBIRD),
          "שלום"),

    Shape("gmx-html-only-name-quote", "GMX/web.de HTML",
          html('<html><head></head><body><div style="font-family: Verdana;font-size: 12.0px;">'
               '<div>{MOVE}</div><div>GMX hier</div><div>&nbsp;<div>&nbsp;<div name="quote" '
               'style="margin:10px 5px 5px 10px; padding: 10px 0 10px 10px; border-left:2px '
               'solid #C3D9E5;"><div style="margin:0 0 10px 0;"><b>Gesendet:</b>&nbsp;Freitag, '
               '27. November 2026 um 12:19 Uhr<br><b>Von:</b>&nbsp;"Abalone" &lt;{ADDR}&gt;<br>'
               "<b>An:</b>&nbsp;fred@example.org<br><b>Betreff:</b>&nbsp;{SUBJECT}</div><div "
               'name="quoted-content">{HTMLBOARD}</div></div></div></div></div></body></html>',
               charset="iso-8859-1"),
          "GMX hier"),
    Shape("mailru-html-only", "Mail.ru HTML",
          html("<HTML><BODY><div>{MOVE}</div><div>Удачи</div><div>&nbsp;</div><blockquote "
               'style="border-left:1px solid #0857A6; margin:10px; padding:0 0 0 10px;">'
               "Пятница, 27 ноября 2026, 12:19 +01:00 от Abalone &lt;{ADDR}&gt;:<br>&nbsp;<div "
               'id=""><div class="js-helper js-readmsg-msg">{HTMLBOARD}</div></div></blockquote>'
               "</BODY></HTML>"),
          "Удачи"),
    Shape("yandex-html-only", "Yandex HTML",
          html("<div>{MOVE}</div><div>Удачи</div><div>&nbsp;</div><div>27.11.2026, 12:19, "
               '"Abalone" &lt;{ADDR}&gt;:</div><blockquote>{HTMLBOARD}</blockquote>'),
          "Удачи"),
    Shape("zoho-html-only", "Zoho HTML",
          html('<html><body><div style="font-family: Verdana"><div>{MOVE}<br></div><div>Zoho '
               'here<br></div><div id="Zm-_Id_-Sgn"><div>Regards,<br>Fred</div></div><div '
               'class="zmail_extra_hr" style="border-top: 1px solid rgb(204, 204, 204)"></div>'
               '<div class="zmail_extra"><div><br></div><div id="Zm-_Id_-Sgn1">---- On Fri, 27 '
               "Nov 2026 12:19:01 +0100 <b>Abalone &lt;{ADDR}&gt;</b> wrote ---<br></div>"
               '<blockquote style="border-left: 1px solid rgb(204, 204, 204)">'
               "{HTMLBOARD}</blockquote></div></div></body></html>"),
          "Zoho here"),
    Shape("naver-html-only", "Naver HTML (ko)",
          html("<div>{MOVE}</div><div>화이팅</div><br><div>-----Original Message-----<br><b>"
               'From:</b> "Abalone"&lt;{ADDR}&gt;<br><b>To:</b> '
               '"Fred"&lt;fred@example.org&gt;;<br><b>Cc:</b><br><b>Sent:</b> 2026-11-27 (금) '
               "12:19:01 (GMT+01:00)<br><b>Subject:</b> {SUBJECT}<br><br>{HTMLBOARD}</div>",
               charset="euc-kr",
               transfer="base64"),
          "화이팅"),
    Shape("outlook-new-mac-reference", "new Outlook for Mac HTML",
          html('<html><body><div class="elementToProof">{MOVE}</div><div class="elementToProof">'
               'New Mac</div><div id="mail-editor-reference-message-container"><div '
               'class="ms-outlook-mobile-reference-message skipProofing"><b>From: </b>Abalone '
               "&lt;{ADDR}&gt;<br><b>Date: </b>Friday, 27 November 2026 at 12:19<br><b>To: </b>"
               "Fred<br><b>Subject: </b>{SUBJECT}<br><br></div>{HTMLBOARD}</div></body></html>"),
          "New Mac"),
    Shape("outlook-ios-html", "Outlook for iOS HTML",
          html('<html><body><div dir="auto">{MOVE}</div><div dir="auto">iOS</div><div '
               'id="ms-outlook-mobile-signature" dir="auto">Get <a href="https://aka.ms/o0ukef">'
               'Outlook for iOS</a></div><div id="ms-outlook-mobile-body-separator-line" '
               'dir="auto"><hr style="display:inline-block;width:98%"></div><div '
               'id="divRplyFwdMsg" dir="ltr"><font face="Calibri"><b>From:</b> Abalone '
               "&lt;{ADDR}&gt;<br><b>Sent:</b> Friday, November 27, 2026 12:19:01 PM<br><b>"
               "To:</b> Fred<br><b>Subject:</b> {SUBJECT}</font><div>&nbsp;</div></div>"
               "{HTMLBOARD}</body></html>"),
          "iOS"),
    Shape("samsung-html", "Samsung Email HTML",
          html('<html><body><div dir="auto">{MOVE}</div><div dir="auto">Galaxy</div><div '
               'dir="auto"><br></div><div id="composer_signature" dir="auto"><div '
               'style="font-size:85%;color:#575757" dir="auto">Sent from my Galaxy</div></div>'
               '<div dir="auto"><br></div><div align="left" dir="auto" '
               'style="font-size:100%;color:#000000"><div>-------- Original message '
               "--------</div><div>From: Abalone &lt;{ADDR}&gt; </div><div>Date: 27/11/2026 "
               "12:19 (GMT+01:00) </div><div>To: fred@example.org </div><div>Subject: {SUBJECT} "
               "</div><div><br></div></div>{HTMLBOARD}</body></html>"),
          "Galaxy"),
    Shape("html-copy-without-header", "Outlook HTML: the board copied under a rule, no header",
          html('<div>{MOVE}</div><div>Mine</div><hr>{HTMLBOARD}', client=OUTLOOK),
          "Mine"),
]
SHAPES += EXTRA


#: A game's first plies (legal: the game takes each), and wilma's comment on hers,
#: which names a move: a board mail in the middle of a game quotes both.
OPENING = ("a1-c3,d4", "g5,g4", "a2-c4,d5")
WILMA_COMMENT = "Your move, Fred!\nc3-c5,d4 would be brave"
MID_GAME = ("gmail-alternative-qp", "outlook-desktop-windows-1252", "outlook-web-html-only-es",
            "apple-html-only-blockquote-cite", "html-copy-without-header",
            "yahoo-web-yahoo-quoted", "thunderbird-flowed-moz-cite", "iphone-dutch-het-volgende",
            "outlook-msonormal-html-only", "subject-move-polish-prefix")


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    folder: Path = tmp_path_factory.mktemp("client-mails")
    # A game a case, all started by fred against wilma: more than a day's challenges.
    made = make_harness(f"sqlite:///{folder / 'abalone.sqlite3'}", folder,
                        challenges_per_sender_daily=len(SHAPES) + len(MID_GAME) + 1,
                        challenges_per_player_daily=len(SHAPES) + len(MID_GAME) + 1)
    made.signup("fred", "fred-pw", FRED)
    made.signup("wilma", "wilma-pw", WILMA)
    yield made
    made.database.dispose()


def _board_mail(harness: Harness) -> BoardMail:
    fred_mail = harness.challenge("fred", "wilma")["fred"]
    markup = fred_mail.html
    assert markup is not None and fred_mail.reply_to is not None
    body = re.search(r"<body[^>]*>(.*)</body>", markup, re.DOTALL)
    assert body is not None
    return BoardMail(int(fred_mail.subject.split()[3]), parseaddr(fred_mail.reply_to)[1],
                     fred_mail.subject, str(fred_mail.message["Message-ID"]), fred_mail.body,
                     body.group(1))


def _ply(harness: Harness, board: int) -> int:
    with harness.database.read() as session:
        return int(session.scalars(select(Game.ply).where(Game.number == board)).one())


def _shown_comment(mail: Sent) -> str:
    """The comment in a board mail ("" when it carries none)."""
    parts = mail.body.replace("\r\n", "\n").split("fred writes:\n", 1)
    if len(parts) == 1:
        return ""
    return parts[1].split("\n" + "*" * 72, 1)[0]


def test_the_table_is_large_and_its_names_unique() -> None:
    assert len(SHAPES) >= 40
    assert len({shape.name for shape in SHAPES}) == len(SHAPES)


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
def test_a_client_mail_plays_the_move_and_shows_the_comment(harness: Harness,
                                                            shape: Shape) -> None:
    board_mail = _board_mail(harness)
    sent = harness.deliver(FRED, board_mail.address, shape.build(board_mail))
    to_wilma = [mail for mail in sent if mail.to == WILMA]
    assert _ply(harness, board_mail.board) == 1, [(m.to, m.subject, m.body[:600]) for m in sent]
    assert len(to_wilma) == 1 and to_wilma[0].subject.startswith(
        f"Abalone Board {board_mail.board} wilma"), [(m.to, m.subject) for m in sent]
    played = re.search(r"^ *1\. (\S+)", to_wilma[0].body, re.MULTILINE)
    assert played is not None and played.group(1) == shape.move
    assert _shown_comment(to_wilma[0]) == shape.comment
    assert to_wilma[0].subject.endswith("**") == bool(shape.comment)


def _mid_game_board_mail(harness: Harness) -> BoardMail:
    """fred's board mail after the first two plies, with wilma's comment in it."""
    first = _board_mail(harness)
    sent = harness.mail(FRED, f"Re: {first.subject}", OPENING[0] + "\n", to=first.address)
    to_wilma = next(mail for mail in sent if mail.to == WILMA)
    assert to_wilma.reply_to is not None
    sent = harness.mail(WILMA, f"Re: {to_wilma.subject}", f"{OPENING[1]}\n{WILMA_COMMENT}\n",
                        to=parseaddr(to_wilma.reply_to)[1])
    to_fred = next(mail for mail in sent if mail.to == FRED)
    assert to_fred.reply_to is not None and to_fred.html is not None
    assert "c3-c5,d4 would be brave" in to_fred.body
    body = re.search(r"<body[^>]*>(.*)</body>", to_fred.html, re.DOTALL)
    assert body is not None
    return BoardMail(first.board, parseaddr(to_fred.reply_to)[1], to_fred.subject,
                     str(to_fred.message["Message-ID"]), to_fred.body, body.group(1), OPENING[2])


@pytest.mark.parametrize("name", MID_GAME)
def test_a_reply_in_the_middle_of_a_game_plays_its_move_not_a_quoted_one(
        harness: Harness, name: str) -> None:
    """The board mail quotes the move list and wilma's comment, which names a move:
    only the move fred wrote is played, and only his comment shown."""
    shape = next(shape for shape in SHAPES if shape.name == name)
    board_mail = _mid_game_board_mail(harness)
    sent = harness.deliver(FRED, board_mail.address, shape.build(board_mail))
    assert _ply(harness, board_mail.board) == 3, [(m.to, m.subject, m.body[:600]) for m in sent]
    to_wilma = [mail for mail in sent if mail.to == WILMA]
    assert len(to_wilma) == 1
    played = re.search(r"^ *3\. (\S+)", to_wilma[0].body, re.MULTILINE)
    assert played is not None and played.group(1) == OPENING[2]
    assert _shown_comment(to_wilma[0]) == shape.comment
