/**
 * krt's session commands (`krt exec`, `krt cp`, `krt ls`) as a user runs them — the krt process —
 * against a stand-in SessionService over strict TLS: output streamed as produced (the stand-in
 * holds the command until krt has printed its first line), exit codes passed through, chunked
 * uploads sharing one upload, streamed downloads, paged listings, and the gateway's errors mapped
 * to krt's exit codes. test/e2e/gateway-sessions.test.ts runs them against the real gateway.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type StandinSessionDataplane,
  startStandinSessionDataplane,
} from "../../gateway/session/testing/standin-session-dataplane.ts";
import { makeTestPki, type TestPki } from "../../gateway/testing/tls.ts";
import { ExitCode } from "../exit-codes.ts";
import { UPLOAD_CHUNK_BYTES } from "./session-client.ts";

const MAIN = join(import.meta.dir, "..", "main.ts");
let pki: TestPki;
let gw: StandinSessionDataplane;
let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  pki = makeTestPki();
  gw = startStandinSessionDataplane({
    podUID: "",
    serves: new Map(),
    gateway: {
      token: "test-token",
      runs: new Set(["box"]),
      tls: { cert: readFileSync(pki.certFile, "utf8"), key: readFileSync(pki.keyFile, "utf8") },
    },
  });
  dir = mkdtempSync(join(tmpdir(), "krt-session-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team}}]
current-context: x
`,
  );
  env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    KUBECONFIG: kubeconfig,
    KRT_GATEWAY: `https://localhost:${gw.port}`,
  };
});
afterAll(() => gw?.stop());

function krt(args: string[], o: { env?: Record<string, string>; stdin?: Uint8Array } = {}) {
  // Options before the positionals: `krt exec RUN -- cmd` passes everything after -- to the command.
  return Bun.spawn(["bun", MAIN, args[0] as string, "--ca-file", pki.caFile, ...args.slice(1)], {
    env: { ...env, ...o.env },
    stdin: o.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function run(args: string[], o: Parameters<typeof krt>[1] = {}) {
  const p = krt(args, o);
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

describe("krt exec", () => {
  test("prints the command's output and exits 0", async () => {
    const r = await run(["exec", "box", "--", "echo", "hi", "there"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("hi there\n");
    expect(r.code).toBe(0);
  });

  test("passes the exit code through; stderr goes to stderr", async () => {
    const r = await run(["exec", "box", "--", "exit", "3"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe("exiting 3\n");
    expect(r.stdout).toBe("");
  });

  test("streams: the first line is printed while the command still runs", async () => {
    const p = krt(["exec", "box", "--", "gate", "first"]);
    const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("first\n");
    // The stand-in holds the command until now: a krt that buffered would not have printed it.
    gw.release();
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stderr).text()).toBe("released\n");
  });

  test("--shell, --workdir and -e go to the session", async () => {
    const r = await run([
      "exec",
      "box",
      "--shell",
      "make all",
      "--workdir",
      "src",
      "-e",
      "A=1",
      "-e",
      "B=x=y",
    ]);
    expect(r.stdout).toBe('make all|src|{"A":"1","B":"x=y"}\n');
  });

  test.each([
    ["a missing session", ["exec", "ghost", "--", "echo"], {}, ExitCode.NotFound, "not found"],
    [
      "a refused token",
      ["exec", "box", "--token", "wrong", "--", "echo"],
      {},
      ExitCode.Forbidden,
      "refused the token",
    ],
    ["a full queue", ["exec", "box", "--", "busy"], {}, ExitCode.Busy, "queue is full (retry after 3s)"],
    ["nothing to run", ["exec", "box"], {}, ExitCode.Usage, "nothing to run"],
  ] as const)("%s → exit %p", async (_what, args, extra, code, message) => {
    const r = await run([...args], { env: extra });
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
  });
});

describe("krt cp", () => {
  test("uploads in 1 MiB chunks of one upload; the file appears whole", async () => {
    const data = new Uint8Array(2 * UPLOAD_CHUNK_BYTES + 12345).map((_, i) => (i * 13) % 256);
    const local = join(dir, "up.bin");
    writeFileSync(local, data);
    const before = gw.writes.length;
    const r = await run(["cp", local, "box:in/"]);
    expect(r.code).toBe(0);
    expect(Buffer.from(gw.files.get("in/up.bin") as Uint8Array).equals(Buffer.from(data))).toBe(true);
    const writes = gw.writes.slice(before);
    expect(writes.map((w) => [w.offset, w.bytes, w.last])).toEqual([
      [0, UPLOAD_CHUNK_BYTES, false],
      [UPLOAD_CHUNK_BYTES, UPLOAD_CHUNK_BYTES, false],
      [2 * UPLOAD_CHUNK_BYTES, 12345, true],
    ]);
    expect(new Set(writes.map((w) => w.uploadId)).size).toBe(1);
  });

  test("downloads to a file and to stdout", async () => {
    const data = new Uint8Array(300 * 1024).map((_, i) => i % 199);
    gw.files.set("out/result.bin", data);
    const local = join(dir, "result.bin");
    expect((await run(["cp", "box:out/result.bin", local])).code).toBe(0);
    expect(readFileSync(local).equals(Buffer.from(data))).toBe(true);
    gw.files.set("hello.txt", new TextEncoder().encode("hello\n"));
    const r = await run(["cp", "box:hello.txt", "-"]);
    expect(r.stdout).toBe("hello\n");
  });

  test("errors: a missing remote file, --mode create over an existing file, two local paths", async () => {
    const missing = await run(["cp", "box:nope.txt", join(dir, "nope")]);
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toContain("box:nope.txt");
    const local = join(dir, "small.txt");
    writeFileSync(local, "x");
    const exists = await run(["cp", local, "box:hello.txt", "--mode", "create"]);
    expect(exists.code).toBe(ExitCode.Conflict);
    expect((await run(["cp", local, join(dir, "other")])).code).toBe(ExitCode.Usage);
  });
});

describe("krt ls", () => {
  test("pages through a directory in order; -o json", async () => {
    for (const n of ["c", "a", "b", "é", "d"]) gw.files.set(`many/${n}`, new TextEncoder().encode(n));
    const before = gw.calls.filter((c) => c.method === "ListFiles").length;
    const r = await run(["ls", "box:many", "--page-size", "2"]);
    expect(r.code).toBe(0);
    const names = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/).at(-1));
    expect(names).toEqual(["a", "b", "c", "d", "é"]);
    expect(gw.calls.filter((c) => c.method === "ListFiles").length - before).toBe(3);
    const json = JSON.parse((await run(["ls", "box:many", "-o", "json"])).stdout) as {
      name: string;
      type: string;
      size: number;
    }[];
    expect(json.map((e) => [e.name, e.type, e.size])).toEqual([
      ["a", "file", 1],
      ["b", "file", 1],
      ["c", "file", 1],
      ["d", "file", 1],
      ["é", "file", 2],
    ]);
  });
});
