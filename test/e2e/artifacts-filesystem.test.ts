/**
 * The filesystem artifact store end to end through pods on the local cluster: a hostPath
 * PersistentVolume (pinned to the node by its nodeAffinity) and a claim bound by the real PV
 * binder; a Runtime whose `artifactStore.filesystem` names the claim, so the node agent mounts the
 * PV directory into runtimed and into the maintainer. A Run's file and directory land in the PV
 * directory with the digests recorded in status; `krt artifact download` verifies size and digest
 * (and catches a file changed on disk); the maintainer counts what it served; deleting the Run
 * removes its files; deleting the Runtime and the Runs leaves no maintainer, and the claim stays.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ARTIFACTS_FINALIZER, Labels, maintainerName, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import * as art from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// Local cluster only: the PV's directory must be on the node agent's host.
const suite = cluster?.local ? describe : describe.skip;
const PVS = { version: "v1", plural: "persistentvolumes" } as const;
const PVCS = { version: "v1", plural: "persistentvolumeclaims" } as const;
setDefaultTimeout(90_000);

interface DeploymentLike {
  metadata: { ownerReferences?: unknown[] };
  spec: {
    template: {
      spec: {
        volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[];
        containers: { volumeMounts?: { name: string; mountPath: string }[] }[];
      };
    };
  };
}

suite("artifacts (real runtimed, filesystem store on a PersistentVolumeClaim, maintainer)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let work = "";
  let storeDir = "";
  let pvName = "";
  let n = 0;

  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const runToEnd = (inline: string, name = `f${n++}`) => art.runToEnd(client, ns.name, name, inline);

  async function readerKubeconfig(): Promise<string> {
    const token = await art.serviceAccountToken(client, ns.name, "reader", { getRuns: [] });
    const file = join(work, "reader.kubeconfig");
    return art.tokenKubeconfig(cluster?.kubeconfig as string, ns.name, "reader", token, file);
  }
  const maintainerEndpoint = (storeId: string) => art.maintainerEndpoint(client, ns.name, storeId);
  const krt = art.krtCli;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "krt-e2e-fs-artifacts-"));
    storeDir = join(work, "store");
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-fs-artifacts");
    // Its own storage class name: this claim can bind only to this PV, and no other claim to it.
    pvName = `krt-e2e-${ns.name}`;
    await client.create(path(PVS), {
      metadata: { name: pvName },
      spec: {
        storageClassName: pvName,
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteMany"],
        persistentVolumeReclaimPolicy: "Retain",
        hostPath: { path: storeDir, type: "DirectoryOrCreate" },
        // The directory exists on this node only; the scheduler places the claim's pods there.
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  {
                    key: "kubernetes.io/hostname",
                    operator: "In",
                    values: [cluster?.local?.nodeName as string],
                  },
                ],
              },
            ],
          },
        },
      },
    });
    await client.create(path(PVCS, ns.name), {
      metadata: { name: "artifacts" },
      spec: {
        storageClassName: pvName,
        accessModes: ["ReadWriteMany"],
        resources: { requests: { storage: "100Mi" } },
      },
    });
    await eventually("the claim is bound by the PV binder", async () => {
      const c = await client.get<{ spec: { volumeName?: string }; status?: { phase?: string } }>(
        path(PVCS, ns.name, "artifacts"),
      );
      return c.status?.phase === "Bound" && c.spec.volumeName === pvName;
    });
    ctl = await art.startArtifactRuntime(client, ns.name, cluster?.kubeconfig as string, {
      filesystem: { claimName: "artifacts" },
    });
  }, 180_000);

  afterAll(async () => {
    // Runs hold the finalizer until the maintainer deletes their artifacts; release leftovers.
    if (ns) await art.releaseRuns(client, ns.name);
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    if (pvName) await client.delete(path(PVS, undefined, pvName)).catch(() => {});
    if (work) rmSync(work, { recursive: true, force: true });
  });

  let stored: Run;
  test("a Run's file and directory are written into the PV directory, with size and digest in status", async () => {
    const r = await runToEnd(
      'printf "hello artifacts\\n" > "$KRUNTIME_ARTIFACTS_DIR/report.txt"; mkdir -p "$KRUNTIME_ARTIFACTS_DIR/out/sub"; echo one > "$KRUNTIME_ARTIFACTS_DIR/out/sub/one.txt"',
      "stored",
    );
    expect(r.status?.phase, r.status?.message).toBe("Succeeded");
    const refs = r.status?.artifactRefs ?? [];
    expect(refs.map((x) => [x.name, x.type, x.driver, x.attempt])).toEqual([
      ["out", "archive", "filesystem", 1],
      ["report.txt", "file", "filesystem", 1],
    ]);
    const [out, report] = refs as [(typeof refs)[0], (typeof refs)[0]];
    expect(report.location).toBe(`${ns.name}/${r.metadata.uid}/1/report.txt`);
    expect(report.size).toBe(16);
    expect(report.digest).toBe(art.sha256Digest("hello artifacts\n"));
    // What status says is what is on the volume.
    expect(readFileSync(join(storeDir, report.location), "utf8")).toBe("hello artifacts\n");
    const archive = readFileSync(join(storeDir, out.location));
    expect(archive.length).toBe(out.size as number);
    expect(art.sha256Digest(archive)).toBe(out.digest as string);
    const tar = Bun.spawnSync(["tar", "-xzOf", join(storeDir, out.location), "sub/one.txt"]);
    expect(tar.stdout.toString()).toBe("one\n");
    expect(r.metadata.finalizers).toContain(ARTIFACTS_FINALIZER);
    expect(JSON.parse(r.metadata.annotations?.["kruntimes.io/artifact-store"] ?? "{}")).toMatchObject({
      filesystem: { claimName: "artifacts" },
    });
    stored = r;
  });

  test("the maintainer mounts the same claim; krt artifact download verifies size and digest", async () => {
    const storeId = stored.metadata.labels?.[Labels.artifactStore] as string;
    // The controller applies the maintainer when it sees the Run's finalizer: wait for it.
    const d = await eventually(
      "the maintainer Deployment",
      () =>
        client
          .get<DeploymentLike>(path(R.deployments, ns.name, maintainerName(storeId)))
          .catch(() => undefined),
      60_000,
    );
    const vol = d.spec.template.spec.volumes?.find((v) => v.persistentVolumeClaim);
    expect(vol?.persistentVolumeClaim?.claimName).toBe("artifacts");
    expect(d.spec.template.spec.containers[0]?.volumeMounts?.some((m) => m.name === vol?.name)).toBe(true);
    expect(d.metadata.ownerReferences ?? []).toEqual([]);
    const endpoint = await maintainerEndpoint(storeId);
    const reader = await readerKubeconfig();
    const list = krt(reader, "artifact", "list", "stored");
    expect(list.code, list.err).toBe(0);
    expect(list.out).toContain("report.txt");
    const dest = join(work, "report.txt");
    const dl = krt(
      reader,
      "artifact",
      "download",
      "stored",
      "report.txt",
      "-o",
      dest,
      "--endpoint",
      endpoint,
    );
    expect(dl.code, dl.err).toBe(0);
    expect(dl.err).toContain("verified");
    expect(readFileSync(dest, "utf8")).toBe("hello artifacts\n");
    const tgz = join(work, "out.tar.gz");
    const dl2 = krt(reader, "artifact", "download", "stored", "out", "-o", tgz, "--endpoint", endpoint);
    expect(dl2.code, dl2.err).toBe(0);
    const served = 16 + readFileSync(tgz).length;

    // A file changed on the volume after the upload is caught by the digest, and nothing is written.
    const t = await runToEnd('echo original > "$KRUNTIME_ARTIFACTS_DIR/data.txt"', "tampered");
    const loc = t.status?.artifactRefs?.[0]?.location as string;
    writeFileSync(join(storeDir, loc), "changed!\n");
    const bad = join(work, "data.txt");
    const res = krt(
      reader,
      "artifact",
      "download",
      "tampered",
      "data.txt",
      "-o",
      bad,
      "--endpoint",
      endpoint,
    );
    expect(res.code).toBe(65);
    expect(res.err).toContain("failed verification");
    expect(existsSync(bad)).toBe(false);

    const metrics = await (await fetch(`${endpoint}/metrics`)).text();
    const value = (s: string) =>
      Number(new RegExp(`^${s.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(metrics)?.[1]);
    expect(value('kruntimes_artifact_maintainer_download_requests_total{code="2xx"}')).toBe(3);
    expect(value("kruntimes_artifact_maintainer_download_bytes_total")).toBe(served + "changed!\n".length);
  });

  test("deleting a Run removes its files; deleting the Runtime and Runs leaves no maintainer, the claim stays", async () => {
    const storeId = stored.metadata.labels?.[Labels.artifactStore] as string;
    const runDir = join(storeDir, ns.name, stored.metadata.uid as string);
    expect(existsSync(runDir)).toBe(true);
    await client.delete(path(RunResource, ns.name, "stored"));
    await eventually("the Run is gone", async () => !(await get("stored").catch(() => undefined)), 30_000);
    expect(existsSync(runDir)).toBe(false);

    // A Run with artifacts remains: the maintainer stays for it, after the Runtime is gone.
    await art.deleteRuntimeKeepingMaintainer(client, ns.name, "bash", storeId);
    for (const r of (await client.list<Run>(path(RunResource, ns.name))).items)
      await client.delete(path(RunResource, ns.name, r.metadata.name));
    await eventually(
      "every Run is gone",
      async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
      60_000,
    );
    await art.maintainerRemoved(client, ns.name, storeId);
    await eventually(
      "no maintainer pod left",
      async () =>
        (await client.list(path(R.pods, ns.name), { labelSelector: `${Labels.artifactStore}=${storeId}` }))
          .items.length === 0,
      30_000,
    );
    // Every Run's directory is gone from the volume; the claim is the user's and stays.
    expect(readdirSync(join(storeDir, ns.name))).toEqual([]);
    const claim = await client.get<{ status?: { phase?: string } }>(path(PVCS, ns.name, "artifacts"));
    expect(claim.status?.phase).toBe("Bound");
  });
});
