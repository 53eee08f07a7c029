"""HTML mail read as text (mail.html_text): what each mail program marks as quoted or as
its signature is never the player's new text; hostile markup at the size limit gives
sensible text and no error (its cost is measured by benchmarks/mail_cost.py)."""

from __future__ import annotations

import pytest

from abalone_pbm.mail.html_text import MAX_DEPTH, MAX_QUOTE_PREFIX, html_to_text
from abalone_pbm.protocol.reply import ReplyAction, parse_reply_body

#: The size limit of a mail (DESIGN 2.4).
LIMIT = 256 * 1024

BOARD = "Summary of Abalone Board 101<br>It is fred's move<br>resign"


def new_text(text: str) -> list[str]:
    """The lines a reader takes as new: not quoted, before a signature separator."""
    lines: list[str] = []
    for line in text.splitlines():
        if line == "-- ":
            break
        if line.strip() and not line.startswith(">"):
            lines.append(line)
    return lines


def quoted(text: str) -> list[str]:
    return [line.lstrip("> ") for line in text.splitlines() if line.startswith(">")]


def signature(text: str) -> list[str]:
    lines = text.splitlines()
    if "-- " not in lines:
        return []
    after = lines[lines.index("-- ") + 1 :]
    return [line for line in after if line.strip() and not line.startswith(">")]


# -- conventions ------------------------------------------------------------------------


def test_blocks_end_lines_and_paragraphs_leave_a_blank_line() -> None:
    text = html_to_text(
        "<div>c3-c5,d4</div><div>nice <b>push</b></div><div><br></div><div>again</div>"
        "<p>one</p><p>two</p><ul><li>a<li>b</ul>x<br>y"
    )
    assert text == "c3-c5,d4\nnice push\n\nagain\n\none\n\ntwo\n\na\nb\n\nx\ny\n"


def test_entities_spaces_and_invisible_characters() -> None:
    # A zero-width space stands between words: a blank (a move allows blanks); a
    # zero-width joiner stands inside one: gone.
    text = html_to_text("c3&#8203;-c5,&nbsp;d4 &amp; gr&uuml;&szlig;e\u200d&#xA0;&lt;x&gt;")
    assert text == "c3 -c5, d4 & grüße <x>\n"


def test_a_command_glued_with_invisible_blanks_keeps_its_words() -> None:
    """Byte order marks between a command's words are blanks, so the words (and the
    password among them) stay apart for the command reader and for masking."""
    text = html_to_text("change\ufeffaddress\ufeffwilma\ufeffPw3zQx3811\u2060x@y.org")
    assert text.split() == ["change", "address", "wilma", "Pw3zQx3811", "x@y.org"]


def test_a_numeric_reference_of_thousands_of_digits_is_one_replacement() -> None:
    assert html_to_text("a&#" + "9" * 5000 + ";b&#x" + "f" * 5000 + ";c") == "a\ufffdb\ufffdc\n"


def test_script_style_head_title_and_comments_are_not_text() -> None:
    text = html_to_text(
        "<html><head><title>t</title><style>p{color:red}</style>"
        "<script>if (a < b) { x = '</div>' }</script></head>"
        "<body><!-- c3-c5 --><template><p>e1-e2</p></template>resign</body></html>"
    )
    assert text == "resign\n"


def test_an_unclosed_head_ends_where_the_body_begins() -> None:
    assert html_to_text("<head><meta charset=utf-8><div>resign</div>") == "resign\n"
    assert html_to_text("<head><title>x</title>resign") == "resign\n"


def test_preformatted_text_is_kept_as_written() -> None:
    text = html_to_text("<pre>\n  A- o o\n B- x  x\n</pre><p>resign</p>")
    assert text == "  A- o o\n B- x  x\n\nresign\n"


def test_table_cells_are_apart_and_rows_are_lines() -> None:
    text = html_to_text("<table><tr><td>a<td>b</tr><tr><td>c</td><td>d</td></tr></table>e")
    assert text == "a b\nc d\n\ne\n"


def test_nested_blockquotes_are_nested_quotes() -> None:
    text = html_to_text("new<blockquote>one<blockquote>two</blockquote>back</blockquote>end")
    assert text == "new\n\n> one\n>\n> > two\n>\n> back\n\nend\n"


