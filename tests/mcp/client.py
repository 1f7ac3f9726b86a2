"""A real MCP client (the official Python SDK) driving `qgates mcp`, for tests/mcp/mcp_server.rs.

Usage: client.py QGATES WORKSPACE OUTSIDE_FILE TRANSCRIPT

Starts `QGATES mcp` in WORKSPACE over stdio, lists the tools, calls them with every scope (and,
for each, runs `QGATES check --format json` with the same scope so the test can compare), with
bad arguments, with a broken quality.yaml, twice at once, and with `fix`. Everything the server
answered goes into TRANSCRIPT (JSON); the Rust test asserts on it. The script itself only fails
when the protocol does (a crash, a lost connection, a result that breaks its output schema: the
SDK validates structured content against the tool's output schema).
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

QGATES, WORKSPACE, OUTSIDE_FILE, TRANSCRIPT = sys.argv[1:5]
ROOT = Path(WORKSPACE)

# (name, tool arguments, the same run as `qgates check` arguments)
SCOPES = [
    ("project", {"scope": "project"}, ["--scope", "project"]),
    (
        "files",
        {"files": ["src/type_error.py", "src/clean.py"]},
        ["src/type_error.py", "src/clean.py"],
    ),
    ("branch", {"scope": "branch"}, ["--scope", "branch"]),
    ("auto", {}, []),
]

BAD_CALLS = [
    ("wrong type", {"scope": 5}),
    ("unknown scope", {"scope": "everything"}),
    ("unknown field", {"bogus": True}),
    ("wrong item type", {"gates": ["ruff_lint", 7]}),
    ("unknown gate", {"gates": ["nope"]}),
    ("empty gates", {"gates": []}),
    ("outside the workspace", {"files": [OUTSIDE_FILE]}),
    ("climbing out", {"files": ["../../outside.py"]}),
    ("missing file", {"files": ["src/missing.py"]}),
    ("files scope without files", {"scope": "files"}),
    ("files with another scope", {"scope": "project", "files": ["src/clean.py"]}),
    ("fix not a boolean", {"fix": "yes"}),
]


def forget_cache():
    """Both faces compute fresh results, so the comparison is not between a run and a replay."""
    shutil.rmtree(ROOT / ".qgates" / "cache", ignore_errors=True)


def result_json(result):
    return {
        "is_error": bool(result.is_error),
        "texts": [c.text for c in result.content if getattr(c, "type", None) == "text"],
        "structured": result.structured_content,
    }


async def call(session, name, args):
    try:
        return result_json(await session.call_tool(name, args))
    except Exception as e:  # a protocol error: recorded, the test decides
        return {"protocol_error": f"{type(e).__name__}: {e}"}


def check_cli(args):
    out = subprocess.run(
        [QGATES, "check", "--format", "json", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        report = {"not_json": out.stdout, "stderr": out.stderr}
    return {"code": out.returncode, "report": report}


async def main():
    transcript = {}
    params = StdioServerParameters(command=QGATES, args=["mcp"], cwd=ROOT, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            transcript["server"] = {
                "name": init.server_info.name,
                "protocol": init.protocol_version,
                "instructions": init.instructions,
            }
            tools = await session.list_tools()
            transcript["tools"] = [
                {
                    "name": t.name,
                    "input_schema": t.input_schema,
                    "output_schema": t.output_schema,
                    "description": t.description,
                }
                for t in tools.tools
            ]
            transcript["last_before_any_run"] = await call(session, "last_summary", {})

            transcript["scopes"] = []
            for name, args, cli_args in SCOPES:
                forget_cache()
                # Every finding shown, as the command line shows them.
                mcp = await call(session, "run_quality_gates", {**args, "include_existing": True})
                forget_cache()
                cli = check_cli(cli_args)
                transcript["scopes"].append({"scope": name, "mcp": mcp, "cli": cli})
            transcript["last_after_runs"] = await call(
                session, "last_summary", {"include_existing": True}
            )
            # The default page of a branch run: new findings, the pre-existing ones counted.
            transcript["branch_default_page"] = await call(
                session, "run_quality_gates", {"scope": "branch"}
            )

            transcript["bad"] = []
            for what, args in BAD_CALLS:
                transcript["bad"].append(
                    {"what": what, "args": args, **await call(session, "run_quality_gates", args)}
                )
            transcript["bad"].append(
                {"what": "last_summary with arguments", **await call(session, "last_summary", {"scope": "auto"})}
            )
            transcript["unknown_tool"] = await call(session, "run_everything", {})

            config = ROOT / "quality.yaml"
            good = config.read_text()
            config.write_text("version: 1\ngates:\n  lint:\n    command: [\"x\"]\n    kind: sometimes\n")
            transcript["broken_config"] = await call(session, "run_quality_gates", {"scope": "project"})
            config.write_text(good)

            # Two calls at once: one runs, the other is told a run is in progress.
            forget_cache()
            both = await asyncio.gather(
                call(session, "run_quality_gates", {"scope": "project"}),
                call(session, "run_quality_gates", {"scope": "project"}),
            )
            transcript["concurrent"] = list(both)

            # The server lived through all of that.
            transcript["after_errors"] = await call(session, "run_quality_gates", {"files": ["src/clean.py"]})

            forget_cache()
            transcript["fix"] = await call(
                session, "run_quality_gates", {"files": ["src/unformatted.py"], "fix": True}
            )
    Path(TRANSCRIPT).write_text(json.dumps(transcript, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
