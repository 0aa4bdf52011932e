/**
 * A stand-in for runtimed's side of sessions, for the gateway's in-process tests: the real
 * `kruntimes.gateway.v1.SessionService` contract (Connect over Bun.serve) as runtimed serves it on
 * its dataplane port — the fence in `x-kruntimes-run-uid/-pod-uid/-attempt`, the caller in
 * `x-kruntimes-caller`, a refused fence as FAILED_PRECONDITION + RouteFailure — over an in-memory
 * workspace. Commands are scripted: `echo ARGS…` prints them; `gate TEXT` prints TEXT, then waits
 * until the test calls `release()` before it exits (proves streaming end to end); `busy` is refused
 * RESOURCE_EXHAUSTED with Retry-After 3 (`busy-bare`: without one, as runtimed does); `exit N` exits N. The cluster suite runs the real runtimed.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import {
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import {
  ExitReason,
  type FileInfo,
  FileInfoSchema,
  FileType,
  WriteMode,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";

export interface SeenCall {
  method: string;
  caller: string;
  authorization: string;
  runUID: string;
  podUID: string;
  attempt: string;
}

export interface StandinSessionDataplane {
  port: number;
  /** The workspace: path → bytes (directories are implied, or made by MakeDir). */
  files: Map<string, Uint8Array>;
  dirs: Set<string>;
  calls: SeenCall[];
  /** WriteFile calls: upload ID, offset, bytes, last. */
  writes: { uploadId: string; offset: number; bytes: number; last: boolean }[];
  /** Lets a waiting `gate` command (or the `gated` file) go on. */
  release(): void;
  stop(): void;
}

const READ_CHUNK = 64 * 1024;

