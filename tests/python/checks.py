# checks.py - What the Python tests share: check() counts a condition, raises() expects a
# glowc.Error carrying a message (and a status), done() prints the count and exits non-zero
# when any check failed. The tests import it from their own folder (Python puts a script's
# folder first on sys.path).
import sys

import glowc

_counts = {"checks": 0, "failures": 0}


def check(cond, what):
    _counts["checks"] += 1
    if not cond:
        _counts["failures"] += 1
        print("FAILED:", what, file=sys.stderr)


def raises(fn, needle, status=None):
    """fn() raises glowc.Error whose message contains needle (and has status)."""
    try:
        fn()
    except glowc.Error as e:
        check(needle in str(e), "message %r lacks %r" % (str(e), needle))
        if status is not None:
            check(e.status == status, "status %d, expected %d" % (e.status, status))
        return
    check(False, "no glowc.Error (wanted %r)" % needle)


def done():
    print("%d checks, %d failed" % (_counts["checks"], _counts["failures"]))
    sys.exit(1 if _counts["failures"] else 0)
