"""What the catalog commands share: the --revision option, the release commands' base with its --user, and the API's
request rules applied to options."""

from argparse import ArgumentTypeError

from django.core.management.base import CommandError
from rest_framework.exceptions import ValidationError

from accounts.management.users import acting_user
from aptix_site.commands import ServiceCommand
from modes.catalog import Catalog, catalog_at_revision, published_catalog, revision_number


def revision_argument(text: str) -> int:
    if (number := revision_number(text)) is None:
        raise ArgumentTypeError(f"{text!r} is not a revision number (1, 2, 3, ...).")
    return number


def add_revision_argument(parser, *, what: str) -> None:
    parser.add_argument(
        "--revision", type=revision_argument, help=f"Catalog revision to {what}; the published one if omitted."
    )


def catalog_at(revision: int | None) -> Catalog:
    """The catalog at revision, or the published one for None; UnknownRevisionError for one that does not exist."""
    return published_catalog() if revision is None else catalog_at_revision(revision)


class ReleaseCommand(ServiceCommand):
    """The release commands: the staff user acting (--user, whose permissions apply), one line on refusal."""

    with_revision = True  # the commands about one revision take its number

    def add_arguments(self, parser):
        if self.with_revision:
            parser.add_argument("number", type=revision_argument, help="The catalog revision.")
        parser.add_argument("--user", required=True, help="Username of the staff user acting; their permissions apply.")

    def handle(self, *args, user, **options):
        self.stdout.write(self.act(acting_user(username=user), **options))

    def act(self, user, **options) -> str:
        """Do it as user; what the command prints."""
        raise NotImplementedError


def validated_options(serializer, body: dict, *, options: dict[str, str]):
    """serializer's validated body, as the API judges it; else CommandError with its first message, named as an
    option ("--guard-ratio: A valid number is required."). options: the API's names that are not the options'."""
    try:
        return serializer(body)
    except ValidationError as error:
        raise CommandError(_first_problem(error.detail, options=options)) from None


def _first_problem(detail, *, options, path=()) -> str:
    if isinstance(detail, dict):
        name, inner = next(iter(detail.items()))
        named = (*path, options.get(name, name)) if isinstance(name, str) else path  # not a list item's index
        return _first_problem(inner, options=options, path=named)
    if isinstance(detail, list):
        return _first_problem(detail[0], options=options, path=path)
    return f"--{'-'.join(path)}: {detail}"