def test_an_end_tag_does_not_close_past_a_table_cell() -> None:
    text = html_to_text("<blockquote><table><tr><td>a</blockquote>b</td></tr></table>c</blockquote>d")
    assert quoted(text) == ["ab", "", "c"]
    assert new_text(text) == ["d"]


def test_misnested_inline_tags_do_not_pile_up() -> None:
    text = html_to_text("<b><div>x</b></div>" * 2000 + "resign")
    assert new_text(text)[-1] == "resign"
    assert not quoted(text)


# -- mail programs ----------------------------------------------------------------------


def test_gmail_reply_quote_attribution_and_signature() -> None:
    text = html_to_text(
        '<div dir="ltr">c3-c5,d4<div>nice push!</div><div><br></div>'
        '<span class="gmail_signature_prefix">-- </span><br>'
        '<div dir="ltr" class="gmail_signature" data-smartmail="gmail_signature">'
        '<div dir="ltr">Fred Flintstone<div>Bedrock</div></div></div></div><br>'
        '<div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">'
        'On Mon, 3 Mar 2025 at 10:00, &lt;<a href="mailto:abalone@example.org">'
        "abalone@example.org</a>&gt; wrote:<br></div>"
        '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
        'border-left:1px solid rgb(204,204,204);padding-left:1ex">'
        f"{BOARD}<br></blockquote></div>"
    )
    assert new_text(text) == ["c3-c5,d4", "nice push!", "--"]
    assert signature(text) == ["Fred Flintstone", "Bedrock"]
    assert quoted(text)[0].startswith("On Mon, 3 Mar 2025 at 10:00, <abalone@example.org>")
    assert "resign" in quoted(text)
    # One level, as Gmail's text part quotes it: the attribution's container counts.
    assert "> resign" in text.splitlines()
    assert parse_reply_body(text) == ReplyAction("move", "c3-c5,d4", None, "nice push!")


def test_gmail_thread_quotes_nest_one_level_per_reply() -> None:
    text = html_to_text(
        '<div dir="ltr">resign</div><div class="gmail_quote"><div class="gmail_attr">'
        "On Tue, Fred wrote:</div><blockquote class=\"gmail_quote\">c5-c6 "
        '<div class="gmail_quote"><div class="gmail_attr">On Mon, Abalone wrote:</div>'
        '<blockquote class="gmail_quote">Summary of Abalone Board 101</blockquote></div>'
        "</blockquote></div>"
    )
    lines = text.splitlines()
    assert new_text(text) == ["resign"]
    assert "> On Tue, Fred wrote:" in lines and "> c5-c6" in lines
    assert "> > On Mon, Abalone wrote:" in lines
    assert "> > Summary of Abalone Board 101" in lines


def test_gmail_bottom_posted_reply_keeps_the_text_after_the_quote() -> None:
    text = html_to_text(
        '<div class="gmail_quote"><div class="gmail_attr">On Mon, Abalone wrote:</div>'
        f'<blockquote class="gmail_quote">{BOARD}</blockquote></div><div>c3-c5,d4</div>'
    )
    assert new_text(text) == ["c3-c5,d4"]


OUTLOOK_WEB = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    '<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>'
    '</head><body dir="ltr"><div class="elementToProof" style="font-family: Aptos, '
    'Aptos_EmbeddedFont, Calibri, Helvetica, sans-serif; font-size: 12pt;">c3-c5,d4</div>'
    '<div class="elementToProof">Well played</div><div id="Signature"><div>Barney Rubble'
    '</div></div><div id="appendonsend"></div><hr style="display:inline-block;width:98%" '
    'tabindex="-1"><div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" '
    'style="font-size:11pt" color="#000000"><b>From:</b> abalone@example.org &lt;'
    "abalone@example.org&gt;<br><b>Sent:</b> Monday, March 3, 2025 10:00<br><b>To:</b> "
    "Barney<br><b>Subject:</b> Abalone Board 101 barney</font><div>&nbsp;</div></div>"
    f"<div><div>{BOARD}</div></div></body></html>"
)


def test_outlook_web_quotes_everything_after_its_reply_marker() -> None:
    text = html_to_text(OUTLOOK_WEB)
    assert new_text(text) == ["c3-c5,d4", "Well played"]
    assert signature(text) == ["Barney Rubble"]
    assert quoted(text)[:2] == ["From: abalone@example.org <abalone@example.org>",
                                "Sent: Monday, March 3, 2025 10:00"]
    assert quoted(text)[-1] == "resign"


