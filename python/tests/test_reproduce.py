"""``cs.reproduce_chapter()``: the claim audit of ``cavesweep reproduce chapter --out``."""

import cavesweep as cs

COLUMNS = [
    "id",
    "claim",
    "location",
    "evidence",
    "command",
    "verdict",
    "concern",
    "priority",
    "response",
    "replacement",
]
VERDICTS = {"holds", "holds loosely", "contradicted", "not checkable here"}


def _columns(t):
    # A DataFrame with pandas, a dict of lists without.
    return {c: list(t[c]) for c in COLUMNS} if hasattr(t, "columns") else t


def test_reproduce_chapter_returns_the_claim_audit_as_columns():
    t = _columns(cs.reproduce_chapter(threads=2))
    assert list(t) == COLUMNS
    n = len(t["id"])
    assert n >= 15 and all(len(v) == n for v in t.values())
    assert t["id"][:3] == ["C1", "C2", "C3"]
    assert set(t["verdict"]) <= VERDICTS
    rows = {i: {c: t[c][k] for c in COLUMNS} for k, i in enumerate(t["id"])}
    assert rows["C1"]["evidence"].startswith("final wall fraction 0.0670-0.0966")
    assert rows["C6"]["evidence"].startswith("512/512")
    assert rows["C4"]["verdict"] == "holds loosely" and rows["C4"]["replacement"]
    # The same numbers whatever the thread count.
    assert _columns(cs.reproduce_chapter(threads=1)) == t
