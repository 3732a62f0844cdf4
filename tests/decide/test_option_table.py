"""decido.option_table: the CSV table of options the CLI and the dashboard's form read."""

from __future__ import annotations

import pytest

from decido.option_table import cell_value, options_from_csv


def test_a_table_becomes_the_apis_options() -> None:
    options, problems = options_from_csv("id,price,name\ns1, 18.5 ,cheap\n\ns2,2e1,x\n")
    assert problems == []
    assert options == [{"id": "s1", "attributes": {"price": 18.5, "name": "cheap"}},
                       {"id": "s2", "attributes": {"price": 20.0, "name": "x"}}]


def test_the_id_column_is_id_else_the_first_unless_named() -> None:
    assert options_from_csv("name,price\na,1\n")[0] == [{"id": "a", "attributes": {"price": 1.0}}]
    assert options_from_csv("price,code\n1,z\n", "code")[0] == [
        {"id": "z", "attributes": {"price": 1.0}}]


@pytest.mark.parametrize(("text", "id_column", "expected"), [
    ("", None, ["the table has no header row"]),
    ("id,price\n", None, ["the table has no rows below its header row"]),
    ("name,price\na,1\n", "id", ["the header row has no 'id' column (it has name, price)"]),
    ("id,p,p\na,1,2\n", None, ["the header row names a column twice"]),
    ("id,p,q\na,1\nb,1,2,3\n", None,
     ["line 2 has 2 fields, the header has 3 (a missing or extra column)",
      "line 3 has 4 fields, the header has 3 (a missing or extra column)"]),
])
def test_every_problem_is_named(text: str, id_column: str | None, expected: list[str]) -> None:
    assert options_from_csv(text, id_column)[1] == expected


def test_numbers_only_names_each_cell_that_is_not_a_finite_number() -> None:
    _, problems = options_from_csv("id,p,q\na,cheap,1\nb,inf,nan\n", numbers_only=True)
    assert problems == ["line 2, column 'p': 'cheap' is not a number",
                        "line 3, column 'p': 'inf' is not a number",
                        "line 3, column 'q': 'nan' is not a number"]


def test_a_cell_is_its_finite_number_or_its_text() -> None:
    assert cell_value(" 3 ") == 3.0 and cell_value("-1e-3") == -0.001
    assert cell_value(" inf ") == "inf" and cell_value("x") == "x"
