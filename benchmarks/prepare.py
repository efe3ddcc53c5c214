"""
Prepares the app's benchmark database, already migrated: a user in an organization, with a token and a
session. Prints them as one JSON object. Run by benchmarks/run.py.

`python -m benchmarks.prepare roll-out` (the harness runs it under BENCH_ROLLOUT=1, issue 43) rolls a second
revision out to every session (share 100: each request hashes its session's bucket), while what names no session is
served the first: the agent endpoints are measured with a rollout in flight.
"""

import json
import os
import sys

import django


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()

    from django.contrib.auth.models import User

    from accounts.models import Membership, Organization
    from accounts.tokens import create_token
    from modes.catalog import published_release
    from sessions_app.services import create_session

    user = User.objects.create_user("bench")
    org = Organization.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=user, organization=org)
    session = create_session(release=published_release(), owner=user, org=org)
    _, key = create_token(user=user, name="bench")
    print(json.dumps({"token": key, "session": str(session.id)}))


def roll_out_a_second_revision():
    from decimal import Decimal

    from django.conf import settings
    from django.contrib.auth.models import User

    from modes.models import AgentMode
    from modes.releases import publish_revision
    from modes.rollouts import Staging
    from modes.services import catalog_change

    settings.CATALOG_APPROVALS = 1  # this script's own: the edit waits as a pending revision, to be staged
    mode = AgentMode.objects.get(key="general")
    mode.when_to_use += " Rolled out."
    with catalog_change(by=None) as change:
        mode.save()
    stager = User.objects.create_superuser("bench-stager")
    publish_revision(number=change.revision.number, user=stager, staging=Staging(share=Decimal(100)))


if __name__ == "__main__":
    if sys.argv[1:] == ["roll-out"]:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
        django.setup()
        roll_out_a_second_revision()
    else:
        main()
