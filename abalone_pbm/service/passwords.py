"""Password and one-time-code hashing (argon2id).

An argon2 check costs tens of milliseconds of CPU. Two things keep it off the hot
path of the mail server:

- The worker checks a mail's passwords **before** its write transaction
  (``check_soon``, called with the stored hashes the mail's commands name), so
  no database lock is held while argon2 runs; inside the transaction
  ``verify_password`` finds the answer ready (``answers_known``). A hash that changed
  in between is simply checked again. Several checks (the worker's, for the next
  mails waiting) run at once in a small pool of threads: argon2 releases the GIL.
- A right password is remembered for ``REMEMBER_FOR`` (as an HMAC of stored hash and
  password under a key that lives only in this process's memory, never the password),
  so a player's next move by command needs no argon2 run. Wrong passwords are never
  remembered: each one costs a full check. Changing a password changes the stored
  hash, so a remembered old password no longer matches anything.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

__all__ = ["hash_password", "verify_password", "check_soon", "answers_known",
           "REMEMBER_FOR"]

# Light parameters: a mail server checks one password per command, but a `multiple`
# mail may carry dozens; 64 MiB/3 passes would make that slow on a small machine.
_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)

#: Seconds a right password is remembered (see the module text).
REMEMBER_FOR = 600.0
_REMEMBERED_AT_MOST = 10_000

_key = secrets.token_bytes(32)
_remembered: OrderedDict[bytes, float] = OrderedDict()
_remembered_lock = threading.Lock()
_known = threading.local()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def _fingerprint(stored_hash: str, password: str) -> bytes:
    message = stored_hash.encode("utf-8", "surrogatepass") + b"\0" + \
        password.encode("utf-8", "surrogatepass")
    return hmac.new(_key, message, hashlib.sha256).digest()


def _remembered_right(fingerprint: bytes) -> bool:
    with _remembered_lock:
        until = _remembered.get(fingerprint)
        if until is None:
            return False
        if until < time.monotonic():
            del _remembered[fingerprint]
            return False
        return True


def _remember_right(fingerprint: bytes) -> None:
    with _remembered_lock:
        _remembered[fingerprint] = time.monotonic() + REMEMBER_FOR
        _remembered.move_to_end(fingerprint)
        while len(_remembered) > _REMEMBERED_AT_MOST:
            _remembered.popitem(last=False)


def _argon2_check(stored_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def verify_password(stored_hash: str, password: str) -> bool:
    known: Mapping[tuple[str, str], bool] | None = getattr(_known, "answers", None)
    if known is not None and (stored_hash, password) in known:
        return known[(stored_hash, password)]
    fingerprint = _fingerprint(stored_hash, password)
    if _remembered_right(fingerprint):
        return True
    right = _argon2_check(stored_hash, password)
    if right:
        _remember_right(fingerprint)
    return right


def needs_check(stored_hash: str, password: str) -> bool:
    """Whether ``verify_password`` would run argon2 for this pair now."""
    return not _remembered_right(_fingerprint(stored_hash, password))


#: Threads that run the argon2 checks of several mails at once (argon2 runs without
#: the GIL): the first checks of players who all start at once overlap.
CHECK_THREADS = max(1, min(2, os.cpu_count() or 1))
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _check_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(CHECK_THREADS, thread_name_prefix="abalone-pbm-argon2")
        return _pool


def check_soon(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Future[bool]]:
    """The answers for these (stored hash, password) pairs, to be computed outside any
    transaction, at most ``CHECK_THREADS`` at a time, in the order given; right ones
    are remembered as by ``verify_password``. The caller bounds how many it asks for."""
    pool = _check_pool()
    return {pair: pool.submit(verify_password, *pair) for pair in dict.fromkeys(pairs)}


@contextmanager
def answers_known(answers: Mapping[tuple[str, str], bool]) -> Iterator[None]:
    """Within the block, ``verify_password`` (this thread) uses these answers."""
    before = getattr(_known, "answers", None)
    _known.answers = answers
    try:
        yield
    finally:
        _known.answers = before
