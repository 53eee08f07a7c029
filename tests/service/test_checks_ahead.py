"""The argon2 checks started ahead (``Worker._look_ahead``): mails that wait together
have their passwords checked in a pool of threads while the worker goes on, within
the throttle's budget."""

from __future__ import annotations

import itertools

from .harness import Harness

_ids = itertools.count()

def _store(harness: Harness, sender: str, subject: str) -> None:
    from email.message import EmailMessage

    from abalone_pbm.mail import intake

    message = EmailMessage()
    message["From"], message["To"] = sender, harness.settings.address
    message["Subject"] = subject
    message["Message-ID"] = f"<ahead{next(_ids)}@players.test>"
    message.set_content("\n")
    with harness.database.write() as session:
        intake.store_inbox(session, message.as_bytes(), sender, [harness.settings.address],
                           harness.clock.now())


def _counting_argon2(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    from abalone_pbm.service import passwords

    runs: list[str] = []
    real = passwords._argon2_check

    def counted(stored_hash: str, password: str) -> bool:
        runs.append(password)
        return real(stored_hash, password)

    monkeypatch.setattr(passwords, "_argon2_check", counted)
    return runs


def test_guesses_waiting_together_get_no_more_checks_than_one_by_one(
        harness, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Mails that wait together have their checks started ahead, in threads; their
    wrong passwords are not counted yet, so the throttle's budget is shared: twenty
    guesses get as many argon2 runs as when each mail came alone."""
    harness.signup("fred", "Right-Pw")
    guesser = "guesser@evil.test"
    for n in range(20):
        _store(harness, guesser, f"vacation fred guess{n} on")
    runs = _counting_argon2(monkeypatch)
    sent = harness.run()
    answers = [s.body for s in sent if s.to == guesser]
    assert len(answers) == 20
    assert sum("Invalid password" in body for body in answers) == 3
    assert sum("Too many wrong passwords" in body for body in answers) == 17
    # The three that were checked, and at most one more checked ahead (the
    # throttle's budget: the free failures and one).
    assert 3 <= len(runs) <= 4, runs


def test_first_checks_of_mails_waiting_together_are_made_at_once(
        harness, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Players who all send their first command at once: with the first mail's check
    the worker starts those of the next waiting mails (each once), instead of one
    check before each transaction; the wrong one among them is still refused."""
    from abalone_pbm.service import passwords

    players = [f"p{n}" for n in range(6)]
    for userid in players:
        harness.signup(userid, f"Pw-{userid}")
    batches: list[int] = []
    real_check = passwords.check_soon

    def check(pairs):  # type: ignore[no-untyped-def]
        pairs = list(pairs)
        batches.append(len(pairs))
        return real_check(pairs)

    monkeypatch.setattr(passwords, "check_soon", check)
    runs = _counting_argon2(monkeypatch)
    for userid in players:
        password = "wrong" if userid == "p3" else f"Pw-{userid}"
        _store(harness, f"{userid}@example.org", f"vacation {userid} {password} on")
    sent = harness.run()
    assert batches == [1, 5], batches  # the first mail's check, then five ahead
    assert len(runs) == 6  # each password checked once
    for userid in players:
        body = "\n".join(s.body for s in sent if s.to == f"{userid}@example.org")
        if userid == "p3":
            assert "Invalid password" in body and "Vacation is on" not in body
        else:
            assert "Vacation is on" in body, (userid, body)
