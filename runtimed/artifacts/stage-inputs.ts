/**
 * Stages a task's `spec.artifactInputs` into its working directory before the task starts. For
 * each input, in order: read the source Run (a GET: runtimed's watch only holds its own Runs),
 * pick the reference (input-source.ts), stream the object from this Runtime's store through a
 * sha256 and a byte counter into a temporary name beside the destination — a file as-is, an
 * archive unpacked (untar.ts) — check size and digest against the reference, then replace what is
 * at the destination and rename into place. Nothing half-written is ever at the destination.
 *
 * Transient failures (store network errors, 5xx, throttling; API 5xx/429) retry that input from
 * the start with the artifact uploads' budget and backoff; anything else — the Run or artifact
 * missing, another store, a digest mismatch, an unsafe archive or path — fails at once with an
 * InputUnavailable whose message names the input and what to check.
 */
import { createHash, randomUUID } from "node:crypto";
import { chmod, lstat, mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { ArtifactInput, ArtifactRef, Run } from "@kruntimes/api";
import { RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "../logger.ts";
import { makeDirsBelow, UnsafePath } from "../workspaces/run-directory.ts";
import type { ArtifactMetrics } from "./artifact-metrics.ts";
import { inputName, resolveInput } from "./input-source.ts";
import { type ArtifactStoreDriver, isTransient } from "./store.ts";
import { ArchiveInvalid, untar } from "./untar.ts";

export class InputUnavailable extends Error {
  override name = "InputUnavailable";
}

/** The attempt was abandoned while staging (the Run moved on): nothing to report. */
export class StagingAborted extends Error {
  override name = "StagingAborted";
}

export interface StageDeps {
  store: ArtifactStoreDriver;
  client: Pick<KubeClient, "get">;
  metrics: Pick<ArtifactMetrics, "inputSeconds" | "inputBytes" | "inputRetries">;
  log: Logger;
  retryBudgetMs: number;
  /** First backoff; doubles up to 10 s. */
  retryDelayMs: number;
  /** Bound on what one archive unpacks to (files' sizes) and its entries. */
  maxUnpackedBytes: number;
  maxUnpackedEntries: number;
}

export interface Staged {
  artifacts: number;
  /** Bytes fetched (as stored). */
  bytes: number;
  ms: number;
}

/** Thrown by a transient failure so the retry loop sees it as such (status ≥ 500). */
function transient(e: KubeError): Error {
  return Object.assign(new Error(e.message), { status: e.code });
}

export class InputStager {
  constructor(private readonly d: StageDeps) {}

  /**
   * Stages every input of `run` into the working directory `<root>/<rel>` (`root`: the Runtime
   * Server's root for working directories; what is missing is made, mode 0777).
   */
  async stage(
    run: Run,
    dir: { root: string; rel: string },
    signal: AbortSignal,
    log: Logger,
  ): Promise<Staged> {
    const inputs = run.spec.artifactInputs ?? [];
    const t0 = performance.now();
    let bytes = 0;
    /** Reading the source Runs from the API (the rest is the store and the disk). */
    let apiMs = 0;
    try {
      // Each source Run once, however many of its artifacts are staged, all at the same time,
      // while the working directory is made.
      const ns = run.metadata.namespace ?? "";
      const names = [...new Set(inputs.map((i) => i.run))];
      const reads = Promise.all(
        names.map((name) =>
          this.retrying(`reading run ${name}`, "the API server", signal, log, () => this.readRun(ns, name)),
        ),
      );
      reads.catch(() => undefined); // awaited below; not unhandled if the mkdir fails first
      const workingDir = await makeDirsBelow(dir.root, dir.rel);
      const sources = new Map((await reads).map((r, i) => [names[i] as string, r]));
      apiMs = performance.now() - t0;
      for (const input of inputs)
        bytes += await this.stageOne(input, sources.get(input.run) as Run, workingDir, signal, log);
    } catch (e) {
      if (e instanceof StagingAborted || signal.aborted) throw new StagingAborted("abandoned");
      this.d.metrics.inputSeconds.observe({ result: "unavailable" }, (performance.now() - t0) / 1000);
      throw e instanceof InputUnavailable ? e : new InputUnavailable(message(e));
    }
    const ms = performance.now() - t0;
    this.d.metrics.inputSeconds.observe({ result: "ok" }, ms / 1000);
    this.d.metrics.inputBytes.inc(bytes);
    log.info(
      { artifacts: inputs.length, bytes, ms: round(ms), apiMs: round(apiMs) },
      "artifact inputs staged",
    );
    return { artifacts: inputs.length, bytes, ms };
  }

  private async stageOne(
    input: ArtifactInput,
    source: Run,
    workingDir: string,
    signal: AbortSignal,
    log: Logger,
  ): Promise<number> {
    const what = inputName(input);
    const r = resolveInput(source, input, this.d.store);
    if ("error" in r) throw new InputUnavailable(r.error);
    const parentRel = dirname(r.dest) === "." ? "" : dirname(r.dest);
    const parent = await makeDirsBelow(workingDir, parentRel).catch((e: unknown) => {
      throw new InputUnavailable(`artifact ${what} cannot be placed at ${r.dest}: ${message(e)}`);
    });
    return this.retrying(`fetching artifact ${what}`, "the artifact store", signal, log, () =>
      this.fetchInto(what, r.ref, r.key, join(parent, basename(r.dest)), signal),
    );
  }

  private async readRun(ns: string, name: string): Promise<Run> {
    try {
      return await this.d.client.get<Run>(path(RunResource, ns, name));
    } catch (e) {
      if (!(e instanceof KubeError)) throw e;
      if (e.code === 404)
        throw new InputUnavailable(
          `run ${name} (named in spec.artifactInputs) does not exist in namespace ${ns}; it may have been deleted, and its artifacts with it`,
        );
      if (e.code >= 500 || e.code === 429) throw transient(e);
      throw new InputUnavailable(`reading run ${name} failed: ${e.message}`);
    }
  }

  /** Returns the bytes fetched; the destination holds the verified file or unpacked directory. */
  private async fetchInto(
    what: string,
    ref: ArtifactRef,
    key: string,
    dest: string,
    signal: AbortSignal,
  ): Promise<number> {
    const obj = await this.d.store.get(key);
    if (!obj)
      throw new InputUnavailable(
        `artifact ${what} is recorded but missing from the store (${ref.location}); the source Run's artifacts may have been deleted`,
      );
    if (ref.size !== undefined && obj.size !== ref.size)
      throw new InputUnavailable(
        `artifact ${what} in the store is ${obj.size} bytes, the Run recorded ${ref.size}; the object was changed in the store, it is not staged`,
      );
    const m = { size: 0, hash: createHash("sha256") };
    const body = obj.body;
    async function* measured(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        if (signal.aborted) throw new StagingAborted("abandoned");
        m.size += chunk.byteLength;
        m.hash.update(chunk);
        yield chunk;
      }
    }
    const tmp = join(dirname(dest), `.krt-input-${basename(dest)}-${randomUUID().slice(0, 8)}`);
    try {
      if (ref.type === "archive") {
        await mkdir(tmp, { mode: 0o700 });
        const limits = { maxBytes: this.d.maxUnpackedBytes, maxEntries: this.d.maxUnpackedEntries };
        await pipeline(Readable.from(measured()), createGunzip(), (tar: AsyncIterable<Uint8Array>) =>
          untar(tar, tmp, limits),
        );
      } else {
        const f = await open(tmp, "wx", 0o666);
        try {
          for await (const chunk of measured()) await f.write(chunk);
          await f.chmod(0o666);
        } finally {
          await f.close();
        }
      }
      const digest = `sha256:${m.hash.digest("hex")}`;
      if ((ref.size !== undefined && m.size !== ref.size) || (ref.digest && digest !== ref.digest))
        throw new InputUnavailable(
          `artifact ${what} does not match what its Run recorded (${m.size} bytes, ${digest}; recorded ${ref.size} bytes, ${ref.digest}); the object was changed in the store, it is not staged`,
        );
      if (ref.type === "archive") await chmod(tmp, 0o777);
      // Replace whatever is there (an earlier step's copy in a workspace); rm removes a link, not its target.
      if (await exists(dest)) await rm(dest, { recursive: true, force: true });
      await rename(tmp, dest);
      return m.size;
    } catch (e) {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      if (e instanceof ArchiveInvalid)
        throw new InputUnavailable(`artifact ${what} is not an archive runtimed can unpack: ${e.message}`);
      if (e instanceof UnsafePath) throw new InputUnavailable(`artifact ${what}: ${e.message}`);
      if ((e as { code?: string }).code === "Z_DATA_ERROR" || (e as { code?: string }).code === "Z_BUF_ERROR")
        throw new InputUnavailable(`artifact ${what} is not valid gzip: ${message(e)}`);
      throw e;
    }
  }

  /**
   * `fn` again after transient failures, with backoff, until the budget is spent. `what` names
   * the step in messages ("fetching artifact build/site"), `from` what must be reachable.
   */
  private async retrying<T>(
    what: string,
    from: string,
    signal: AbortSignal,
    log: Logger,
    fn: () => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + this.d.retryBudgetMs;
    let delay = this.d.retryDelayMs;
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        if (e instanceof InputUnavailable || e instanceof StagingAborted) throw e;
        if (signal.aborted) throw new StagingAborted("abandoned");
        const msg = message(e);
        if (localFailure(e) || !isTransient(e)) throw new InputUnavailable(`${what} failed: ${msg}`);
        if (Date.now() + delay > deadline)
          throw new InputUnavailable(
            `${what} failed after retrying for ${Math.round(this.d.retryBudgetMs / 1000)}s: ${msg}; check that ${from} is reachable from the Runtime's pods`,
          );
        this.d.metrics.inputRetries.inc();
        log.warn({ step: what, err: msg, retryInMs: delay }, "artifact input fetch failed; retrying");
        await sleep(delay, signal);
        if (signal.aborted) throw new StagingAborted("abandoned");
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }
}

/** A failure of this pod's filesystem (full disk, no permission, a file in the way): not the store's. */
function localFailure(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return (
    typeof code === "string" &&
    /^E[A-Z]+$/.test(code) &&
    !/^E(CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH)$/.test(
      code,
    )
  );
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
