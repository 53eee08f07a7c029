"""Command handlers, one function per command, grouped by what the user does.

Each handler takes the mail's :class:`~abalone_pbm.service.context.MailContext` and the
parsed command; it loads what it needs, checks, acts and queues its mails.  The worker
commits; a :class:`~abalone_pbm.service.context.CommandError` undoes everything the
command did.  ``mailroom`` maps each command class to its handler.
"""
