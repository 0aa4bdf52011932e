/**
 * `krt mcp`'s flags, checked before it connects to anything: the --http address rules, flags that
 * apply to --http only, sizes and durations. (Serving is covered by the server, HTTP and e2e tests.)
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createCli } from "../cli.ts";
import { ExitCode } from "../exit-codes.ts";

async function krt(args: string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new PassThrough();
  let err = "";
  stderr.on("data", (d) => {
    err += d.toString();
  });
  const code = await createCli().run(["mcp", ...args], {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
    env: {},
    nowMicros: () => 0,
    colorDepth: 1,
  });
  return { code, stderr: err };
}

const dir = mkdtempSync(join(tmpdir(), "krt-mcp-cmd-"));
const tokenFile = join(dir, "token");
writeFileSync(tokenFile, "t\n");
writeFileSync(join(dir, "empty"), "\n");

describe("krt mcp refuses, before connecting", () => {
  test.each([
    [["--http", "0.0.0.0:8765"], "loopback only"],
    [["--http", "0.0.0.0:8765", "--allow-remote"], "needs a bearer token"],
    [["--http", "8765"], "is not HOST:PORT"],
    [["--http", "127.0.0.1:1", "--http-token-file", join(dir, "empty")], "is empty"],
    [["--http", "127.0.0.1:1", "--http-token-file", join(dir, "missing")], "cannot read it"],
    [["--http", "127.0.0.1:1", "--tls-cert", tokenFile], "--tls-cert and --tls-key go together"],
    [
      ["--allow-remote", "--http-token-file", tokenFile],
      "--http-token-file, --allow-remote apply to --http only",
    ],
    [["--max-output", "lots"], '--max-output "lots" must be a byte size'],
    [["--max-write", "65Mi"], "from 1 to 64Mi"],
    [["--session-idle-timeout", "soon"], "is not a duration"],
    [["--task-ttl", "500ms"], "is not a duration of a second or more"],
    [["-o", "json"], "-o does not apply to krt mcp"],
    [["-A"], "-A/--all-namespaces does not apply"],
    [["--gateway-via", "carrier-pigeon"], '--gateway-via "carrier-pigeon"'],
  ])("%p", async (args, message) => {
    const r = await krt(args as string[]);
    expect(r.code).toBe(ExitCode.Usage);
    expect(r.stderr).toContain(message as string);
  });
});
