import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { artifactStoreId, Limits, parseSnapshot, snapshotJson } from "@kruntimes/api";
import { OptionsError, parseOptions } from "../options.ts";
import { collect } from "./collect.ts";
import { FilesystemStore } from "./fs-store.ts";
import { mergeRefs } from "./run-artifacts.ts";
import { endpointOptions, S3Store } from "./s3-store.ts";
import { artifactKey, isTransient } from "./store.ts";
import { tarGzStream, tarHeader } from "./tar-gz.ts";

const ref = (name: string, attempt: number) => ({
  name,
  driver: "s3" as const,
  type: "file" as const,
  location: `s3://b/${attempt}/${name}`,
  attempt,
});

describe("artifact pieces", () => {
  test("a later attempt's artifact replaces the reference of the same name; the list stays bounded", () => {
    const merged = mergeRefs([ref("a", 1), ref("b", 1)], [ref("a", 2)]);
    expect(merged.map((r) => `${r.name}@${r.attempt}`)).toEqual(["b@1", "a@2"]);
    const many = Array.from({ length: 40 }, (_, i) => ref(`f${i}`, 1));
    expect(mergeRefs([], many)).toHaveLength(Limits.artifactCount);
  });

  test("transient vs permanent store errors", () => {
    expect(isTransient(Object.assign(new Error("x"), { code: "ConnectionRefused" }))).toBe(true);
    expect(isTransient({ status: 503 })).toBe(true);
    expect(isTransient({ status: 429 })).toBe(true);
    expect(isTransient({ code: "InvalidAccessKeyId" })).toBe(false);
    expect(isTransient({ code: "NoSuchBucket" })).toBe(false);
    expect(isTransient({ status: 403 })).toBe(false);
  });

  test("keys, locations and path-style vs virtual-hosted addressing", () => {
    expect(artifactKey("ns", "uid", 2, "out.tar.gz")).toBe("ns/uid/2/out.tar.gz");
    const s = new S3Store({ bucket: "b", prefix: "p/", endpoint: "http://s3:9000", pathStyle: true });
    expect(s.location("ns/u/1/x")).toBe("s3://b/p/ns/u/1/x");
    expect(s.keyOf("s3://b/p/ns/u/1/x")).toBe("ns/u/1/x");
    expect(s.keyOf("s3://other/p/ns/u/1/x")).toBeUndefined();
    expect(endpointOptions({ bucket: "b", endpoint: "http://s3:9000", pathStyle: true })).toEqual({
      endpoint: "http://s3:9000",
    });
    expect(endpointOptions({ bucket: "b", endpoint: "https://s3.example.com" })).toEqual({
      endpoint: "https://b.s3.example.com",
      virtualHostedStyle: true,
    });
    expect(endpointOptions({ bucket: "b", region: "eu-west-1" }).endpoint).toBe(
      "https://b.s3.eu-west-1.amazonaws.com",
    );
  });

  test("store ids ignore key order; snapshots are validated", () => {
    const a = { s3: { bucket: "b", region: "r" } };
    const b = { s3: { region: "r", bucket: "b" } };
    expect(snapshotJson(a)).toBe(snapshotJson(b));
    expect(artifactStoreId("ns", a)).toBe(artifactStoreId("ns", b));
    expect(artifactStoreId("ns", a)).not.toBe(artifactStoreId("other", a));
    expect(() => parseSnapshot("{}")).toThrow("exactly one of s3 or filesystem");
    expect(() => parseSnapshot("nope")).toThrow("not JSON");
    expect(parseSnapshot(snapshotJson(a))).toEqual(a);
  });

  test("tar headers: long paths split into prefix + name, checksum as tar computes it", () => {
    const long = `${"d".repeat(120)}/${"f".repeat(90)}`;
    const h = tarHeader({ rel: long, kind: "file", size: 5, exec: false });
    const text = new TextDecoder().decode(h);
    expect(text.slice(0, 90)).toBe("f".repeat(90));
    expect(text.slice(345, 465)).toBe("d".repeat(120));
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] as number);
    expect(Number.parseInt(text.slice(148, 154), 8)).toBe(sum);
    expect(() => tarHeader({ rel: "x".repeat(101), kind: "file", size: 1, exec: false })).toThrow(
      "cannot be stored",
    );
  });

  test("the same tree gives the same archive bytes", async () => {
    const d = mkdtempSync(join(tmpdir(), "krt-tar-"));
    mkdirSync(join(d, "t/sub"), { recursive: true });
    writeFileSync(join(d, "t/sub/b.txt"), "b");
    writeFileSync(join(d, "t/a.txt"), "a");
    const bytes = async () => {
      const [p] = await collect(d, { maxCount: 32, maxArtifactBytes: 1e6, maxTotalBytes: 1e6 });
      if (p?.kind !== "dir") throw new Error("expected a directory");
      expect(p.entries.map((e) => e.rel)).toEqual(["a.txt", "sub", "sub/b.txt"]);
      return Buffer.concat(await Array.fromAsync(tarGzStream(p.path, p.entries)));
    };
    const first = await bytes();
    writeFileSync(join(d, "t/a.txt"), "a");
    expect((await bytes()).equals(first)).toBe(true);
  });

  test("runtimed's options: the store as JSON, credentials in pairs", () => {
    const env = { POD_NAME: "p", POD_NAMESPACE: "ns", POD_UID: "u", KRT_RUNTIME: "bash" };
    expect(parseOptions([], env).artifacts).toBeUndefined();
    const o = parseOptions([], {
      ...env,
      KRT_ARTIFACT_STORE: '{"s3":{"bucket":"b"}}',
      AWS_ACCESS_KEY_ID: "id",
      AWS_SECRET_ACCESS_KEY: "secret",
    });
    expect(o.artifacts).toMatchObject({
      store: { s3: { bucket: "b" } },
      credentials: { accessKeyId: "id" },
      retryBudgetMs: 300000,
    });
    expect(() => parseOptions([], { ...env, KRT_ARTIFACT_STORE: "{}" })).toThrow(OptionsError);
    expect(() =>
      parseOptions([], { ...env, KRT_ARTIFACT_STORE: '{"s3":{"bucket":"b"}}', AWS_ACCESS_KEY_ID: "id" }),
    ).toThrow("must be set together");
  });
});

describe("filesystem store directories", () => {
  test("directories it creates are writable by every user (runtimed and the maintainer may differ); the root is untouched", async () => {
    const root = mkdtempSync(join(tmpdir(), "krt-fs-modes-"));
    chmodSync(root, 0o755);
    const store = new FilesystemStore(root);
    await store.put(
      "ns/uid/1/out.txt",
      (async function* () {
        yield new TextEncoder().encode("x");
      })(),
    );
    const mode = (p: string) => statSync(join(root, p)).mode & 0o777;
    expect([mode("ns"), mode("ns/uid"), mode("ns/uid/1")]).toEqual([0o777, 0o777, 0o777]);
    expect(mode("")).toBe(0o755);
    expect(await store.deletePrefix("ns/uid/")).toBe(1);
  });
});
