"""ldp.ledger: what each user spent over surveys, the numbers of `ldp ledger`, from lists
or pandas DataFrames, and named errors."""

import csv
import io
import math

import pytest

import ldp
from conftest import optional

SURVEYS = [
    {"survey": "daily", "eps": 1.0, "first_day": 1, "last_day": 30},
    {"survey": "weekly", "eps": 2.0, "first_day": 1, "last_day": 28},
    {"survey": "app", "eps": 0.5, "first_day": 1, "last_day": 30, "eps_perm": 2.0},
]
RECORDS = [("ann", "daily", d) for d in range(1, 11)] + [
    ("ann", "weekly", 7),
    ("ann", "app", 3),
    ("ann", "app", 4),
    ("bo", "daily", 1),
    ("bo", "weekly", 1),
    (17, "daily", 2),  # a user named by a number: compared as the string "17"
]


def test_the_numbers_of_the_tool(cli, tmp_path):
    surveys = tmp_path / "surveys.csv"
    surveys.write_text(
        "survey,eps,first_day,last_day,eps_perm\n"
        + "".join(f"{s['survey']},{s['eps']},{s['first_day']},{s['last_day']},{s.get('eps_perm', '')}\n" for s in SURVEYS)
    )
    records = tmp_path / "records.csv"
    records.write_text("user,survey,day\n" + "".join(f"{u},{s},{d}\n" for u, s, d in RECORDS))
    out = cli("ledger", "--surveys", surveys, "--records", records, "--delta", 1e-6, "--limit", 5, "--day-limit", 2.5)
    tool = list(csv.DictReader(io.StringIO(out.decode())))
    mine = ldp.ledger(SURVEYS, RECORDS, delta=1e-6, limit=5.0, day_limit=2.5)
    assert [u["user"] for u in mine] == [row["user"] for row in tool] == ["17", "ann", "bo"]
    for u, row in zip(mine, tool):
        assert u["reports"] == int(row["reports"]) and u["days"] == int(row["days"])
        for key in ["basic_eps", "advanced_eps", "max_day_eps"]:
            assert math.isclose(u[key], float(row[key]), rel_tol=1e-12), key
        assert u["max_day"] == int(row["max_day"])
        assert "+".join(u["over"]) == row["over"]
    ann = mine[1]
    # Ten daily reports, one weekly, and the app's memo charged once: 10 + 2 + 2; on day
    # 3 the daily report and the memo (charged on its first day) make 3.
    assert ann["basic_eps"] == 14.0 and ann["over"] == ["total", "day"]
    assert mine[2]["over"] == ["day"]  # bo spent 1 + 2 on day 1


def test_dataframes_and_a_roster():
    pd = optional("pandas")
    surveys = pd.DataFrame(SURVEYS)  # eps_perm NaN where a survey has none
    records = pd.DataFrame(RECORDS, columns=["user", "survey", "day"])[["day", "survey", "user"]]
    assert ldp.ledger(surveys, records) == ldp.ledger(SURVEYS, RECORDS)
    with pytest.raises(ldp.ParamError, match=r"records\[0\]: .*carl"):
        ldp.ledger(SURVEYS, [("carl", "daily", 1)], roster=["ann", "bo"])
    with pytest.raises(ldp.ParamError, match=r'no column "user"'):
        ldp.ledger(SURVEYS, records.rename(columns={"user": "who"}))


def test_bad_input_is_named():
    with pytest.raises(ldp.ParamError, match=r"surveys\[0\]: no \"eps\""):
        ldp.ledger([{"survey": "a", "first_day": 1, "last_day": 2}], [])
    with pytest.raises(ldp.ParamError, match=r"surveys\[0\]: .*days 3..=2 are empty"):
        ldp.ledger([{"survey": "a", "eps": 1.0, "first_day": 3, "last_day": 2}], [])
    with pytest.raises(ldp.ParamError, match="eps must be positive"):
        ldp.ledger([{"survey": "a", "eps": -1.0, "first_day": 1, "last_day": 2}], [])
    with pytest.raises(ldp.ParamError, match=r"records\[1\]: .*day 40"):
        ldp.ledger(SURVEYS, [("ann", "daily", 1), ("ann", "daily", 40)])
    with pytest.raises(ldp.ParamError, match=r"records\[1\]: .*already reported"):
        ldp.ledger(SURVEYS, [("ann", "daily", 1), ("ann", "daily", 1)])
    with pytest.raises(ldp.ParamError, match=r"records\[0\]: .*nope"):
        ldp.ledger(SURVEYS, [("ann", "nope", 1)])
    with pytest.raises(TypeError, match=r"records\[0\]: a \(user, survey, day\) triple"):
        ldp.ledger(SURVEYS, [("ann", "daily")])
    with pytest.raises(TypeError, match=r"records\[0\]: day"):
        ldp.ledger(SURVEYS, [("ann", "daily", 1.5)])
    with pytest.raises(ldp.ParamError, match="delta"):
        ldp.ledger(SURVEYS, RECORDS, delta=2.0)
    with pytest.raises(ldp.ParamError, match="limit = -1"):
        ldp.ledger(SURVEYS, RECORDS, limit=-1.0)
    assert ldp.ledger(SURVEYS, []) == []