def test_outlook_web_marker_without_appendonsend_and_hotmail_stop_spelling() -> None:
    for marker in ('<div id="divRplyFwdMsg" dir="ltr">', '<hr id="stopSpelling">'):
        text = html_to_text(f"<div>resign</div>{marker}<b>From:</b> x</div>{BOARD}")
        assert new_text(text) == ["resign"]
        assert quoted(text)[-1] == "resign"


OUTLOOK_DESKTOP = (
    '<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:'
    'office:office"><head><meta name=Generator content="Microsoft Word 15 (filtered '
    'medium)"><!--[if gte mso 9]><xml><o:shapedefaults v:ext="edit" spidmax="1026" />'
    "</xml><![endif]--><style><!--\n/* Font Definitions */\n@font-face {font-family:"
    '"Cambria Math";}\np.MsoNormal {margin:0in;}\n--></style></head>'
    '<body lang=EN-US link="#0563C1" vlink="#954F72" style=\'word-wrap:break-word\'>'
    "<div class=WordSection1><p class=MsoNormal>c3-c5,d4<o:p></o:p></p>"
    "<p class=MsoNormal><o:p>&nbsp;</o:p></p><div><div style='border:none;border-top:"
    "solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in'><p class=MsoNormal><b>{FROM}</b> "
    "abalone@example.org &lt;abalone@example.org&gt; <br><b>Sent:</b> Monday, March 3, "
    "2025 10:00 AM<br><b>To:</b> Wilma &lt;wilma@example.net&gt;<br><b>Subject:</b> "
    "Abalone Board 101 wilma<o:p></o:p></p></div></div><p class=MsoNormal><o:p>&nbsp;"
    "</o:p></p><p class=MsoNormal>Summary of Abalone Board 101<o:p></o:p></p>"
    "<p class=MsoNormal>resign<o:p></o:p></p></div></body></html>"
)


@pytest.mark.parametrize("label", ["From:", "Von:", "De&nbsp;:", "差出人:"])
def test_outlook_desktop_header_block_with_a_bold_label_starts_the_quote(label: str) -> None:
    text = html_to_text(OUTLOOK_DESKTOP.replace("{FROM}", label))
    assert new_text(text) == ["c3-c5,d4"]
    assert quoted(text)[-1] == "resign"
    assert quoted(text)[0].startswith(label.replace("&nbsp;", " "))


def test_a_bordered_block_without_a_bold_label_is_not_a_quote() -> None:
    text = html_to_text(
        "<div style='border:none;border-top:solid #E1E1E1 1.0pt'><p>resign</p></div><p>gg</p>"
    )
    assert new_text(text) == ["resign", "gg"]


def test_outlook_mobile_signature_and_original_after_the_marker() -> None:
    text = html_to_text(
        '<html><body><div dir="auto">resign</div><div id="ms-outlook-mobile-signature">'
        '<div><br></div>Get <a href="https://aka.ms/o0ukef">Outlook for iOS</a></div>'
        '<div id="ms-outlook-mobile-body-separator-line" dir="auto"><br></div>'
        '<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" '
        'dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt"><b>From:</b> '
        "abalone@example.org<br><b>Sent:</b> Monday, March 3, 2025 10:00:00 AM</font>"
        f"<div>&nbsp;</div></div>{BOARD}<br></body></html>"
    )
    assert new_text(text) == ["resign"]
    assert signature(text) == ["Get Outlook for iOS"]
    assert quoted(text)[-1] == "resign"


def test_outlook_quoted_inside_another_programs_quote_stays_inside_it() -> None:
    # An Outlook message quoted by Gmail (ids prefixed x_): its marker must not quote
    # the text the player wrote below the quote.
    text = html_to_text(
        '<div>top</div><div class="gmail_quote"><blockquote class="gmail_quote">'
        '<div id="x_divRplyFwdMsg"><b>From:</b> a</div>old</blockquote></div><div>bottom</div>'
    )
    assert new_text(text) == ["top", "bottom"]


