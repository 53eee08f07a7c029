"""The mail edge of the server (DESIGN §4).

- ``listener``: SMTP/LMTP intake (aiosmtpd); stores each mail before answering 250.
- ``intake``: storing a mail in the inbox (listener and ``abalone-pbm process``).
- ``decoding``: the text of a received mail (charsets, format=flowed, HTML).
- ``guards``: mail that must not be answered (auto-replies, lists, bounces, loops).
- ``compose``: the server's outgoing mail, one recipient each.
- ``sender``: delivers the outbox to the relay or a Maildir, with retries.

The worker that processes the inbox is ``abalone_pbm.worker``; ``abalone_pbm.server``
runs everything in one process; ``abalone_pbm.cli.server`` holds the
``serve``, ``process``, ``work`` and ``send`` sub-commands.
"""
