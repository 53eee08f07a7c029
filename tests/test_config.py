"""Settings: defaults, the environment, and clear refusals of unusable values."""

from __future__ import annotations

import pytest

from abalone_pbm.config import Settings, load_settings


def test_defaults_are_the_documented_ones() -> None:
    settings = load_settings(environ={})
    assert settings == Settings()
    assert settings.database_url == "sqlite:///var/abalone-pbm.sqlite3"
    assert (settings.listen_host, settings.listen_port) == ("127.0.0.1", 8025)
    assert settings.lmtp is False and settings.relay is None
    assert settings.max_message_bytes == 262144


def test_the_environment_sets_every_variable() -> None:
    settings = load_settings(environ={
        "ABALONE_PBM_LISTEN": "0.0.0.0:2525",
        "ABALONE_PBM_LMTP": "on",
        "ABALONE_PBM_ADDRESS": "games@pbm.example",
        "ABALONE_PBM_RELAY": "smtp://mx.example:587",
        "ABALONE_PBM_MAX_MESSAGE_BYTES": "100000",
        "ABALONE_PBM_RELAY_CONNECTIONS": "8",
        "ABALONE_PBM_WORKER_PROCESS": "off",
    })
    assert settings.listen_port == 2525 and settings.lmtp
    assert (settings.address_local, settings.address_domain) == ("games", "pbm.example")
    assert settings.relay_host_port == ("mx.example", 587)
    assert settings.max_message_bytes == 100000
    assert settings.relay_connections == 8
    assert settings.worker_process is False
    assert load_settings(environ={}).worker_process is True


@pytest.mark.parametrize(
    "variable, value",
    [
        ("ABALONE_PBM_LISTEN", "nohost"),
        ("ABALONE_PBM_LISTEN", "127.0.0.1:http"),
        ("ABALONE_PBM_ADDRESS", "abalone"),
        ("ABALONE_PBM_ADDRESS", "abalone+x@example.org"),
        ("ABALONE_PBM_RELAY", "mail.example.org"),
        ("ABALONE_PBM_LMTP", "maybe"),
        ("ABALONE_PBM_MAX_MESSAGE_BYTES", "lots"),
        ("ABALONE_PBM_MAX_MESSAGE_BYTES", "0"),
        ("ABALONE_PBM_RELAY_CONNECTIONS", "0"),
        ("ABALONE_PBM_RELAY_CONNECTIONS", "1000"),
        ("ABALONE_PBM_WORKER_PROCESS", "sometimes"),
    ],
)
def test_unusable_values_are_refused_by_name(variable: str, value: str) -> None:
    with pytest.raises(ValueError, match=variable):
        load_settings(environ={variable: value})


def test_settings_survive_the_environment_a_worker_process_gets() -> None:
    """serve hands its settings to its worker process as environment variables; every
    value comes back the same, whether default, changed, empty or off."""
    from dataclasses import fields

    from abalone_pbm.config import Settings, settings_environment

    changed = Settings(
        database_url="postgresql://abalone@db.example.org/abalone", listen="0.0.0.0:2525",
        lmtp=True, address="games@pbm.example", relay="smtp://mx.example:587",
        relay_connections=3, worker_process=False, policy_listen="127.0.0.1:8026",
        daily_reply_cap=7, reply_requires_authentication=True, authserv_id="mx.example",
        robot_budget=12.5, robot_budgets="boulder:10", maildir="/srv/out",
    )
    for settings in (Settings(), changed):
        environment = settings_environment(settings)
        assert set(environment) == {"ABALONE_PBM_" + f.name.upper() for f in fields(Settings)}
        assert load_settings(environ=environment) == settings


def test_the_clock_offset_moves_every_process_clock_forward() -> None:
    from datetime import datetime, timedelta, timezone

    from abalone_pbm.clock import SystemClock

    assert isinstance(load_settings(environ={}).clock(), SystemClock)
    moved = load_settings(environ={"ABALONE_PBM_CLOCK_OFFSET": "8d 12h"}).clock().now()
    ahead = moved - datetime.now(timezone.utc)
    assert timedelta(days=8, hours=11, minutes=59) < ahead <= timedelta(days=8, hours=12)
    assert load_settings(environ={"ABALONE_PBM_CLOCK_OFFSET": "90m"}).clock_offset == "90m"


@pytest.mark.parametrize("offset", ["-1d", "8x", "d", "1h1d", "8 days", "999999d"])
def test_a_clock_offset_that_is_not_a_duration_is_refused_by_name(offset: str) -> None:
    with pytest.raises(ValueError, match="ABALONE_PBM_CLOCK_OFFSET is not a duration"):
        load_settings(environ={"ABALONE_PBM_CLOCK_OFFSET": offset})
