# SPDX-License-Identifier: GPL-2.0
"""The classes of samples: on-CPU and the blocked subclasses.

Names and order are perf's (tools/perf/util/blocked.c) and the runtime's
(enum bcoz_class and its table in src/config.c): one row per class with
perf's name, the one-letter form --blocked-scope takes, and the label a
subclass experiment has in the profile (selected=IO).
"""

CLASSES = (
    ("on-cpu", None, None),
    ("io", "i", "IO"),
    ("lock", "l", "LOCK"),
    ("sched", "s", "SCHEDULING"),
    ("other", "b", "OTHER"),
)

NAMES = tuple(c[0] for c in CLASSES)
# lock waiting cannot be sped up by itself (the runtime says why)
SCOPES = tuple(c for c in CLASSES if c[0] not in ("on-cpu", "lock"))


def class_of_selected(selected):
    """perf's name of the subclass an experiment selected, or None (a line)."""
    for name, _, label in CLASSES:
        if label and selected == label:
            return name
    return None


def scope_forms():
    """'i|io, s|sched, b|other': what --blocked-scope takes."""
    return ", ".join("%s|%s" % (letter, name) for name, letter, _ in SCOPES)
