"""``topoopt validate FILE`` and ``topoopt schema``: check an instance, publish its JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import typer

from topoopt.cli.app import app
from topoopt.cli.common import load_or_exit

SCHEMA_ID = "urn:topoopt:schema:instance:1"
"""The ``$id`` of the published schema; bump the last number when the instance format breaks."""

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@app.command()
def validate(
    file: str = typer.Argument(..., metavar="FILE", help="Instance YAML file, or '-' for standard input."),
) -> None:
    """Check an instance file: YAML safety, schema, and catalog ids.

    Prints a one-line summary and exits 0 when the instance is valid; otherwise prints every
    problem as file:line:column: field: message on stderr and exits 2.
    """
    loaded = load_or_exit(file, summary=True)
    typer.echo(summary_line(loaded))


def summary_line(loaded: Any) -> str:
    """``OK file: name — model, budget, deadline, price book`` for a valid instance."""
    instance = loaded.instance
    model = instance.workload.model
    model_text = model if isinstance(model, str) else f"custom {model.params_b:g}B model"
    budget = instance.budget
    per = "/month" if budget.basis == "monthly_rent" else " capex"
    deadline = instance.goal.deadline_days
    deadline_text = f", deadline {deadline:g} days" if deadline is not None else ""
    book = instance.catalog.price_book
    return (
        f"OK {loaded.file}: {instance.name!r} — {model_text}, {instance.workload.training.tokens:.3g} tokens, "
        f"budget {budget.max:,.0f} {budget.currency}{per}{deadline_text}, "
        f"price book {book if isinstance(book, str) else book.id}, objective {instance.goal.objective}"
    )


def instance_json_schema() -> dict:
    """The JSON Schema of an instance file, with ``$schema``, ``$id``, title and descriptions."""
    from topoopt.models.instance import Instance

    body = Instance.model_json_schema(by_alias=True, mode="validation")
    head = {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "topoopt instance",
        "description": (
            "A topoopt instance: the training workload, the goal, the budget, the site, the catalog "
            "and price book to design from, and optional constraints. Units are in field names."
        ),
    }
    body.pop("title", None)
    body.pop("description", None)
    return {**head, **body}


def schema_text() -> str:
    """The schema exactly as ``topoopt schema`` prints it (and as topoopt.schema.json holds it)."""
    return json.dumps(instance_json_schema(), indent=2, ensure_ascii=False) + "\n"


@app.command()
def schema() -> None:
    """Print the JSON Schema of instance files (for editors: topoopt schema > topoopt.schema.json)."""
    typer.echo(schema_text(), nl=False)
