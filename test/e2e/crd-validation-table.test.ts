/**
 * The CRD validation table: every field and every CEL rule of Runtime, Run and PersistentWorkspace,
 * with boundary values, applied to the real apiserver. The cases are data, in
 * `crd-validation-table/*.yaml`: a base manifest (test/integration/fixtures/crds) with a JSON merge
 * patch, and either `accepted` (optionally with fields the defaulted object must carry) or the
 * apiserver's message, checked exactly. Creates are server-side dry-runs with
 * `fieldValidation=Strict` (what `kubectl apply` sends), so the whole table takes seconds;
 * update cases create their object once for real, then dry-run the update.
 *
 * `KRT_CRD_TABLE_PRINT=1` prints each case's actual outcome (to write a new case's message).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  GROUP,
  RUN_KIND,
  RunResource,
  RuntimeResource,
  runCrd,
  runtimeCrd,
  WORKSPACE_KIND,
  WorkspaceResource,
  workspaceCrd,
} from "@kruntimes/api";
import { KubeError, path, R, resourcePath } from "@kruntimes/kube";
import YAML from "yaml";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { expand, mergePatch } from "./crd-validation-table/expand.ts";

const cluster = testCluster();
if (!cluster) console.warn("crd-validation-table: skipped because KUBECONFIG is unset");
const suite = cluster ? describe : describe.skip;
const PRINT = process.env.KRT_CRD_TABLE_PRINT === "1";

// ---- the data ----------------------------------------------------------------------------------

type Manifest = { kind: string; metadata: { name: string }; [k: string]: unknown };
interface Expectation {
  /** `true`, or fields the defaulted object must carry. */
  accepted?: boolean | Record<string, unknown>;
  /** The apiserver's message (after `<Kind>.kruntimes.io "<name>" is invalid: `). */
  rejected?: string;
  /** The HTTP status of a rejection: 422 unless given (a strict decoding error is 400). */
  code?: number;
}
interface Update extends Expectation {
  name: string;
  patch: unknown;
  subresource?: "status" | "scale";
}
interface Case extends Expectation {
  name: string;
  base?: string;
  patch?: unknown;
  /** Create the object for real, then dry-run each update against it. */
  updates?: Update[];
}
interface TableFile {
  base: string;
  cases: Case[];
}

const FIXTURES = join(import.meta.dir, "..", "integration", "fixtures", "crds");
const BASES: Record<string, string> = {
  runtime: "runtime.yaml",
  task: "run-task.yaml",
  function: "run-function.yaml",
  session: "run-session.yaml",
  workspace: "workspace.yaml",
};
const base = (name: string): Manifest =>
  YAML.parse(readFileSync(join(FIXTURES, BASES[name] ?? `${name}.yaml`), "utf8")) as Manifest;

const TABLE = join(import.meta.dir, "crd-validation-table");
const files = readdirSync(TABLE)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .map((f) => ({ file: f, table: YAML.parse(readFileSync(join(TABLE, f), "utf8")) as TableFile }));

const resourceOf = (kind: string) =>
  kind === RUN_KIND ? RunResource : kind === WORKSPACE_KIND ? WorkspaceResource : RuntimeResource;

/** The apiserver's message starts with the object; the table holds the rest. */
const invalidPrefix = (kind: string, name: string) => `${kind}.${GROUP} "${name}" is invalid: `;

type Outcome = { accepted: unknown } | { rejected: string; code: number };
async function outcome(write: Promise<unknown>, prefix: string): Promise<Outcome> {
  try {
    return { accepted: await write };
  } catch (e) {
    if (!(e instanceof KubeError)) throw e;
    const msg = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return { rejected: msg, code: e.code };
  }
}

