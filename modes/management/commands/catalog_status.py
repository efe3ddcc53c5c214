"""Prints the catalog's release: the revision agents see, a rollout in flight and the pending revision with their
approvals, unrecorded changes."""

from django.core.management.base import BaseCommand

from modes.releases import release_summary


class Command(BaseCommand):
    help = (
        "Show the published catalog revision, a rollout in flight, the pending one with its approvals, and changes not "
        "recorded yet."
    )

    def handle(self, *args, **options):
        summary = release_summary()
        published, pending = summary["published"], summary["pending"]
        lines = [
            f"Published: revision {published.number}, by {published.published_by or 'nobody'} at "
            f"{published.published_at:%Y-%m-%d %H:%M:%S}{' (unreviewed)' if published.unreviewed else ''}."
            if published
            else "Published: none yet."
        ]
        if (rollout := summary["rollout"]) and rollout["in_flight"]:
            lines.append(
                f"Rolling out: revision {rollout['rollout'].revision_id} to {rollout['serves']}, "
                f"{_approvals(summary['staged_approvals'], summary['needed'])}; promote_rollout serves it to everyone, "
                "abort_rollout ends it."
            )
        if pending:
            lines.append(
                f"Pending: revision {pending.number} ({pending.summary}), "
                f"{_approvals(summary['approvals'], summary['needed'])}."
            )
        else:
            lines.append("Pending: none.")
        if summary["unrecorded"]:
            lines.append(
                f"Unrecorded: {summary['unrecorded']} (changed past the services, not served); run "
                "'manage.py record_revision'."
            )
        self.stdout.write("\n".join(lines))


def _approvals(approvals, needed: int) -> str:
    whose = [f"{approval.user} at {approval.at:%Y-%m-%d %H:%M:%S}" for approval in approvals]
    return f"{len(whose)} of {needed} approvals{': ' + ', '.join(whose) if whose else ''}"
