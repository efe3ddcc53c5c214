"""The suite's own harness: a run ended by SIGTERM or SIGHUP leaves no server it started running."""

import os
import signal
import subprocess
import sys

import pytest

from .servers import ROOT

# A run of the suite in small: the harness's Server, serving with Python's http.server (any answer means it is
# up), and then nothing until a signal ends it.
RUN = """
import os, sys, time
from tests import servers

class StandIn(servers.Server):
    COMMANDS = {"http.server": lambda port: [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]}

servers.stop_servers_when_terminated()
print(StandIn("http.server", dict(os.environ)).process.pid, flush=True)
time.sleep(120)
"""


def group_is_running(group):
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_run_ended_by_a_signal_stops_the_servers_it_started(number):
    run = subprocess.Popen([sys.executable, "-c", RUN], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    group = int(run.stdout.readline())
    try:
        assert group_is_running(group)
        run.send_signal(number)
        run.wait(timeout=30)
        assert not group_is_running(group)
    finally:
        run.kill()
        if group_is_running(group):
            os.killpg(group, signal.SIGKILL)