function check(label: string, got: Outcome, want: Expectation) {
  if (PRINT) console.log(`${label}\n  => ${"rejected" in got ? `rejected: ${got.rejected}` : "accepted"}`);
  if (want.rejected !== undefined) {
    expect("rejected" in got ? got.rejected : "(accepted)").toBe(want.rejected);
    expect("rejected" in got ? got.code : 0).toBe(want.code ?? 422);
    return;
  }
  if ("rejected" in got) throw new Error(`${label}: expected acceptance, got: ${got.rejected}`);
  if (want.accepted && typeof want.accepted === "object") expect(got.accepted).toMatchObject(want.accepted);
}

// ---- the runner --------------------------------------------------------------------------------

const DRY_RUN = { dryRun: "All", fieldValidation: "Strict" };

suite("CRD validation table (server-side dry-run, exact messages)", () => {
  const client = cluster!.client;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let created = 0;

  beforeAll(async () => {
    // Only the kinds under test (the CRDs as this checkout defines them).
    for (const crd of [runtimeCrd, runCrd, workspaceCrd])
      await client.apply(path(R.crds, undefined, crd.metadata.name), crd, "kruntimes-tests", true);
    ns = await testNamespace(client, "crd-table");
    // The first writes after a CRD is established can miss the new resource: wait until one lands.
    await eventually("Run resource served", () =>
      client.create(path(RunResource, ns.name), base("session"), DRY_RUN),
    );
    // A changed schema reaches the handlers a moment after the CRD write: wait for the newest rule.
    const stale = mergePatch(base("runtime"), { metadata: { name: "1-probe" } });
    await eventually("the current Runtime schema served", () =>
      client.create(path(RuntimeResource, ns.name), stale, DRY_RUN).then(
        () => false,
        (e) => e instanceof KubeError && e.code === 422,
      ),
    );
  });
  afterAll(async () => {
    await ns?.remove();
  });

  test("the table has at least 100 cases, each with one expected outcome", () => {
    let count = 0;
    for (const { file, table } of files) {
      for (const c of table.cases) {
        count += 1 + (c.updates?.length ?? 0);
        const outcomes = [c.accepted, c.rejected].filter((x) => x !== undefined).length;
        if (c.updates)
          expect(`${file}: ${c.name}: ${c.rejected === undefined}`).toBe(`${file}: ${c.name}: true`);
        else expect(`${file}: ${c.name}: ${outcomes}`).toBe(`${file}: ${c.name}: 1`);
        for (const u of c.updates ?? []) {
          const n = [u.accepted, u.rejected].filter((x) => x !== undefined).length;
          expect(`${file}: ${c.name} / ${u.name}: ${n}`).toBe(`${file}: ${c.name} / ${u.name}: 1`);
        }
      }
    }
    expect(count).toBeGreaterThanOrEqual(100);
  });

  for (const { file, table } of files) {
    describe(file, () => {
      for (const c of table.cases) {
        test(c.name, async () => {
          const obj = mergePatch(base(c.base ?? table.base), expand(c.patch ?? {})) as Manifest;
          const name = obj.metadata.name;
          const resource = resourceOf(obj.kind);
          const collection = path(resource, ns.name);
          if (!c.updates) {
            const got = await outcome(client.create(collection, obj, DRY_RUN), invalidPrefix(obj.kind, name));
            check(`${file}: ${c.name}`, got, c);
            return;
          }
          obj.metadata.name = `${name}-${++created}`;
          await client.create(collection, obj);
          // Every update runs (each is a dry-run against the same object); failures are reported together.
          const failures: string[] = [];
          for (const u of c.updates) {
            const at = resourcePath({
              ...resource,
              namespace: ns.name,
              name: obj.metadata.name,
              subresource: u.subresource,
            });
            const got = await outcome(
              client.patch(at, expand(u.patch), "merge", DRY_RUN),
              invalidPrefix(obj.kind, obj.metadata.name),
            );
            try {
              check(`${file}: ${c.name} / ${u.name}`, got, u);
            } catch (e) {
              failures.push(`${u.name}: ${(e as Error).message}`);
            }
          }
          expect(failures).toEqual([]);
        });
      }
    });
  }
});
