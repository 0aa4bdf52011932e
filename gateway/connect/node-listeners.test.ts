/**
 * The https listener picks up a replaced certificate without a restart, both the way the kubelet
 * updates a mounted Secret (cert-manager renewals: the volume's `..data` symlink swapped to a new
 * directory) and a file rewritten in place; a broken pair keeps the old certificate.
 */
import { afterAll, expect, test } from "bun:test";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { makeTestPki, type TestPki } from "../testing/tls.ts";
import { type Listener, serveTls } from "./node-listeners.ts";

const listeners: Listener[] = [];
afterAll(async () => {
  for (const l of listeners) await l.close();
});

/** A Secret volume as the kubelet lays it out: tls.crt → ..data/tls.crt, ..data → ..<version>. */
function secretVolume(pki: TestPki) {
  const dir = mkdtempSync(join(tmpdir(), "krt-gw-tls-volume-"));
  let n = 0;
  const publish = (p: TestPki) => {
    const version = join(dir, `..v${++n}`);
    mkdirSync(version);
    copyFileSync(p.certFile, join(version, "tls.crt"));
    copyFileSync(p.keyFile, join(version, "tls.key"));
    symlinkSync(`..v${n}`, join(dir, "..data_tmp"));
    renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
  };
  publish(pki);
  symlinkSync("..data/tls.crt", join(dir, "tls.crt"));
  symlinkSync("..data/tls.key", join(dir, "tls.key"));
  return { cert: join(dir, "tls.crt"), key: join(dir, "tls.key"), publish };
}

async function start(files: { cert: string; key: string }): Promise<number> {
  const l = await serveTls(
    {
      routes: () => {},
      routerOptions: {},
      fallback: () => new Response("ok"),
      maxBodyBytes: 1024,
      log: pino({ level: "silent" }),
    },
    "127.0.0.1",
    0,
    files,
  );
  listeners.push(l);
  return l.port;
}

/** A fresh TLS connection (no pooled one from before the swap) verified against `pki`'s CA alone. */
const trusts = (port: number, pki: TestPki) =>
  fetch(`https://localhost:${port}/`, {
    keepalive: false,
    headers: { connection: "close" },
    tls: { ca: readFileSync(pki.caFile, "utf8") },
  } as RequestInit).then(
    (r) => r.ok,
    () => false,
  );

async function until(what: string, f: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await f())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

test("a renewed certificate in a Secret volume (..data symlink swap) is served without a restart", async () => {
  const [a, b] = [makeTestPki(), makeTestPki()];
  const vol = secretVolume(a);
  const port = await start(vol);
  expect(await trusts(port, a)).toBe(true);
  expect(await trusts(port, b)).toBe(false);
  vol.publish(b);
  await until("the new certificate", () => trusts(port, b));
  expect(await trusts(port, a)).toBe(false);
});

test("a pair rewritten in place is reloaded; a broken one keeps the old certificate", async () => {
  const [a, b] = [makeTestPki(), makeTestPki()];
  const dir = mkdtempSync(join(tmpdir(), "krt-gw-tls-files-"));
  const files = { cert: join(dir, "tls.crt"), key: join(dir, "tls.key") };
  copyFileSync(a.certFile, files.cert);
  copyFileSync(a.keyFile, files.key);
  const port = await start(files);
  expect(await trusts(port, a)).toBe(true);
  writeFileSync(files.cert, "not a certificate\n");
  await Bun.sleep(600);
  expect(await trusts(port, a)).toBe(true);
  copyFileSync(b.certFile, files.cert);
  copyFileSync(b.keyFile, files.key);
  await until("the new certificate", () => trusts(port, b));
  expect(await trusts(port, a)).toBe(false);
});
