"""
Prepares a benchmark database that is already migrated: a user with a token, a
session, optionally a catalog grown to N modes; then times the in-process
catalog operations. Prints one JSON object. Run by benchmarks/run.py.
"""

import argparse
import json
import os
import timeit

import django


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", type=int, default=0, help="Grow the catalog to this many modes.")
    parser.add_argument("--user", action="store_true", help="Create the benchmark user, token and session.")
    options = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()

    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from modes.catalog import build_system_prompt, find_modes
    from modes.listing import mode_list_payload
    from modes.models import AgentMode
    from sessions_app.services import create_session

    output = {}
    if options.user:
        user = User.objects.create_user("bench")
        output["token"] = Token.objects.create(user=user).key
        output["session"] = str(create_session(owner=user, org=None).id)

    missing = options.modes - AgentMode.objects.count()
    if missing > 0:
        start = AgentMode.objects.count() + 1
        AgentMode.objects.bulk_create(
            AgentMode(
                key=f"bench_mode_{number}",
                display_name=f"Bench mode {number}",
                description=f"A generated mode number {number} for benchmarks.",
                when_to_use=f"Use this mode when benchmarking catalog size, case {number}.",
                associated_tool_ids=["agent_change_mode", "agent_list_modes"],
                example_utterances=[f"Benchmark request {number}."],
                position=start + number,
            )
            for number in range(missing)
        )
    output["modes"] = AgentMode.objects.count()

    build_system_prompt("general")  # load the snapshot once
    repeats = 200
    output["build_system_prompt_ms"] = timeit.timeit(lambda: build_system_prompt("general"), number=repeats) / repeats * 1000
    output["filtered_listing_ms"] = (
        timeit.timeit(lambda: mode_list_payload(find_modes(text="CASE 99"), include_examples=True), number=repeats)
        / repeats
        * 1000
    )
    output["full_listing_ms"] = (
        timeit.timeit(lambda: mode_list_payload(find_modes(), include_examples=False), number=repeats) / repeats * 1000
    )
    print(json.dumps(output))


if __name__ == "__main__":
    main()
