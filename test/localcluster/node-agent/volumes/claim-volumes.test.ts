import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PersistentVolume, PersistentVolumeClaim } from "../api/types.ts";
import { claimMount } from "./claim-volumes.ts";
import { VolumeError } from "./payloads.ts";

const root = mkdtempSync(join(tmpdir(), "krt-claim-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const bound = (volumeName = "pv1"): PersistentVolumeClaim => ({
  metadata: { name: "data", namespace: "ns", uid: "u-claim" },
  spec: { volumeName },
  status: { phase: "Bound" },
});
const pv = (spec: PersistentVolume["spec"]): PersistentVolume => ({
  metadata: { name: "pv1" },
  spec: { claimRef: { namespace: "ns", name: "data", uid: "u-claim" }, ...spec },
});
const err = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(VolumeError);
    return (e as Error).message;
  }
  throw new Error("expected a VolumeError");
};

describe("persistentVolumeClaim volumes", () => {
  test("a bound hostPath volume is its host directory; readOnly comes from the pod volume", () => {
    const dir = join(root, "hp");
    const m = claimMount(
      "ns",
      "data",
      bound(),
      pv({ hostPath: { path: dir, type: "DirectoryOrCreate" } }),
      true,
    );
    expect(m).toEqual({ dir, readOnly: true });
    expect(claimMount("ns", "data", bound(), pv({ hostPath: { path: dir } }), false).readOnly).toBe(false);
  });

  test("a local volume must be an existing directory", () => {
    expect(claimMount("ns", "data", bound(), pv({ local: { path: root } }), false).dir).toBe(root);
    expect(
      err(() => claimMount("ns", "data", bound(), pv({ local: { path: join(root, "nope") } }), false)),
    ).toContain("is not a directory on this host");
    const file = join(root, "f");
    writeFileSync(file, "x");
    expect(
      err(() =>
        claimMount("ns", "data", bound(), pv({ hostPath: { path: file, type: "Directory" } }), false),
      ),
    ).toContain("type check failed");
  });

  test("missing, pending or deleted claims wait with a message that says why", () => {
    expect(err(() => claimMount("ns", "data", undefined, undefined, false))).toBe(
      'persistentvolumeclaim "data" not found in namespace ns',
    );
    const pending: PersistentVolumeClaim = {
      metadata: { name: "data", uid: "u" },
      status: { phase: "Pending" },
    };
    expect(err(() => claimMount("ns", "data", pending, undefined, false))).toContain(
      "is not bound (phase Pending)",
    );
    expect(err(() => claimMount("ns", "data", bound(), undefined, false))).toContain(
      '"pv1", which does not exist',
    );
    const deleting = bound();
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(err(() => claimMount("ns", "data", deleting, pv({ local: { path: root } }), false))).toContain(
      "being deleted",
    );
  });

  test("a volume whose claimRef names another claim (or another uid) is not mounted", () => {
    const other = pv({ local: { path: root } });
    other.spec!.claimRef = { namespace: "ns", name: "data", uid: "older-claim" };
    expect(err(() => claimMount("ns", "data", bound(), other, false))).toContain("is not bound to");
  });

  test("sources other than hostPath and local are refused by name", () => {
    const nfs = pv({
      nfs: { server: "x", path: "/" },
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
    });
    expect(err(() => claimMount("ns", "data", bound(), nfs, false))).toBe(
      'persistentvolume "pv1" has a nfs source; the local node agent mounts only hostPath and local volumes',
    );
  });
});
