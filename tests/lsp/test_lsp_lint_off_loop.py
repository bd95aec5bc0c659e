"""The language server keeps answering while a big document is linted (the lint runs
off the event loop), and a document over `[limits] lint_mb` is not linted: its
diagnostics are cleared and the hub's status (`daemon status`) names it."""

from __future__ import annotations

import time
from typing import Any

from hub_socket import HubClient, hub_on_socket
from shadowtab.daemon.agent_commands import add_agent_commands
from shadowtab.daemon.cli.daemon import _print_status
from shadowtab.shadow_workspace import DEFAULT_LINTERS

PUBLISH = "textDocument/publishDiagnostics"
FUNCTION = "def function_{i}(value: int) -> int:\n    return value + {i}\n\n\n"


def big_source(megabytes: float) -> str:
    """Valid Python of about `megabytes`, broken on its last line."""
    count = int(megabytes * 2**20 / len(FUNCTION.format(i=100_000)))
    return "".join(FUNCTION.format(i=i) for i in range(count)) + "broken = (\n"


def published(client: HubClient, uri: str) -> dict[str, Any] | None:
    found = [m for m in client.notifications if m["method"] == PUBLISH]
    return next((m["params"] for m in found if m["params"]["uri"] == uri), None)


async def test_requests_are_answered_while_a_big_file_is_linted() -> None:
    async with hub_on_socket(linters=dict(DEFAULT_LINTERS)) as setup:
        client = await setup.client()
        uri = (setup.root / "big.py").as_uri()
        text = big_source(2.0)
        started = time.monotonic()
        # Linted at once (no debounce on open). The first round trip waits for the open
        # itself too (the 2 MB message read, the shadow document built).
        client.open(uri, text)
        round_trips = []
        while (params := published(client, uri)) is None:
            asked = time.monotonic()
            await client.command("shadowtab.lock.status")
            round_trips.append(time.monotonic() - asked)
        lint_s = time.monotonic() - started
        await client.close()
    assert "python-syntax" in [d["source"] for d in params["diagnostics"]]
    # compile() of 2 MB holds the GIL for most of the lint: in a thread of the server's
    # process it held up the answer for about the lint's whole duration.
    slowest = max(round_trips)
    assert slowest < lint_s / 3, f"a request waited {slowest:.3f} s during a {lint_s:.3f} s lint"


async def test_a_file_over_the_limit_is_not_linted_and_status_says_so(
    capsys: Any,
) -> None:
    async with hub_on_socket(linters=dict(DEFAULT_LINTERS), lint_max_mb=0.001) as setup:
        client = await setup.client()
        small, big = (setup.root / "small.py").as_uri(), (setup.root / "big.py").as_uri()
        client.open(small, "x = (\n")
        client.open(big, "x = (\n" * 500)
        while published(client, small) is None or published(client, big) is None:
            client.notifications.append(await client.read())
        workspaces = setup.hub.status()["workspaces"]
        root = str(setup.root)
        add_agent_commands(setup.hub)  # as the daemon does: `shadow lint` is an agent's verb
        agent = await setup.hub.control("shadow.lint", {"root": root, "path": "big.py"})
        await client.close()
    assert agent["diagnostics"] == [] and "lint_mb" in agent["failures"]["all linters"]
    assert published(client, small)["diagnostics"]  # type: ignore[index]
    assert published(client, big)["diagnostics"] == []  # type: ignore[index]
    [skipped] = [ws["lint_skipped"] for ws in workspaces]
    assert list(skipped) == [big] and "lint_mb" in skipped[big]
    reply = {"pid": 1, "version": "v", "uptime_s": 1, "started_at": "t", "control_socket": "c"}
    reply |= {"lsp_socket": "l", "log_file": "f", "hub": {"workspaces": workspaces}}
    _print_status(reply)
    assert f"lint skipped:   {big}: not linted" in capsys.readouterr().out
