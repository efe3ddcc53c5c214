"""
Prepares the app's benchmark database, already migrated: a user in an organization, with a token and a
session. Prints them as one JSON object. Run by benchmarks/run.py.
"""

import json
import os

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


if __name__ == "__main__":
    main()