def test_yahoo_quoted_container() -> None:
    text = html_to_text(
        '<html><head></head><body><div class="ydp9f3d1f0yahoo-style-wrap" style="font-family:'
        'Helvetica Neue, Helvetica, Arial, sans-serif;font-size:16px;"><div dir="ltr" '
        'data-setdir="false">c3-c5,d4</div></div><div id="ydpa6c3ecb1yahoo_quoted_8411" '
        'class="ydpa6c3ecb1yahoo_quoted"><div style="font-family:\'Helvetica Neue\', Helvetica'
        ', Arial, sans-serif;font-size:13px;color:#26282a;"><div>On Monday, March 3, 2025 at '
        "10:00:00 AM GMT+1, abalone@example.org &lt;abalone@example.org&gt; wrote:</div>"
        f'<div><br></div><div><div dir="ltr">{BOARD}</div></div></div></div></body></html>'
    )
    assert new_text(text) == ["c3-c5,d4"]
    assert quoted(text)[0].startswith("On Monday, March 3, 2025")
    assert quoted(text)[-1] == "resign"


def test_thunderbird_cite_prefix_quote_and_signature() -> None:
    text = html_to_text(
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
        "</head><body><p>c3-c5,d4</p><p>see you<br></p>"
        '<div class="moz-signature">-- <br>Fred</div>'
        '<div class="moz-cite-prefix">On 03.03.25 10:00, abalone@example.org wrote:<br></div>'
        '<blockquote type="cite" cite="mid:123@example.org"><pre class="moz-quote-pre" '
        'wrap="">Summary of Abalone Board 101\nresign\n</pre></blockquote></body></html>'
    )
    assert new_text(text) == ["c3-c5,d4", "see you"]
    assert "Fred" in signature(text)
    assert [line for line in quoted(text) if line] == [
        "On 03.03.25 10:00, abalone@example.org wrote:",
        "Summary of Abalone Board 101",
        "resign",
    ]


def test_apple_mail_and_ios_cite_blockquotes() -> None:
    apple = html_to_text(
        '<html><head></head><body style="overflow-wrap: break-word;">c3-c5,d4'
        '<br id="lineBreakAtBeginningOfMessage"><div><br><blockquote type="cite"><div>On 3 '
        "Mar 2025, at 10:00, abalone@example.org wrote:</div><br class=\"Apple-interchange-"
        f'newline"><div><div>{BOARD}</div></div></blockquote></div><br></body></html>'
    )
    assert new_text(apple) == ["c3-c5,d4"]
    assert quoted(apple)[0] == "On 3 Mar 2025, at 10:00, abalone@example.org wrote:"
    ios = html_to_text(
        '<html><head></head><body dir="auto">resign<div><br id="lineBreakAtBeginningOf'
        'Signature"><div dir="ltr">Sent from my iPhone</div><div dir="ltr"><br><blockquote '
        'type="cite">On 3 Mar 2025, at 10:00, abalone@example.org wrote:<br><br></blockquote>'
        f'</div><blockquote type="cite"><div dir="ltr">{BOARD}</div></blockquote></div>'
        "</body></html>"
    )
    assert new_text(ios) == ["resign", "Sent from my iPhone"]
    assert quoted(ios)[-1] == "resign"


def test_zimbra_divider_quotes_the_rest() -> None:
    text = html_to_text(
        '<html><body><div style="font-family: arial, helvetica, sans-serif; font-size: 12pt;">'
        '<div>c3-c5,d4</div><div><br></div><hr id="zwchr" data-marker="__DIVIDER__"><div '
        'data-marker="__HEADERS__"><b>From: </b>abalone@example.org<br><b>Sent: </b>Monday'
        '<br></div><div><br></div><div data-marker="__QUOTED_TEXT__">'
        f"{BOARD}</div></div></body></html>"
    )
    assert new_text(text) == ["c3-c5,d4"]
    assert quoted(text)[0] == "From: abalone@example.org"
    assert quoted(text)[-1] == "resign"


def test_zoho_extra_container() -> None:
    text = html_to_text(
        '<html><body><div style="font-family: Verdana, Arial; font-size: 10pt;"><div>c3-c5,d4'
        '<br></div><div class="zmail_extra_hr" style="border-top: 1px solid rgb(204, 204, '
        '204); height: 0px;"><br></div><div class="zmail_extra" data-zbluepencil-ignore="true"'
        '><div><br></div><div id="Zm-_Id_-Sgn1">---- On Mon, 03 Mar 2025 10:00:00 +0100 <b>'
        "abalone@example.org</b> wrote ---<br></div><div><br></div><blockquote style=\"margin:"
        f' 0px;\"><div>{BOARD}</div></blockquote></div><div><br></div></div><br></body></html>'
    )
    assert new_text(text) == ["c3-c5,d4"]
    assert quoted(text)[-1] == "resign"


