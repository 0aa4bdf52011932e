#!/usr/bin/env bun
/**
 * Artifact throughput: one large file (default 256 MiB) through kruntimes' S3 path — runtimed's
 * uploader (streamed, sha256, multipart via Bun.S3Client's writer) and the download side the
 * maintainer + krt use (streamed get, sha256, write to disk; without the maintainer's loopback HTTP
 * hop, which needs a cluster) — against a direct copy with the same
 * S3 server (Bun.S3Client writing/reading the file in one call, no hashing), and a local disk copy
 * for scale. Each variant runs `--reps` times; medians are reported, with the ratio.
 *
 *   bun bench/artifacts/throughput.ts [--mib 256] [--reps 3] [--record bench/results]
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { collect } from "../../runtimed/artifacts/collect.ts";
import { S3Store } from "../../runtimed/artifacts/s3-store.ts";
import { uploadAll } from "../../runtimed/artifacts/uploader.ts";
import { startS3Server } from "../../test/localcluster/s3-server.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: a } = parseArgs({
  options: {
    mib: { type: "string", default: "256" },
    reps: { type: "string", default: "3" },
    record: { type: "string" },
  },
});
const mib = Number(a.mib);
const reps = Number(a.reps);
const bytes = mib * 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), "krt-bench-artifacts-"));
const src = join(work, "in");
mkdirSync(src);
const file = join(src, "payload.bin");
{
  const out = createWriteStream(file);
  for (let i = 0; i < mib; i++) out.write(randomBytes(1024 * 1024));
  await new Promise<void>((r) => out.end(r));
}
const s3 = await startS3Server({ buckets: ["bench"] });
const cfg = {
  bucket: "bench",
  endpoint: s3.endpoint,
  pathStyle: true,
  region: s3.region,
  accessKeyId: s3.accessKeyId,
  secretAccessKey: s3.secretAccessKey,
};
const store = new S3Store(cfg);
const direct = new Bun.S3Client({ ...cfg, virtualHostedStyle: false });

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;

const results: Record<string, number[]> = {
  "kruntimes upload": [],
  "direct upload": [],
  "kruntimes download": [],
  "direct download": [],
  "disk copy": [],
};
for (let r = 0; r < reps; r++) {
  let key = "";
  results["kruntimes upload"]!.push(
    await timed(async () => {
      const refs = await uploadAll(
        store,
        await collect(src, { maxCount: 32, maxArtifactBytes: 2 * bytes, maxTotalBytes: 2 * bytes }),
        {
          namespace: "bench",
          runUID: `run-${r}`,
          attempt: 1,
          maxArtifactBytes: 2 * bytes,
          retryBudgetMs: 0,
          retryDelayMs: 100,
        },
      );
      key = store.keyOf(refs[0]!.location) as string;
    }),
  );
  results["direct upload"]!.push(
    await timed(async () => void (await direct.write(`direct-${r}`, Bun.file(file)))),
  );
  const dl = join(work, `dl-${r}`);
  results["kruntimes download"]!.push(
    await timed(async () => {
      const o = await store.get(key);
      if (!o) throw new Error(`${key} is missing from the store`);
      const hash = new Bun.CryptoHasher("sha256");
      const out = Bun.file(dl).writer();
      for await (const chunk of o.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        out.write(chunk);
      }
      await out.end();
      hash.digest("hex");
    }),
  );
  rmSync(dl, { force: true });
  results["direct download"]!.push(
    await timed(async () => void (await Bun.write(dl, direct.file(`direct-${r}`)))),
  );
  rmSync(dl, { force: true });
  results["disk copy"]!.push(await timed(async () => copyFileSync(file, dl)));
  rmSync(dl, { force: true });
  await store.deletePrefix("bench/");
  await direct.delete(`direct-${r}`);
}
await s3.close();
rmSync(work, { recursive: true, force: true });

const rows = Object.entries(results).map(([k, v]) => ({
  variant: k,
  seconds: median(v),
  mibPerSec: mib / median(v),
  all: v,
}));
const by = Object.fromEntries(rows.map((r) => [r.variant, r]));
const ratio = {
  upload: by["kruntimes upload"]!.mibPerSec / by["direct upload"]!.mibPerSec,
  download: by["kruntimes download"]!.mibPerSec / by["direct download"]!.mibPerSec,
};
const m = machineInfo();
const md = [
  `# Artifact throughput, ${new Date().toISOString().slice(0, 10)}`,
  "",
  `Measured by \`bun bench/artifacts/throughput.ts --mib ${mib} --reps ${reps}\`: one ${mib} MiB random file, the S3-compatible test server (gofakes3 on its filesystem backend, test/localcluster/s3server) on loopback, medians of ${reps} runs.`,
  "",
  `Machine: ${JSON.stringify(m)}`,
  "",
  "| variant | median s | MiB/s | runs (s) |",
  "|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.variant} | ${r.seconds.toFixed(2)} | ${r.mibPerSec.toFixed(1)} | ${r.all.map((x) => x.toFixed(2)).join(", ")} |`,
  ),
  "",
  `Ratio kruntimes / direct: upload ${ratio.upload.toFixed(2)}, download ${ratio.download.toFixed(2)} (1.0 = as fast as a direct copy with the same server).`,
  "",
].join("\n");
console.log(md);
if (a.record) {
  const base = join(a.record, `artifacts-throughput-${new Date().toISOString().slice(0, 10)}`);
  writeFileSync(`${base}.md`, md);
  writeFileSync(`${base}.json`, JSON.stringify({ mib, reps, machine: m, rows, ratio }, null, 2));
}
