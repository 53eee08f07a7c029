"""SQLAlchemy models: users, games, seats, moves, seeks, and the mail inbox/outbox.

The current position of each game is stored with it (``Game.position``), so a move
costs the same at ply 3 and at ply 300; ``Game.version`` guards against two
concurrent moves on one board. Every datetime column hands back an aware datetime in
UTC on SQLite and PostgreSQL alike (``UTCDateTime``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import event, inspect
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

#: Constraint and index names are derived from the tables and columns, so migrations
#: (and SQLite's batch mode, which must name what it drops) can refer to them.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A moment in time, always handed back as an aware datetime in UTC.

    PostgreSQL stores it as ``timestamp with time zone``; SQLite has no zones, so the
    value is stored as UTC text and given its zone back when read. A naive datetime
    given to it is taken to be UTC already.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None or not isinstance(value, datetime):
            return value
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        if dialect.name == "sqlite":
            # Same text for the same moment, so comparisons in SQL are right.
            value = value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment: datetime = value
        if moment.tzinfo is None:
            return moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The login name, stored in lower case.
    userid: Mapped[str] = mapped_column(String(20), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    vacation: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Name of the engine level when this user is a computer player.
    robot: Mapped[str | None] = mapped_column(String(40), default=None)
    #: Most active games this user accepts challenges to (None: no limit).
    game_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    #: False when the user has said `limit ... reject`.
    accepts_challenges: Mapped[bool] = mapped_column(Boolean, default=True)
    subscribe_all: Mapped[bool] = mapped_column(Boolean, default=False)
    rating: Mapped[float] = mapped_column(Float, default=1600.0)
    rated_games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    reset_code_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    reset_code_expires: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: "html": board mails carry a picture of the board as well; "text": text only.
    mail_format: Mapped[str] = mapped_column(String(8), default="html", server_default="html")
    #: One mail a day listing the boards awaiting this user's move (`digest ... on`).
    digest: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    digest_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: The result of every game that ends (`notify userid password` without boards).
    notify_all: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")

    addresses: Mapped[list[Address]] = relationship(
        back_populates="user", cascade="all, delete-orphan", order_by="Address.id"
    )


class Address(Base):
    __tablename__ = "addresses"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    #: A mail address, stored in lower case.
    address: Mapped[str] = mapped_column(String(320), index=True)
    #: Double opt-in: only a confirmed address gets mail other than its one
    #: confirmation request. The address a mail came from is confirmed at once.
    confirmed: Mapped[bool] = mapped_column(Boolean, default=True)
    #: SHA-256 (hex) of the code mailed to confirm the address, while unconfirmed.
    confirm_code_hash: Mapped[str | None] = mapped_column(String(64), default=None, index=True)
    #: When the confirmation request was mailed (the code expires some days later).
    confirm_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    user: Mapped[User] = relationship(back_populates="addresses")

    __table_args__ = (UniqueConstraint("user_id", "address"),)


class Game(Base):
    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The board number players use; the first game is 101.
    number: Mapped[int] = mapped_column(Integer, unique=True)
    layout: Mapped[str] = mapped_column(String(40))
    players: Mapped[int] = mapped_column(Integer)
    #: The challenge options as JSON (teams, ko, target, movelimit, variant, times).
    options: Mapped[str] = mapped_column(Text, default="{}")
    #: Position text of the start, and of now.
    start_position: Mapped[str] = mapped_column(Text)
    position: Mapped[str] = mapped_column(Text)
    #: The position before the last move (None when unknown), to mark that move.
    previous_position: Mapped[str | None] = mapped_column(Text, default=None)
    ply: Mapped[int] = mapped_column(Integer, default=0)
    #: Bumped by every change; a writer that read an older version must retry.
    version: Mapped[int] = mapped_column(Integer, default=1)
    #: active | finished | aborted
    status: Mapped[str] = mapped_column(String(16), default="active", index=True)
    #: The seat to move, read off ``position`` whenever it is set (see below), so
    #: that "games where a robot is to move" is one indexed query.
    to_move: Mapped[int] = mapped_column(Integer, default=1)
    #: Who started the game (need not play).
    challenger: Mapped[str | None] = mapped_column(String(20), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: When the player now to move got the turn (drives reminders and forfeits).
    turn_started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_nag_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: Pending draw or undo proposal: "draw" | "undo" | None, and who proposed it.
    proposal: Mapped[str | None] = mapped_column(String(8), default=None)
    proposal_seat: Mapped[int | None] = mapped_column(Integer, default=None)
    #: Seats that accepted the pending proposal, as a comma-separated list.
    proposal_votes: Mapped[str] = mapped_column(String(32), default="")
    #: Result once over: winning seats as "1,3", empty for a draw; and why.
    winners: Mapped[str | None] = mapped_column(String(32), default=None)
    result_reason: Mapped[str | None] = mapped_column(Text, default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: Userids who withdrew in the first round (the game restarted without them),
    #: comma-separated in the order they left; None when nobody did.
    withdrawn: Mapped[str | None] = mapped_column(Text, default=None)

    seats: Mapped[list[Seat]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="Seat.seat"
    )
    moves: Mapped[list[MoveRecord]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="MoveRecord.ply"
    )

    __mapper_args__ = {"version_id_col": version}


class Seat(Base):
    __tablename__ = "seats"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: Secret in this player's reply address for this board (>= 64 random bits).
    reply_token: Mapped[str] = mapped_column(String(40), unique=True)
    resigned: Mapped[bool] = mapped_column(Boolean, default=False)
    #: A resignation sent out of turn, applied when the turn comes.
    resign_pending: Mapped[bool] = mapped_column(Boolean, default=False)
    #: One pre-move (`queue`), and a move awaiting `confirm` (`submit`).
    queued_move: Mapped[str | None] = mapped_column(String(40), default=None)
    submitted_move: Mapped[str | None] = mapped_column(String(40), default=None)
    #: Rating change at the end of the game, for the result mail and history.
    rating_before: Mapped[float | None] = mapped_column(Float, default=None)
    rating_after: Mapped[float | None] = mapped_column(Float, default=None)

    game: Mapped[Game] = relationship(back_populates="seats")
    user: Mapped[User] = relationship()

    __table_args__ = (UniqueConstraint("game_id", "seat"),)


class MoveRecord(Base):
    __tablename__ = "moves"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    ply: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    #: Canonical move text.
    text: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: The Message-ID of the mail that made the move (None for robots and queued moves).
    source_message_id: Mapped[str | None] = mapped_column(String(255), default=None)
    #: Played by the server: a queued move, a robot, a forfeit.
    automatic: Mapped[bool] = mapped_column(Boolean, default=False)
    comment: Mapped[str | None] = mapped_column(Text, default=None)

    game: Mapped[Game] = relationship(back_populates="moves")

    __table_args__ = (UniqueConstraint("game_id", "ply"),)


class Observer(Base):
    """A user who gets a copy of every board mail of a game (`subscribe`)."""

    __tablename__ = "observers"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    #: Results only (`notify`) instead of every move.
    results_only: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (UniqueConstraint("game_id", "user_id"),)


class Seek(Base):
    """A user looking for opponents (`seek`): wants a game of ``players`` players."""

    __tablename__ = "seeks"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    players: Mapped[int] = mapped_column(Integer, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()

    __table_args__ = (UniqueConstraint("user_id", "players"),)


class InboxMail(Base):
    """A mail accepted by the listener or `process`, stored before it is answered 250."""

    __tablename__ = "inbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: Which deliveries are the same mail (``mail.idempotency``): a digest of the
    #: envelope sender and Message-ID, or of a traced delivery's bytes; a redelivered
    #: mail has the same key and is stored (and processed) once.
    dedup_key: Mapped[str] = mapped_column(String(255), unique=True)
    #: The Message-ID as clean text (None when the mail had none), for the admin.
    message_id: Mapped[str | None] = mapped_column(String(255), default=None)
    envelope_from: Mapped[str] = mapped_column(String(320), default="")
    #: Envelope recipients, comma-separated.
    envelope_to: Mapped[str] = mapped_column(Text, default="")
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    #: new | done | dropped | parked
    status: Mapped[str] = mapped_column(String(16), default="new")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: Why a mail was dropped unanswered (loop guards), for the log and the admin.
    note: Mapped[str | None] = mapped_column(Text, default=None)
    #: The board the mail concerns as its envelope or Subject names it (the reply
    #: address, ``abalone move 101 ...``), None when they name none: mails about one
    #: board are processed in the order they were accepted (``claim_next_inbox``).
    board: Mapped[int | None] = mapped_column(Integer, default=None)

    __table_args__ = (Index("ix_inbox_status_id", "status", "id"),
                      Index("ix_inbox_status_board_id", "status", "board", "id"))


class OutboxMail(Base):
    """A mail to send, written in the same transaction as the change that caused it."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    message_id: Mapped[str] = mapped_column(String(255), unique=True)
    sender: Mapped[str] = mapped_column(String(320))
    #: Exactly one recipient per mail.
    recipient: Mapped[str] = mapped_column(String(320), index=True)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    #: pending | sent | failed
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    inbox_id: Mapped[int | None] = mapped_column(ForeignKey("inbox.id"), default=None)
    #: The sender process that holds the lease on this row (``MailSender.owner``), so
    #: that a restarted process can tell a dead predecessor's leases from a live one's.
    lease_owner: Mapped[str | None] = mapped_column(String(200), default=None)

    __table_args__ = (
        Index("ix_outbox_status_next", "status", "next_attempt_at"),
        # The daily reply cap counts one address's mails of the last 24 hours.
        Index("ix_outbox_recipient_created", "recipient", "created_at"),
        # The answers of one mail (rate limits), read after each mail is processed.
        Index("ix_outbox_inbox_id", "inbox_id"),
        # A delivery report to a bounce address finds its mail (``verp``).
        Index("ix_outbox_sender", "sender"),
    )


