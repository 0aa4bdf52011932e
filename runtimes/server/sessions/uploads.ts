/**
 * WriteFile uploads: the chunks of one upload_id go, in order, to a temporary file created next to
 * the target (same directory, so the final rename is atomic); the last chunk renames it onto the
 * target (TRUNCATE, APPEND) or links it there only if nothing exists (CREATE). Readers see the old
 * file or the whole new one, never a part. An upload holds its directory open from the first
 * chunk, so later chunks and the commit act on the directory that was checked. Uploads idle for
 * longer than `idleMs`, and all of them when the session closes, are abandoned: temp file removed.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  copyFileSync,
  fchmodSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { Code } from "@connectrpc/connect";
import {
  type FileInfo,
  type WriteFileRequest,
  WriteMode,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { lstatInfo } from "./file-info.ts";
import { errnoOf, fsError, sessionError } from "./session-error.ts";
import { at, normalizePath, O_CLOEXEC, type Workspace } from "./workspace-path.ts";

export const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
/** Temporary files of uploads are named with this prefix (next to their target). */
export const UPLOAD_PREFIX = ".krt-upload.";
const TEMP_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | O_CLOEXEC;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | O_CLOEXEC;

interface Upload {
  id: string;
  path: string;
  mode: WriteMode;
  dir: number;
  name: string;
  temp: string;
  fd: number;
  received: number;
  touched: number;
}

export class Uploads {
  private readonly uploads = new Map<string, Upload>();

  constructor(
    private readonly workspace: Workspace,
    private readonly maxUploads: number,
  ) {}

  get size(): number {
    return this.uploads.size;
  }

  /** Takes one chunk; returns the bytes received so far and, after the last chunk, the file. */
  write(req: WriteFileRequest): { received: number; info?: FileInfo } {
    if (!ID_PATTERN.test(req.uploadId)) {
      throw sessionError(Code.InvalidArgument, `upload_id must match ${ID_PATTERN.source}`);
    }
    const path = normalizePath(req.path);
    let upload = this.uploads.get(req.uploadId);
    if (upload === undefined) {
      if (req.offset !== 0n) {
        throw sessionError(
          Code.FailedPrecondition,
          `no upload ${req.uploadId} in progress (it never started, was committed, or was abandoned); offset ${req.offset} cannot continue it`,
        );
      }
      upload = this.begin(req, path);
    } else {
      if (upload.path !== path) {
        throw sessionError(
          Code.InvalidArgument,
          `upload ${req.uploadId} writes ${JSON.stringify(upload.path)}, not ${JSON.stringify(path)}`,
        );
      }
      if (req.offset !== BigInt(upload.received)) {
        throw sessionError(
          Code.FailedPrecondition,
          `chunk offset ${req.offset} is not the ${upload.received} bytes received so far (chunks must come in order)`,
        );
      }
    }
    try {
      let done = 0;
      while (done < req.data.length) done += writeSync(upload.fd, req.data, done, req.data.length - done);
      upload.received += req.data.length;
      upload.touched = Date.now();
      if (!req.last) return { received: upload.received };
      return { received: upload.received, info: this.commit(upload) };
    } catch (error) {
      this.abandon(upload);
      throw fsError(error, path);
    }
  }

  /** Abandons uploads idle since before `olderThan` (ms epoch), or all of them. */
  abandonIdle(olderThan = Number.POSITIVE_INFINITY): number {
    let n = 0;
    for (const upload of [...this.uploads.values()]) {
      if (upload.touched < olderThan) {
        this.abandon(upload);
        n++;
      }
    }
    return n;
  }

  private begin(req: WriteFileRequest, path: string): Upload {
    if (path === "") throw sessionError(Code.InvalidArgument, "path must name a file in the workspace");
    if (this.uploads.size >= this.maxUploads) {
      throw sessionError(
        Code.ResourceExhausted,
        `${this.maxUploads} uploads are in progress in this session`,
      );
    }
    const mode = req.mode === WriteMode.UNSPECIFIED ? WriteMode.TRUNCATE : req.mode;
    const resolved = this.workspace.resolve(req.path, {
      followFinal: true,
      createDirs: req.parents ? 0o755 : undefined,
    });
    const { dir, name } = resolved;
    try {
      if (name === undefined)
        throw sessionError(Code.FailedPrecondition, `${JSON.stringify(path)} is a directory`);
      let existingMode: number | undefined;
      try {
        const stat = lstatSync(at(dir, name));
        if (stat.isDirectory())
          throw sessionError(Code.FailedPrecondition, `${JSON.stringify(path)} is a directory`);
        if (mode === WriteMode.CREATE)
          throw sessionError(Code.AlreadyExists, `${JSON.stringify(path)}: already exists`);
        existingMode = stat.mode & 0o7777;
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw error;
      }
      const temp = `${UPLOAD_PREFIX}${req.uploadId}.${randomBytes(6).toString("hex")}`;
      let fd: number;
      if (mode === WriteMode.APPEND && existingMode !== undefined) {
        const source = openSync(at(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | O_CLOEXEC);
        try {
          copyFileSync(at(source), at(dir, temp), constants.COPYFILE_EXCL);
        } finally {
          closeSync(source);
        }
        fd = openSync(at(dir, temp), APPEND_FLAGS);
      } else {
        fd = openSync(at(dir, temp), TEMP_FLAGS, 0o600);
      }
      fchmodSync(fd, req.fileMode !== 0 ? req.fileMode & 0o7777 : (existingMode ?? 0o644));
      const upload: Upload = {
        id: req.uploadId,
        path,
        mode,
        dir,
        name,
        temp,
        fd,
        received: 0,
        touched: Date.now(),
      };
      this.uploads.set(req.uploadId, upload);
      return upload;
    } catch (error) {
      resolved.close();
      throw fsError(error, path);
    }
  }

  private commit(upload: Upload): FileInfo {
    closeSync(upload.fd);
    upload.fd = -1;
    const temp = at(upload.dir, upload.temp);
    const target = at(upload.dir, upload.name);
    if (upload.mode === WriteMode.CREATE) {
      try {
        linkSync(temp, target);
      } catch (error) {
        if (errnoOf(error) === "EEXIST") {
          throw sessionError(Code.AlreadyExists, `${JSON.stringify(upload.path)}: already exists`);
        }
        throw error;
      }
      unlinkSync(temp);
    } else {
      renameSync(temp, target);
    }
    const info = lstatInfo(upload.path, target);
    this.uploads.delete(upload.id);
    closeSync(upload.dir);
    return info;
  }

  private abandon(upload: Upload): void {
    if (this.uploads.get(upload.id) !== upload) return;
    this.uploads.delete(upload.id);
    if (upload.fd !== -1) closeSync(upload.fd);
    try {
      unlinkSync(at(upload.dir, upload.temp));
    } catch {
      // already renamed or removed
    }
    closeSync(upload.dir);
  }
}
