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
