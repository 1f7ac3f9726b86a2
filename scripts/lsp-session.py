#!/usr/bin/env python3
"""Drives one short language-server session over stdio, as an editor would.

    lsp-session.py ROOT FILE [--until initialize] -- COMMAND...

Sends `initialize` for ROOT (trusted), then `initialized`, opens FILE, saves it twice, asks for
`qgates.summary` and shuts down, waiting for each answer. With `--until initialize` it shuts the
server down right after the `initialize` answer. COMMAND starts the server (for example under valgrind). Used by
scripts/order-symbols.sh to record which functions such a session runs.
"""

import json
import pathlib
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    if "--" not in args or len(args[: args.index("--")]) < 2:
        sys.exit(__doc__)
    cut = args.index("--")
    own, command = args[:cut], args[cut + 1 :]
    root = pathlib.Path(own[0]).resolve()
    file = (root / own[1]).resolve()
    if own[2:] not in ([], ["--until", "initialize"]):
        sys.exit(__doc__)
    until_initialize = bool(own[2:])

    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root
    )

    def send(message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def read() -> dict:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = server.stdout.read(1)
            if not byte:
                sys.exit("the server closed its output")
            header += byte
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        return json.loads(server.stdout.read(length))

    def wait_for(accept) -> None:
        while True:
            message = read()
            if "id" in message and "method" in message:
                # A request from the server (progress, registration): answer it.
                send({"id": message["id"], "result": None})
            if accept(message):
                return

    def shut_down() -> int:
        send({"id": 3, "method": "shutdown"})
        wait_for(lambda m: m.get("id") == 3)
        send({"method": "exit"})
        return server.wait(timeout=120)

    send(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": {"trusted": True},
                "capabilities": {"window": {"workDoneProgress": True}},
            },
        }
    )
    wait_for(lambda m: m.get("id") == 1)
    if until_initialize:
        return shut_down()
    send({"method": "initialized", "params": {}})
    uri = file.as_uri()
    document = {
        "uri": uri,
        "languageId": "python",
        "version": 1,
        "text": file.read_text(),
    }
    send({"method": "textDocument/didOpen", "params": {"textDocument": document}})

    def published(message: dict) -> bool:
        return message.get("method") == "textDocument/publishDiagnostics"

    wait_for(published)
    for _ in range(2):
        send(
            {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}}
        )
        wait_for(published)
    send(
        {
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {"command": "qgates.summary", "arguments": []},
        }
    )
    wait_for(lambda m: m.get("id") == 2)
    return shut_down()


if __name__ == "__main__":
    sys.exit(main())
