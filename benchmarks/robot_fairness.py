"""A long robot think beside ordinary robot games, through a real ``abalone-pbm serve``.

The admin starts ``-think=60 avalanche boulder`` (``abalone-pbm games start``: robot
games are not started by mail), then a player moves against another robot and the
script prints how long each answer took (the robot's board mail after the move's),
and how long another user's ``show`` took during a burst of 8 analyses from one
sender.

    python benchmarks/robot_fairness.py --moves 4 --against boulder
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiosmtpd.controller import Controller  # noqa: E402
from mail_throughput import RelaySink, free_port, start_server  # noqa: E402

from abalone_pbm.db import repository  # noqa: E402
from abalone_pbm.db.session import Database  # noqa: E402
from abalone_pbm.rules import Board  # noqa: E402

PLAYER = "fred@example.org"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=4, help="player moves timed")
    parser.add_argument("--against", default="boulder", help="the player's robot")
    parser.add_argument("--long-think", type=int, default=60, help="-think of the robot game")
    args = parser.parse_args()
    sink = RelaySink()
    relay_port = free_port()
    relay = Controller(sink, hostname="127.0.0.1", port=relay_port)
    relay.start()
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        db_url = f"sqlite:///{workdir / 'db.sqlite3'}"
        server = start_server(workdir, relay_port, db_url)
        env = dict(os.environ, ABALONE_PBM_DATABASE_URL=db_url)
        try:
            started = subprocess.run(
                [sys.executable, "-m", "abalone_pbm", "games", "start", "--",
                 f"-think={args.long_think}", "avalanche", "boulder"],
                cwd=workdir, env=env, capture_output=True, text=True, check=True)
            print(started.stdout.strip())
            deliver = server.host, server.port
            send_mail(deliver, PLAYER, "signup fred Choc0late")
            sink.wait(lambda ms: any(m.recipient == PLAYER for m in ms), 30, "signup")
            send_mail(deliver, PLAYER, f"abalone challenge fred {args.against}")
            sink.wait(lambda ms: any(m.subject.startswith("New Abalone Board 102")
                                     for m in ms), 30, "new board")
            # The long game's first think starts at the robots' next sweep (at most 30 s).
            time.sleep(32)
            answers: list[float] = []
            for ply in range(0, 2 * args.moves, 2):
                board = position_of(db_url, 102)
                move = sorted(str(m) for m in board.legal_moves)[0]
                before = sink.received[PLAYER]
                asked = time.perf_counter()
                send_mail(deliver, PLAYER, f"abalone move 102 fred Choc0late {move}")
                # Two board mails: the player's move, then the robot's.
                sink.wait(lambda ms: sink.received.get(PLAYER, 0) >= before + 2, 120,
                          "the robot's answer")
                robot_at = [m.at for m in sink.mails if m.recipient == PLAYER][-1]
                answers.append(robot_at - asked)
            print(f"answers of {args.against} beside a -think={args.long_think} game: "
                  + ", ".join(f"{a:.2f} s" for a in answers))
            # A burst of analyses from one sender and another user's show meanwhile.
            for ply in range(8):
                send_mail(deliver, "barney@example.org", f"abalone analyze 102#{ply % 3}")
            before = sink.received.get("wilma@example.org", 0)
            asked = time.perf_counter()
            send_mail(deliver, "wilma@example.org", "abalone show 102")
            sink.wait(lambda ms: sink.received.get("wilma@example.org", 0) > before, 60, "show")
            shown = [m.at for m in sink.mails if m.recipient == "wilma@example.org"][-1] - asked
            sink.wait(lambda ms: sink.received.get("barney@example.org", 0) >= 8, 120,
                      "the analyses")
            analysed = [m.at for m in sink.mails if m.recipient == "barney@example.org"][-1]
            print(f"show during a burst of 8 analyses: {shown:.2f} s; the 8 analyses answered "
                  f"within {analysed - asked:.1f} s")
        finally:
            server.stop()
            relay.stop()


def send_mail(where: tuple[str, int], sender: str, subject: str) -> None:
    import smtplib
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = sender
    message["To"] = "abalone@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<{time.time_ns()}@bench.test>"
    message.set_content("\n")
    with smtplib.SMTP(*where, timeout=30) as client:
        client.sendmail(sender, ["abalone@localhost"], message.as_bytes())


def position_of(db_url: str, number: int) -> Board:
    """The board now (the player would read it in the last board mail)."""
    database = Database(db_url)
    try:
        with database.read() as session:
            game = repository.get_game(session, number)
            assert game is not None
            return Board(game.position, ply=game.ply)
    finally:
        database.dispose()


if __name__ == "__main__":
    main()
