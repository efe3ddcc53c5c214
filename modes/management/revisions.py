"""The --revision option that the catalog commands share: the catalog as an earlier revision recorded it."""

from argparse import ArgumentTypeError

from django.core.management.base import CommandError

from modes.catalog import CatalogSnapshot, UnknownRevisionError, catalog_at_revision, current_catalog


def revision_number(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise ArgumentTypeError(f"{text!r} is not a revision number (1, 2, 3, ...).")
    return number


def add_revision_argument(parser, *, what: str) -> None:
    parser.add_argument(
        "--revision", type=revision_number, help=f"Catalog revision to {what}; the current catalog if omitted."
    )


def catalog_at(revision: int | None) -> CatalogSnapshot:
    """The catalog at revision, or the current one for None; CommandError for a revision that does not exist."""
    if revision is None:
        return current_catalog()
    try:
        return catalog_at_revision(revision)
    except UnknownRevisionError as error:
        raise CommandError(str(error)) from None