export function startStandinSessionDataplane(o: {
  podUID: string;
  /** run UID → attempt this pod serves */
  serves: Map<string, number>;
  /**
   * Act as the gateway instead (for krt's tests): no fence, callers must send this bearer token
   * and name a Run in `runs` (others: NOT_FOUND), served over TLS when `tls` is given.
   */
  gateway?: { token: string; runs: Set<string>; tls?: { cert: string; key: string } };
}): StandinSessionDataplane {
  const files = new Map<string, Uint8Array>();
  const dirs = new Set<string>([""]);
  const calls: SeenCall[] = [];
  const writes: StandinSessionDataplane["writes"] = [];
  const uploads = new Map<string, { path: string; chunks: Uint8Array[]; size: number }>();
  let gate = Promise.withResolvers<void>();

  const fenced = (method: string, ctx: HandlerContext, req?: { target?: { run: string } }) => {
    const h = ctx.requestHeader;
    if (o.gateway) {
      calls.push({
        method,
        caller: "",
        authorization: h.get("authorization") ?? "",
        runUID: "",
        podUID: "",
        attempt: "",
      });
      if (h.get("authorization") !== `Bearer ${o.gateway.token}`)
        throw new ConnectError("the bearer token was not accepted", Code.Unauthenticated);
      if (!o.gateway.runs.has(req?.target?.run ?? ""))
        throw new ConnectError(`run ${req?.target?.run} does not exist`, Code.NotFound);
      return;
    }
    const seen = {
      method,
      caller: h.get("x-kruntimes-caller") ?? "",
      authorization: h.get("authorization") ?? "",
      runUID: h.get("x-kruntimes-run-uid") ?? "",
      podUID: h.get("x-kruntimes-pod-uid") ?? "",
      attempt: h.get("x-kruntimes-attempt") ?? "",
    };
    calls.push(seen);
    const attempt = o.serves.get(seen.runUID);
    if (seen.podUID !== o.podUID || attempt === undefined || String(attempt) !== seen.attempt) {
      throw new ConnectError("stale route", Code.FailedPrecondition, undefined, [
        {
          desc: RouteFailureSchema,
          value: create(RouteFailureSchema, {
            reason: attempt === undefined ? RouteFailure_Reason.NOT_SERVED : RouteFailure_Reason.WRONG_POD,
          }),
        },
      ]);
    }
  };
  const confined = (path: string) => {
    if (path.startsWith("/") || path.split("/").includes(".."))
      throw new ConnectError(`path ${path} is outside the workspace`, Code.PermissionDenied);
    return path.replace(/\/+$/, "");
  };
  const isDir = (p: string) =>
    dirs.has(p) || [...files.keys(), ...dirs].some((f) => p === "" || f.startsWith(`${p}/`));
  const info = (p: string): FileInfo => {
    const file = files.get(p);
    if (file)
      return create(FileInfoSchema, {
        path: p,
        name: p.split("/").at(-1) ?? "",
        type: FileType.FILE,
        size: BigInt(file.byteLength),
        mode: 0o644,
        modifiedMicros: 1_700_000_000_000_000n,
      });
    if (isDir(p))
      return create(FileInfoSchema, {
        path: p,
        name: p.split("/").at(-1) ?? "",
        type: FileType.DIRECTORY,
        mode: 0o755,
      });
    throw new ConnectError(`${p}: no such file or directory`, Code.NotFound);
  };
  const children = (dir: string): string[] => {
    const prefix = dir === "" ? "" : `${dir}/`;
    const names = new Set<string>();
    for (const p of [...files.keys(), ...dirs])
      if (p !== dir && p.startsWith(prefix)) names.add(p.slice(prefix.length).split("/")[0] as string);
    const enc = new TextEncoder();
    return [...names].sort((a, b) => Buffer.compare(enc.encode(a), enc.encode(b)));
  };

  const router = createConnectRouter();
  router.service(SessionService, {
    async *exec(req, ctx) {
      fenced("Exec", ctx, req);
      const args =
        req.command?.program.case === "argv"
          ? req.command.program.value.args
          : ["sh", req.command?.program.value ?? ""];
      const operationId = "op-1";
      if (args[0] === "busy") {
        throw new ConnectError("session busy: 64 operations queued", Code.ResourceExhausted, {
          "retry-after": "3",
        });
      }
      // As runtimed refuses: no hint of its own.
      if (args[0] === "busy-bare") throw new ConnectError("session busy", Code.ResourceExhausted);
      // As runtimed does when the queue is busy: an event-less "queued" message first, then the refusal.
      if (args[0] === "busy-queued") {
        yield { operationId };
        throw new ConnectError("session busy", Code.ResourceExhausted);
      }
      yield { operationId, event: { case: "started", value: { pid: 42, startedMicros: 1n } } };
      const out = (s: string, stream = "stdout") =>
        ({
          operationId,
          event: { case: "output", value: { stream, data: new TextEncoder().encode(s) } },
        }) as const;
      let code = 0;
      if (args[0] === "gate") {
        yield out(`${args[1]}\n`);
        await gate.promise;
        gate = Promise.withResolvers<void>();
        yield out("released\n", "stderr");
      } else if (args[0] === "exit") {
        yield out(`exiting ${args[1]}\n`, "stderr");
        code = Number(args[1]);
      } else if (args[0] === "echo") yield out(`${args.slice(1).join(" ")}\n`);
      else if (args[0] === "sh") yield out(`${args[1]}|${req.workingDir}|${JSON.stringify(req.env)}\n`);
      yield {
        operationId,
        event: { case: "exited", value: { reason: ExitReason.EXITED, exitCode: code, finishedMicros: 2n } },
      };
    },
    async *readFile(req, ctx) {
      fenced("ReadFile", ctx, req);
      const p = confined(req.path);
      const file = files.get(p);
      if (!file) throw new ConnectError(`${p}: no such file`, Code.NotFound);
      const start = Number(req.offset);
      const end = req.length ? Math.min(file.byteLength, start + Number(req.length)) : file.byteLength;
      let first = true;
      for (let at = start; at < end || first; at += READ_CHUNK) {
        yield { info: first ? info(p) : undefined, data: file.subarray(at, Math.min(end, at + READ_CHUNK)) };
        if (first && p.endsWith("gated")) {
          await gate.promise;
          gate = Promise.withResolvers<void>();
        }
        first = false;
      }
    },
    async writeFile(req, ctx) {
      fenced("WriteFile", ctx, req);
      const p = confined(req.path);
      writes.push({
        uploadId: req.uploadId,
        offset: Number(req.offset),
        bytes: req.data.byteLength,
        last: req.last,
      });
      let up = uploads.get(req.uploadId);
      if (!up) {
        if (req.mode === WriteMode.CREATE && files.has(p))
          throw new ConnectError(`${p} exists`, Code.AlreadyExists);
        up = { path: p, chunks: [], size: 0 };
        uploads.set(req.uploadId, up);
      }
      if (Number(req.offset) !== up.size)
        throw new ConnectError(`offset ${req.offset}, expected ${up.size}`, Code.InvalidArgument);
      up.chunks.push(req.data.slice());
      up.size += req.data.byteLength;
      if (!req.last) return { received: BigInt(up.size) };
      uploads.delete(req.uploadId);
      const prior = req.mode === WriteMode.APPEND ? [files.get(p) ?? new Uint8Array()] : [];
      files.set(p, new Uint8Array(Buffer.concat([...prior, ...up.chunks])));
      return { received: BigInt(up.size), info: info(p) };
    },
    async stat(req, ctx) {
      fenced("Stat", ctx, req);
      return { info: info(confined(req.path)) };
    },
    async listFiles(req, ctx) {
      fenced("ListFiles", ctx, req);
      const dir = confined(req.path);
      if (!isDir(dir)) throw new ConnectError(`${dir}: not a directory`, Code.NotFound);
      const limit = Math.min(req.limit || 100, 1000);
      const names = children(dir);
      const after = req.pageToken ? Buffer.from(req.pageToken, "base64url").toString() : undefined;
      const from = after === undefined ? 0 : names.findIndex((n) => n > after);
      const page = from < 0 ? [] : names.slice(from, from + limit);
      const more = from >= 0 && from + limit < names.length;
      return {
        entries: page.map((n) => info(dir === "" ? n : `${dir}/${n}`)),
        nextPageToken: more ? Buffer.from(page.at(-1) as string).toString("base64url") : "",
      };
    },
    async makeDir(req, ctx) {
      fenced("MakeDir", ctx, req);
      dirs.add(confined(req.path));
      return { info: info(confined(req.path)) };
    },
    async remove(req, ctx) {
      fenced("Remove", ctx, req);
      return { removed: files.delete(confined(req.path)) };
    },
    async rename(req, ctx) {
      fenced("Rename", ctx, req);
      const data = files.get(confined(req.from));
      if (!data) throw new ConnectError(`${req.from}: no such file`, Code.NotFound);
      files.delete(req.from);
      files.set(confined(req.to), data);
      return { info: info(req.to) };
    },
    async cancelOperation(req, ctx) {
      fenced("CancelOperation", ctx, req);
      return { cancelled: req.operationId === "op-1" };
    },
    async startProcess(req, ctx) {
      fenced("StartProcess", ctx, req);
      return { process: { processId: req.processId || "p-1", pid: 7, running: true } };
    },
    async signalProcess(req, ctx) {
      fenced("SignalProcess", ctx, req);
      return { process: { processId: req.processId, running: false, signal: req.signal } };
    },
    async waitProcess(req, ctx) {
      fenced("WaitProcess", ctx, req);
      return { process: { processId: req.processId, running: false, reason: ExitReason.EXITED } };
    },
    async listProcesses(req, ctx) {
      fenced("ListProcesses", ctx, req);
      return { processes: [{ processId: "p-1", running: true }] };
    },
  });
  const handlers = new Map<string, (r: Request) => Promise<Response>>();
  for (const h of router.handlers) handlers.set(h.requestPath, createFetchHandler(h));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    ...(o.gateway?.tls ? { tls: o.gateway.tls } : {}),
    fetch(request) {
      const h = handlers.get(new URL(request.url).pathname);
      return h ? h(request) : new Response("no", { status: 404 });
    },
  });
  return {
    port: server.port as number,
    files,
    dirs,
    calls,
    writes,
    release: () => gate.resolve(),
    stop: () => server.stop(true),
  };
}