def test_protonmail_quote_and_signature_block() -> None:
    text = html_to_text(
        '<div style="font-family: Arial, sans-serif; font-size: 14px;">c3-c5,d4</div>'
        '<div style="font-family: Arial, sans-serif; font-size: 14px;"><br></div>'
        '<div class="protonmail_signature_block" style="font-family: Arial;"><div class='
        '"protonmail_signature_block-user protonmail_signature_block-empty"></div><div class='
        '"protonmail_signature_block-proton">Sent with <a target="_blank" href="https://'
        'proton.me/">Proton Mail</a> secure email.</div></div><div><br></div><div class='
        '"protonmail_quote">On Monday, March 3rd, 2025 at 10:00, abalone@example.org wrote:'
        f'<br><blockquote class="protonmail_quote" type="cite">{BOARD}</blockquote><br></div>'
    )
    assert new_text(text) == ["c3-c5,d4"]
    assert signature(text) == ["Sent with Proton Mail secure email."]
    assert "> resign" in text.splitlines()


def test_outlook_for_mac_source_body_section() -> None:
    text = html_to_text(
        "<div>resign</div><div><br></div><span id=\"OLK_SRC_BODY_SECTION\"><div><b>From: </b>"
        f"abalone@example.org</div><div>{BOARD}</div></span>"
    )
    assert new_text(text) == ["resign"]
    assert quoted(text)[-1] == "resign"


# -- hostile markup at the size limit -----------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    ["<a ", "</", "<![", "<!--", "<!", "<?", "<a b=\"", "<a b='x>", "<div a", "&#", "&", "<"],
)
def test_unclosed_markup_at_the_size_limit(unit: str) -> None:
    body = "resign<br>" + unit * ((LIMIT - 10) // len(unit))
    text = html_to_text(body)
    assert text.splitlines()[0] == "resign"
    assert len(text) <= len(body) + 1


def test_unclosed_comment_hides_the_rest_as_a_browser_does() -> None:
    assert html_to_text("resign<!-- c3-c5 <p>d4</p>") == "resign\n"
    assert html_to_text("a<!-->b<!--->c<!-- x --!>d") == "abcd\n"


@pytest.mark.parametrize("element", ["div", "blockquote", "span", "table", "li", "p", "pre"])
def test_deep_nesting_at_the_size_limit(element: str) -> None:
    depth = LIMIT // (len(element) * 2 + 5) - 10
    body = f"<{element}>" * depth + "deep" + f"</{element}>" * depth + "<div>resign</div>"
    lines = html_to_text(body).splitlines()
    assert lines[-1] == "resign"
    deep = [line for line in lines if line.endswith("deep")]
    assert len(deep) == 1
    if element in ("div", "blockquote", "table"):  # (<li>, <p> end their open sibling)
        # Deeper than followed: read as quoted, never as new text.
        assert deep[0].startswith(">")
        assert deep[0].count(">") <= MAX_QUOTE_PREFIX


def test_text_just_within_the_followed_depth_is_new_text() -> None:
    depth = MAX_DEPTH - 1
    lines = html_to_text("<div>" * depth + "c3-c5" + "</div>" * depth).splitlines()
    assert lines == ["c3-c5"]


def test_one_tag_with_tens_of_thousands_of_attributes() -> None:
    attributes = "".join(f" a{i}=1" for i in range(LIMIT // 8))
    assert html_to_text(f"<div{attributes} class=gmail_quote>old</div>resign") == "> old\n\nresign\n"


@pytest.mark.parametrize(
    "unit", ["<b>x</p>", "<p>", "<li>x", "<td>x", "<tr>", "<br>", "x<br>", "<b><i>", "<font>x</div>",
             "<table>", "<a><a>", "<blockquote>x</div>", "<head>x", "<script>", "<pre>"],
)
def test_repeated_shapes_at_the_size_limit_give_bounded_text(unit: str) -> None:
    body = "c3-c5<br>" + unit * ((LIMIT - 9) // len(unit))
    text = html_to_text(body)
    assert text.splitlines()[0] in ("c3-c5", "> c3-c5")
    # The prefix of each line is bounded, so the text is a small multiple of the markup.
    assert len(text) <= 4 * len(body)