def test_tagged_reports_feed_the_ledger(cli, tmp_path):
    # Reports tagged by `ldp perturb --user --survey --day` (issue 46): the ledger from
    # their tags equals the ledger from the same records, JSON lines and Parquet alike.
    records = [r for r in RECORDS if r[1] != "app"]
    paths = []
    for i, (user, survey, day) in enumerate(records):
        args = ["perturb", "--protocol", "grr", "--k", 5, "--eps", 1, "--seed", i,
                "--user", user, "--survey", survey, "--day", day]
        if i % 2:
            path = tmp_path / f"r{i}.parquet"
            cli(*args, "--output", path, stdin=b"3\n")
        else:
            path = tmp_path / f"r{i}.jsonl"
            path.write_bytes(cli(*args, stdin=b"3\n"))
        paths.append(path)
    want = ldp.ledger(SURVEYS, records, delta=1e-6, limit=3.0)
    assert ldp.ledger(SURVEYS, reports=paths, delta=1e-6, limit=3.0) == want
    # Beside records, and one path alone (a str).
    half = len(records) // 2
    assert ldp.ledger(SURVEYS, records[:half], reports=paths[half:], delta=1e-6, limit=3.0) == want
    one = ldp.ledger(SURVEYS, reports=str(paths[0]))
    assert [(u["user"], u["reports"]) for u in one] == [("ann", 1)]
    # Python's reader takes tagged lines, and estimates as without the tags.
    m = ldp.mechanism("grr", k=5, eps=1.0)
    tagged = cli("perturb", "--protocol", "grr", "--k", 5, "--eps", 1, "--seed", 1,
                 "--user", "ann", "--survey", "daily", "--day", 1, stdin=b"3\n1\n2\n" * 50)
    plain = cli("perturb", "--protocol", "grr", "--k", 5, "--eps", 1, "--seed", 1, stdin=b"3\n1\n2\n" * 50)
    assert tagged != plain
    (tmp_path / "tagged.jsonl").write_bytes(tagged)
    (tmp_path / "plain.jsonl").write_bytes(plain)
    a, b = m.aggregator(), m.aggregator()
    a.add(ldp.Reports.from_jsonl(tmp_path / "tagged.jsonl", m))
    b.add(ldp.Reports.from_jsonl(tmp_path / "plain.jsonl", m))
    assert list(a.estimate()) == list(b.estimate())


def test_tagged_reports_are_checked(cli, tmp_path):
    with pytest.raises(ldp.ParamError, match="give records"):
        ldp.ledger(SURVEYS)
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(cli("perturb", "--protocol", "grr", "--k", 5, "--eps", 1, stdin=b"3\n"))
    with pytest.raises(ldp.ParamError, match=r"bare.jsonl: line 1: the report lacks the tags user, survey, day"):
        ldp.ledger(SURVEYS, reports=bare)
    half = tmp_path / "half.parquet"
    cli("perturb", "--protocol", "grr", "--k", 5, "--eps", 1, "--user", "ann", "--output", half, stdin=b"3\n")
    with pytest.raises(ldp.ParamError, match=r"half.parquet: row 0: the report lacks the tags survey, day"):
        ldp.ledger(SURVEYS, reports=[half])
    with pytest.raises(OSError):
        ldp.ledger(SURVEYS, reports=tmp_path / "missing.jsonl")


def test_tagged_parquet_reads_as_untagged(cli, tmp_path):
    m = ldp.mechanism("oue", k=8, eps=1.0)
    items = b"".join(b"%d\n" % (i % 8) for i in range(500))
    common = ["perturb", "--protocol", "oue", "--k", 8, "--eps", 1, "--seed", 5]
    cli(*common, "--user", "ann", "--survey", "daily", "--day", 4, "--output", tmp_path / "t.parquet", stdin=items)
    cli(*common, "--output", tmp_path / "p.parquet", stdin=items)
    a, b = m.aggregator(), m.aggregator()
    a.add(ldp.Reports.read_parquet(tmp_path / "t.parquet", m))
    b.add(ldp.Reports.read_parquet(tmp_path / "p.parquet", m))
    assert list(a.estimate()) == list(b.estimate())
