"""Servers the tests start as processes on loopback: a free port, waiting until one answers, stopping it."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen, log: Path, seconds: float = 120) -> str | None:
    """None once ``url`` answers; else why the server did not come up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"exited with {process.returncode}: {log.read_text()[-2000:]}"
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return None
        except OSError:
            time.sleep(0.5)
    return f"no answer from {url} within {seconds:.0f} s: {log.read_text()[-2000:]}"


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
