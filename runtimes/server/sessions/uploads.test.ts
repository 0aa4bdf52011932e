/** Uploads: abandoned ones leave no temporary file and cannot be continued. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { WriteFileRequestSchema, WriteMode } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { Uploads } from "./uploads.ts";
import { Workspace } from "./workspace-path.ts";

describe("Uploads", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "krt-uploads-")));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const chunk = (uploadId: string, offset: number, last = false) =>
    create(WriteFileRequestSchema, {
      path: "f",
      uploadId,
      offset: BigInt(offset),
      data: new Uint8Array(4),
      mode: WriteMode.TRUNCATE,
      last,
    });

  test("idle uploads are abandoned: temp file removed, the id cannot continue", () => {
    const uploads = new Uploads(new Workspace(root), 2);
    uploads.write(chunk("one", 0));
    const later = Date.now() + 1;
    uploads.write(chunk("two", 0));
    expect(readdirSync(root).filter((n) => n.startsWith(".krt-upload"))).toHaveLength(2);
    expect(() => uploads.write(chunk("three", 0))).toThrow(/2 uploads are in progress/);
    expect(uploads.abandonIdle(later)).toBeGreaterThanOrEqual(1);
    uploads.abandonIdle();
    expect(uploads.size).toBe(0);
    expect(readdirSync(root)).toEqual([]);
    expect(() => uploads.write(chunk("one", 4, true))).toThrow(/no upload one in progress/);
  });
});