class BounceScore(Base):
    """How an address's mail bounces (DESIGN §2.8, ``service.bounces``): a score that
    counts failed deliveries (at most one a day), forgotten when none came for a while;
    past the threshold the address is no longer mailed (``suppressed_at``) until a
    valid command comes from it or the admin clears it."""

    __tablename__ = "bounce_scores"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The address as mail is sent to it, in lower case.
    address: Mapped[str] = mapped_column(String(320), unique=True)
    score: Mapped[int] = mapped_column(Integer, default=0)
    #: The first counted bounce of the current run (since when it bounces), the last one.
    first_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: Why the last counted bounce failed: its status and diagnostic, for the admin.
    last_reason: Mapped[str] = mapped_column(String(500), default="")
    #: When the address stopped being mailed (None: it still is).
    suppressed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None,
                                                           index=True)
    #: When the owner's other addresses were told (once per suppression).
    notice_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class Tournament(Base):
    """A tournament (DESIGN §2.9): its format, its games' options and where it stands.
    A championship's editions share ``series``; each edition is a row of its own."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: The name players write (``abalone tournament join NAME``), lower case.
    name: Mapped[str] = mapped_column(String(40), unique=True)
    #: roundrobin | swiss | knockout | championship
    format: Mapped[str] = mapped_column(String(16))
    #: signup | running | finished | cancelled
    status: Mapped[str] = mapped_column(String(16), default="signup", index=True)
    #: Games a pairing plays (2: a double round robin, a knockout's mini-match).
    games_per_pairing: Mapped[int] = mapped_column(Integer, default=2)
    #: Rounds of a Swiss (None: worked out at the start).
    rounds: Mapped[int | None] = mapped_column(Integer, default=None)
    #: The round being played (0 before the start) and the last one whose standings
    #: were mailed.
    current_round: Mapped[int] = mapped_column(Integer, default=0)
    reported_round: Mapped[int] = mapped_column(Integer, default=0)
    #: The games' challenge options as JSON (layout, variant, nagtime, forfeittime).
    options: Mapped[str] = mapped_column(Text, default="{}")
    min_players: Mapped[int] = mapped_column(Integer, default=2)
    max_players: Mapped[int] = mapped_column(Integer, default=64)
    #: Sign-up closes (and the tournament starts) then; None: when the admin starts it.
    signup_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: A championship's series name and edition number (1, 2, ...).
    series: Mapped[str | None] = mapped_column(String(40), default=None)
    edition: Mapped[int] = mapped_column(Integer, default=1)
    division_size: Mapped[int] = mapped_column(Integer, default=10)
    #: Days between a championship edition's end and the next one's start.
    interval_days: Mapped[int] = mapped_column(Integer, default=7)
    #: When the admin was last told that the round stalls.
    stall_reported_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: Why it ended early (a pairing that could not be made), for the admin.
    note: Mapped[str | None] = mapped_column(Text, default=None)


class TournamentEntry(Base):
    """A player entered in a tournament."""

    __tablename__ = "tournament_entries"

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    #: entered | withdrawn | disqualified
    status: Mapped[str] = mapped_column(String(16), default="entered")
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: The rating when the tournament started (a tie-break, and the seeding).
    rating_at_start: Mapped[float | None] = mapped_column(Float, default=None)
    #: The seed (1 is the best) and the championship division (0 is the first).
    seed: Mapped[int | None] = mapped_column(Integer, default=None)
    division: Mapped[int] = mapped_column(Integer, default=0)
    #: A championship entry for this edition only (no re-entry into the next).
    once: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Standings mailed after each round and at the end (the entrant may opt out).
    standings_mail: Mapped[bool] = mapped_column(Boolean, default=True)

    user: Mapped[User] = relationship()

    __table_args__ = (UniqueConstraint("tournament_id", "user_id"),)


class TournamentGame(Base):
    """One pairing's game of a tournament, or a bye: who meets whom in which round, its
    board once started, and its result once over."""

    __tablename__ = "tournament_games"

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    #: The pairing's number in its round (a knockout's match) and its division.
    match: Mapped[int] = mapped_column(Integer, default=0)
    division: Mapped[int] = mapped_column(Integer, default=0)
    first_user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: None for a bye.
    second_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    #: The board; None for a bye.
    board: Mapped[int | None] = mapped_column(Integer, default=None, unique=True)
    #: The first player's score once over (1, 0.5, 0); None while it runs.
    score_first: Mapped[float | None] = mapped_column(Float, default=None)
    marbles_first: Mapped[int] = mapped_column(Integer, default=0)
    marbles_second: Mapped[int] = mapped_column(Integer, default=0)
    #: game | bye | noshow | adjudicated
    kind: Mapped[str] = mapped_column(String(16), default="game")

    first: Mapped[User] = relationship(foreign_keys=[first_user_id])
    second: Mapped[User | None] = relationship(foreign_keys=[second_user_id])


class MailSender(Base):
    """A process that sends the outbox, with its heartbeat (see ``db.leases``)."""

    __tablename__ = "mail_senders"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: ``host:pid:start:random``, unique for one sender of one process run.
    owner: Mapped[str] = mapped_column(String(200), unique=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ServerCounter(Base):
    """Small named counters, e.g. broadcasts per user per day."""

    __tablename__ = "counters"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    value: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AnalysisRequest(Base):
    """An ``abalone analyze`` waiting for the robots' threads: the worker checks and
    stores it; a robot lane searches outside any transaction and mails the answer."""

    __tablename__ = "analysis_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    board: Mapped[int] = mapped_column(Integer)
    #: The position analysed: after this many moves.
    ply: Mapped[int] = mapped_column(Integer)
    #: Where the answer goes (the mail's sender) and whom it is queued for (the
    #: normalised envelope sender: one search at a time per sender).
    recipient: Mapped[str] = mapped_column(String(320))
    queue: Mapped[str] = mapped_column(String(320))
    #: The request's Message-ID and References, for the answer's In-Reply-To.
    message_id: Mapped[str | None] = mapped_column(String(255), default=None)
    references: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_analysis_requests_created_at", "created_at"),)


class RobotUsage(Base):
    """Seconds of CPU the robots spent on one user's games (one row per robot move
    and human player of its game), summed over a day for the robot allowance."""

    __tablename__ = "robot_usage"

    id: Mapped[int] = mapped_column(primary_key=True)
    userid: Mapped[str] = mapped_column(String(20))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    seconds: Mapped[float] = mapped_column(Float)

    __table_args__ = (Index("ix_robot_usage_userid_at", "userid", "at"),
                      Index("ix_robot_usage_at", "at"))


class RateEvent(Base):
    """One counted event of a rate limit: an answer mailed to an address, a relayed
    message, a wrong password for a user or from a sender, a confirmation request.

    ``scope`` names the limit, ``subject`` what it counts for (a normalised address
    or a userid); a limit is the number (or the time) of a scope's rows for one
    subject within its window. Rows older than the longest window are pruned.
    """

    __tablename__ = "rate_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    scope: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(320))
    at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_rate_events_scope_subject_at", "scope", "subject", "at"),
                      Index("ix_rate_events_at", "at"))


def seat_to_move(position: str) -> int:
    """The player to move, the second field of a position text."""
    fields = position.split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 1


@event.listens_for(Game.position, "set")
def _keep_to_move(game: Game, position: str, _old: object, _initiator: object) -> None:
    if isinstance(position, str):
        game.to_move = seat_to_move(position)


#: ``Session.info`` key: the board numbers of the games whose turn a flush may have
#: handed to a computer player (see ``_note_robot_turns``).
ROBOT_TURNS = "abalone_pbm.robot_turns"


def _robot_may_be_to_move(game: Game, changed: bool = False) -> bool:
    """Whether ``game`` (new or changed in this flush, or ``changed`` by a statement of
    its own) may now wait for a robot: its seat to move is a robot's, or that cannot
    be told without reading more."""
    state = inspect(game)
    if game.status != "active":
        return False
    changed = changed or state.attrs.to_move.history.has_changes() \
        or state.attrs.status.history.has_changes() or state.attrs.version.history.has_changes()
    if not changed and not state.pending:
        return False
    if "seats" in state.unloaded:
        return True
    seat = next((s for s in game.seats if s.seat == game.to_move), None)
    if seat is None or "user" in inspect(seat).unloaded:
        return True
    return seat.user.robot is not None and not seat.resigned


@event.listens_for(Session, "after_flush")
def _note_robot_turns(session: Session, _context: object) -> None:
    """Note in ``session.info[ROBOT_TURNS]`` the games whose turn may have passed to a
    computer player, so that ``serve`` wakes its robots for those games only (one
    indexed read each) instead of searching every game after every mail."""
    for thing in (*session.new, *session.dirty):
        game = thing if isinstance(thing, Game) else \
            thing.game if isinstance(thing, Seat) and "game" not in inspect(thing).unloaded \
            else None
        if game is not None and _robot_may_be_to_move(game):
            session.info.setdefault(ROBOT_TURNS, set()).add(game.number)


def note_robot_turn(session: Session, game: Game) -> None:
    """``_note_robot_turns`` for a game whose row was changed by a statement of its own
    (``repository.write_game``), which no flush sees."""
    if _robot_may_be_to_move(game, changed=True):
        session.info.setdefault(ROBOT_TURNS, set()).add(game.number)


#: ``Session.info`` key: the objects whose rows were written by statements of their own
#: and told the values as committed (``repository.write_game``). A rollback, of a
#: savepoint too, expires them, as it expires the objects a flush wrote: their next use
#: reads the row again.
WRITTEN_DIRECTLY = "abalone_pbm.written_directly"


@event.listens_for(Session, "after_soft_rollback")
def _expire_written_directly(session: Session, _previous: object) -> None:
    for thing in session.info.pop(WRITTEN_DIRECTLY, ()):
        if thing in session:
            session.expire(thing)


@event.listens_for(Session, "after_commit")
def _forget_written_directly(session: Session) -> None:
    session.info.pop(WRITTEN_DIRECTLY, None)


# Every ORM write checks its values against the columns first (same on both databases).
from .column_checks import install as _install_column_checks  # noqa: E402

_install_column_checks(Base)
