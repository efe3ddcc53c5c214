"""Aborts the rollout in flight: every session is served the published (control) revision again."""

from modes.management.revisions import ReleaseCommand, revision_argument, validated_options
from modes.releases import abort_rollout
from modes.serializers import AbortRequest


class Command(ReleaseCommand):
    help = "Serve every session the published revision again, as --user, checked against their permissions."
    with_revision = False

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--reason", default="", help="Why, as the rollout records it.")
        parser.add_argument(
            "--revision", type=revision_argument,
            help="The revision being rolled out, as you saw it: refused if another one is.",
        )

    def act(self, user, *, reason, revision, **options):
        reason = validated_options(AbortRequest.validated, {"reason": reason}, options={})["reason"]  # as the API's
        rollout = abort_rollout(user=user, number=revision, reason=reason)
        return f"The rollout of revision {rollout.revision_id} is aborted; every session is served revision {rollout.control_id}."
