import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WorkerReply } from "../server/functions/worker.ts";
import { bashFunctions, headerVariable, invocationVars } from "./function-worker.ts";

describe("bash function worker", () => {
  test("header names become KRUNTIME_HEADER_<NAME>", () => {
    expect(headerVariable("x-request-id")).toBe("KRUNTIME_HEADER_X_REQUEST_ID");
    expect(headerVariable("content.type2")).toBe("KRUNTIME_HEADER_CONTENT_TYPE2");
  });

  test("invocation variables survive quoting when bash sources them", () => {
    const tricky = `it's "$HOME" $(echo no) \`x\`\nline2`;
    const vars = invocationVars(
      {
        invocationId: "inv-1",
        body: new Uint8Array(),
        contentType: "text/plain",
        headers: { "x-tricky": tricky },
      },
      "/tmp/meta",
    );
    const script = `source /dev/stdin <<'KRT_EOF'\n${vars}KRT_EOF\nprintf '%s|%s|%s|%s' "$KRUNTIME_INVOCATION_ID" "$KRUNTIME_CONTENT_TYPE" "$KRUNTIME_RESPONSE_META" "$KRUNTIME_HEADER_X_TRICKY"`;
    const out = Bun.spawnSync({ cmd: ["/bin/bash", "--norc", "-c", script] }).stdout.toString();
    expect(out).toBe(`inv-1|text/plain|/tmp/meta|${tricky}`);
  });
});

describe("bash function worker process", () => {
  const dir = mkdtempSync(join(tmpdir(), "krt-bash-fn-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function start(source: string, handler = "h") {
    const sourcePath = join(dir, `${handler}-${Math.random().toString(36).slice(2)}.sh`);
    writeFileSync(sourcePath, source);
    return bashFunctions.start({
      interpreter: "/bin/bash",
      sourcePath,
      handler,
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      dir,
      socketPath: "",
      maxResponseBytes: 1024,
      onStray: () => {},
    });
  }
  const call = (id: string) => ({
    invocationId: id,
    body: new TextEncoder().encode(id),
    contentType: "",
    headers: {},
  });
  const text = (r: WorkerReply) => (r.kind === "ok" ? new TextDecoder().decode(r.body) : `${r.kind}`);
  const exitCode = (r: WorkerReply) => (r.kind === "handler_error" ? r.error.exitCode : -1);

  test("every way a fork can end keeps the status lines in step", async () => {
    // The script uses fds 3-9 itself at source time and runs under set -eu.
    const worker = start(
      [
        "set -eu",
        "exec 3>/dev/null 4>/dev/null 9>/dev/null",
        "h() {",
        '  read -r -d "" b || true',
        "  case $b in",
        "    exit*) exit 4 ;;",
        "    return*) return 5 ;;",
        "    signal*) kill -9 $BASHPID ;;",
        "    false*) false ;;",
        '    *) printf "ok %s" "$b" ;;',
        "  esac",
        "}",
      ].join("\n"),
    );
    await worker.loaded;
    const answers: unknown[] = [];
    for (const id of ["a", "exit", "b", "return", "c", "signal", "d", "false", "e"]) {
      const reply = await worker.invoke(call(id));
      answers.push(reply.kind === "ok" ? text(reply) : exitCode(reply));
    }
    expect(answers).toEqual(["ok a", 4, "ok b", 5, "ok c", 137, "ok d", 1, "ok e"]);
    worker.kill();
    await worker.exited;
  });

  test("a handler that replaces the EXIT trap is still answered (by the shell's report)", async () => {
    const worker = start("h() { trap 'echo bye >&2' EXIT; printf hi; }");
    await worker.loaded;
    expect(text(await worker.invoke(call("x")))).toBe("hi");
    expect(text(await worker.invoke(call("y")))).toBe("hi");
    worker.kill();
    await worker.exited;
  });
});
