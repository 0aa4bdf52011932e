/**
 * Starts the artifact tests' S3-compatible server (test/localcluster/s3server, gofakes3 on a
 * filesystem backend) as a real process on 127.0.0.1 with a free port and its own credentials.
 * The binary is built on first use into the version-keyed cache (build-binaries.sh s3server).
 * `stop()` and `start()` again on the same port and data directory simulate a store outage.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cacheDir, readVersions } from "./binaries.ts";

const repoRoot = join(import.meta.dir, "../..");

export interface S3ServerOptions {
  buckets: string[];
  env?: Record<string, string | undefined>;
}

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  dataDir: string;
  /** Stops the process (the data stays); `start()` brings it back on the same address. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes the data. */
  close(): Promise<void>;
}

export function s3ServerBinary(env: Record<string, string | undefined> = process.env): string {
  const src = join(repoRoot, "test/localcluster/s3server");
  const hash = createHash("sha256");
  for (const f of ["go.mod", "go.sum", "main.go"]) hash.update(readFileSync(join(src, f)));
  const version = (readVersions(repoRoot) as unknown as Record<string, string>).GOFAKES3_VERSION;
  const bin = join(
    cacheDir(env),
    "bin",
    `s3server-${version}-${hash.digest("hex").slice(0, 12)}`,
    "s3server",
  );
  if (!existsSync(bin)) {
    const b = Bun.spawnSync(
      ["bash", join(repoRoot, "test/localcluster/build/build-binaries.sh"), "s3server"],
      {
        stdout: "inherit",
        stderr: "inherit",
        env: env as Record<string, string>,
      },
    );
    if (b.exitCode !== 0 || !existsSync(bin))
      throw new Error(
        `building the S3 test server failed; run: bash test/localcluster/build/build-binaries.sh s3server`,
      );
  }
  return bin;
}

export async function startS3Server(o: S3ServerOptions): Promise<S3Server> {
  const bin = s3ServerBinary(o.env);
  const dataDir = mkdtempSync(join(tmpdir(), "krt-s3-"));
  const accessKeyId = `KRT${randomBytes(6).toString("hex").toUpperCase()}`;
  const secretAccessKey = randomBytes(20).toString("hex");
  let addr = "127.0.0.1:0";
  let proc: ReturnType<typeof Bun.spawn> | undefined;

  const start = async () => {
    proc = Bun.spawn(
      [bin, "--addr", addr, "--dir", dataDir, "--access-key", accessKeyId, "--buckets", o.buckets.join(",")],
      { stdout: "pipe", stderr: "inherit" },
    );
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const deadline = Date.now() + 10_000;
    while (!/listening on http:\/\/(\S+)\n/.test(text)) {
      if (Date.now() > deadline) throw new Error(`s3server did not start: ${text}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`s3server exited at start: ${text}`);
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    addr = (/listening on http:\/\/(\S+)\n/.exec(text) as RegExpExecArray)[1] as string;
  };
  const stop = async () => {
    if (!proc) return;
    proc.kill("SIGKILL");
    await proc.exited;
    proc = undefined;
  };
  await start();
  return {
    get endpoint() {
      return `http://${addr}`;
    },
    accessKeyId,
    secretAccessKey,
    region: "us-east-1",
    dataDir,
    stop,
    start,
    close: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
