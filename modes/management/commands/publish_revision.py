"""Publishes a catalog revision to agents, stages it for part of the sessions, or rolls back to one published before."""

from django.core.management.base import CommandError

from modes.management.revisions import ReleaseCommand, validated_options
from modes.releases import publish_revision
from modes.rollouts import InvalidStaging
from modes.serializers import PublishRequest

OPTIONS = {"organizations": "organization", "minSessions": "min-sessions"}  # the API's names, as options


class Command(ReleaseCommand):
    help = (
        "Publish catalog revision N to agents (or roll back to it) as --user, checked against their permissions; "
        "with --share or --organization, stage it: serve it to that share of the sessions and those organizations' "
        "sessions first (for the revision being rolled out: raise its share)."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--share", help="The percentage of sessions served the revision, to two decimals.")
        parser.add_argument(
            "--organization", action="append", default=[], dest="organizations",
            help="Serve the revision to this organization's sessions (its slug); repeat for more.",
        )
        parser.add_argument("--guard-metric", help="Abort the rollout by itself on this metric: declined or refused.")
        parser.add_argument("--guard-ratio", help="... when the cohort's is more than this many times the control's.")
        parser.add_argument("--guard-min-sessions", help="... once this many of the cohort's sessions have acted.")
        parser.add_argument(
            "--restart", action="store_true", help="Roll out again a revision whose rollout was aborted."
        )

    def act(
        self, user, *, number, share, organizations, guard_metric, guard_ratio, guard_min_sessions, restart, **options
    ):
        guard = {"metric": guard_metric, "ratio": guard_ratio, "minSessions": guard_min_sessions}
        body = {
            **({"share": share} if share is not None else {}),
            **({"organizations": organizations} if organizations else {}),
            # An option given empty is validated as given (a refusal), never taken for no guard at all.
            **({"guard": given} if (given := {name: value for name, value in guard.items() if value is not None}) else {}),
            **({"restart": True} if restart else {}),
        }
        staging = validated_options(PublishRequest.staging, body, options=OPTIONS)  # the API's rules and messages
        try:
            revision = publish_revision(number=number, user=user, staging=staging)
        except InvalidStaging as error:  # named as the option that gave it
            raise CommandError(f"--{OPTIONS.get(error.field, error.field)}: {error}") from None
        if staging is None:
            restores = f", which restores revision {revision.restores}," if revision.restores else ""
            return f"Revision {revision.number}{restores} is published."
        return f"Revision {revision.number} is being rolled out."
