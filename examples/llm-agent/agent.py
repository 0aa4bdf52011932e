#!/usr/bin/env python3
"""An LLM agent whose tools run on a kruntimes session.

A tool-calling loop against any OpenAI-compatible chat completions endpoint: the model gets three
tools — exec (a shell command), read_file and write_file — that act on one session Run, a
workspace on a warm pod of its own, and answers when it is done. Plain HTTP with the standard
library; no OpenAI SDK.

    export OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini
    python agent.py "Write a script that prints the first 10 primes, run it, and tell me the output."

Options: --runtime (default python), --max-steps (default 12), --namespace. Credentials for
kruntimes: $KUBECONFIG (or ~/.kube/config) or the pod's ServiceAccount; the gateway is looked up
in $KRT_GATEWAY_NAMESPACE (default "kruntimes").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from kruntimes import Client, KruntimesError, Session

#: Bytes of a tool's output the model gets back (the rest is cut and marked): a command that
#: prints megabytes must not blow the context window or the request size.
MAX_TOOL_OUTPUT = 8000
#: The longest a single exec may run.
MAX_EXEC_SECONDS = 120

SYSTEM = (
    "You are an agent with a Linux workspace (a kruntimes session). Use the tools to do the task: "
    "exec runs a shell command in the workspace, write_file and read_file work on files in it "
    "(paths relative to the workspace). Check your work by running it. When you are done, answer "
    "with a short summary of what you did and the result, without calling a tool."
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "exec",
            "description": "Run a shell command (bash -c) in the workspace; returns exit code, stdout and stderr.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The shell command line."},
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_EXEC_SECONDS,
                                        "description": f"Kill it after this long (default 60, at most {MAX_EXEC_SECONDS})."},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": f"Read a text file of the workspace (at most {MAX_TOOL_OUTPUT} bytes from offset).",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace."},
                    "offset": {"type": "integer", "minimum": 0, "description": "Byte to start at (default 0)."},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or replace a file of the workspace (parent directories are created).",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace."},
                    "content": {"type": "string", "description": "The whole content."},
                },
                "required": ["path", "content"],
                "additionalProperties": False,
            },
        },
    },
]


def bounded(data: bytes, limit: int = MAX_TOOL_OUTPUT) -> str:
    """Text of at most `limit` bytes: the head and the tail, with what was cut in between."""
    if len(data) <= limit:
        return data.decode("utf-8", "replace")
    head, tail = data[: limit // 2], data[-(limit // 2):]
    return (head.decode("utf-8", "replace") + f"\n[... {len(data) - len(head) - len(tail)} bytes cut ...]\n"
            + tail.decode("utf-8", "replace"))


class Tools:
    """The model's tools, each acting on the session; every result is a JSON string."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def call(self, name: str, raw_args: str) -> str:
        try:
            args = json.loads(raw_args or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as e:
            return json.dumps({"error": f"arguments are not valid JSON: {e}"})
        fn = {"exec": self.exec, "read_file": self.read_file, "write_file": self.write_file}.get(name)
        if fn is None:
            return json.dumps({"error": f"no tool named {name!r}; use exec, read_file or write_file"})
        try:
            return json.dumps(fn(**args))
        except (TypeError, ValueError) as e:  # missing, unknown or mistyped arguments
            return json.dumps({"error": f"bad arguments for {name}: {e}"})
        except KruntimesError as e:  # a missing file, a path outside the workspace, …
            return json.dumps({"error": f"{type(e).__name__}: {e.message}"})

    def exec(self, command: str, timeout_seconds: int = 60) -> dict[str, Any]:
        timeout = max(1, min(int(timeout_seconds), MAX_EXEC_SECONDS))
        r = self.session.exec(command, timeout=timeout)
        out: dict[str, Any] = {"exit_code": r.exit_code, "stdout": bounded(r.stdout), "stderr": bounded(r.stderr)}
        if r.reason != "EXITED":
            out["ended"] = f"{r.reason} {r.signal}".strip()
        return out

    def read_file(self, path: str, offset: int = 0) -> dict[str, Any]:
        size = self.session.stat(path).size
        data = self.session.read_file(path, offset=offset, length=MAX_TOOL_OUTPUT)
        out: dict[str, Any] = {"path": path, "size": size, "content": data.decode("utf-8", "replace")}
        if offset + len(data) < size:
            out["truncated"] = f"{size - offset - len(data)} more bytes; read again with offset={offset + len(data)}"
        return out

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        info = self.session.write_file(path, content, parents=True)
        return {"path": info.path, "size": info.size}


class ChatClient:
    """POST {base_url}/chat/completions with the OpenAI wire format."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout: float = 120) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.model = model
        self.timeout = timeout

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body = json.dumps({"model": self.model, "messages": messages, "tools": TOOLS, "tool_choice": "auto"}).encode()
        for attempt in range(4):
            req = urllib.request.Request(self.url, data=body, method="POST", headers={
                "Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    return json.loads(res.read())
            except urllib.error.HTTPError as e:
                detail = e.read().decode("utf-8", "replace")[:1000]
                if e.code in (429, 500, 502, 503) and attempt < 3:
                    wait = float(e.headers.get("Retry-After") or 2 ** attempt)
                    print(f"  (the endpoint answered {e.code}; retrying in {wait:.0f}s)", file=sys.stderr)
                    time.sleep(min(wait, 30))
                    continue
                raise SystemExit(f"chat completions request to {self.url} failed: HTTP {e.code}: {detail}") from None
            except urllib.error.URLError as e:
                raise SystemExit(f"cannot reach {self.url}: {e.reason} (check OPENAI_BASE_URL)") from None
        raise AssertionError("unreachable")


def short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def run_agent(chat: ChatClient, tools: Tools, task: str, max_steps: int) -> str | None:
    """The loop: ask the model, run the tools it calls, hand back their results, until it answers
    without a tool call (its answer) or max_steps model calls were made (None)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    for step in range(1, max_steps + 1):
        res = chat.complete(messages)
        try:
            msg = res["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise SystemExit(f"the endpoint's answer has no choices[0].message: {short(json.dumps(res), 300)}") from None
        calls = msg.get("tool_calls") or []
        # The assistant turn goes back as it came (with its tool_calls), then one tool message per call.
        messages.append({k: v for k, v in msg.items() if k in ("role", "content", "tool_calls")})
        if not calls:
            return msg.get("content") or ""
        for call in calls:
            fn = call.get("function") or {}
            name, raw_args = fn.get("name", ""), fn.get("arguments", "")
            print(f"[step {step}] {name} {short(raw_args)}")
            result = tools.call(name, raw_args)
            print(f"         → {short(result)}")
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": result})
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task", help="what the agent should do")
    ap.add_argument("--runtime", default="python", help="the Runtime of the session (default python)")
    ap.add_argument("--max-steps", type=int, default=12, help="model calls at most (default 12)")
    ap.add_argument("--namespace", help="namespace of the session Run (default: the kubeconfig's)")
    args = ap.parse_args()
    missing = [v for v in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL") if not os.environ.get(v)]
    if missing:
        ap.error(f"set {', '.join(missing)} (an OpenAI-compatible endpoint, its key and a model)")
    chat = ChatClient(os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"], os.environ["OPENAI_MODEL"])

    with Client(namespace=args.namespace) as client:
        session = client.sessions.create(args.runtime, idle_timeout="10m", timeout="1h",
                                          labels={"app.kubernetes.io/name": "llm-agent"})
        print(f"session {session.namespace}/{session.name} is ready")
        try:
            answer = run_agent(chat, Tools(session), args.task, args.max_steps)
        finally:
            # Also on an error or Ctrl-C: drain the session (nothing the model started outlives
            # it; its pod is replaced by a fresh one), then delete the Run.
            session.close(wait=True, timeout=120)
            client.runs.delete(session.name)
    if answer is None:
        print(f"stopped: no answer after {args.max_steps} model calls (--max-steps)", file=sys.stderr)
        return 2
    print("\n" + answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
