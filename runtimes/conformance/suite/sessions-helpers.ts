/**
 * Helpers of the session part of the conformance suite: a SessionService client on the server's
 * socket, a fresh open session per test, an Exec stream collector that lets a test wait for
 * output instead of sleeping, and upload/download helpers.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { ExecRequestSchema } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import {
  type ExecExited,
  type ExecRequest,
  type ExecResponse,
  type FileInfo,
  SessionService,
  WriteMode,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import type { ServerProcess } from "../server-process.ts";
import { uid } from "./helpers.ts";

export type SessionClient = Client<typeof SessionService>;
export type ExecInit = Omit<MessageInitShape<typeof ExecRequestSchema>, "session" | "$typeName">;

const clients = new WeakMap<ServerProcess, SessionClient>();

export function sessionClient(server: ServerProcess): SessionClient {
  let client = clients.get(server);
  if (client === undefined) {
    const socket = server.settings.socket;
    const transport = createConnectTransport({
      baseUrl: "http://runtime-server",
      fetch: ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
        fetch(input, { ...init, unix: socket, timeout: false } as RequestInit)) as typeof fetch,
    });
    client = createClient(SessionService, transport);
    clients.set(server, client);
  }
  return client;
}

/** An open session of one test. */
export class TestSession {
  constructor(
    readonly client: SessionClient,
    readonly runUid: string,
    readonly attempt: number,
    /** Absolute workspace path (for checks from outside the contract). */
    readonly workspace: string,
  ) {}

  static async open(server: ServerProcess, env: Record<string, string> = {}): Promise<TestSession> {
    const client = sessionClient(server);
    const runUid = uid("session");
    const response = await client.open({ session: { runUid, attempt: 1 }, runName: "conformance", env });
    return new TestSession(client, runUid, 1, response.info!.workspace);
  }

  get ref() {
    return { runUid: this.runUid, attempt: this.attempt };
  }

  exec(init: ExecInit, signal?: AbortSignal): ExecLog {
    const request = { operationId: uid("op"), ...init, session: this.ref } as MessageInitShape<
      typeof ExecRequestSchema
    >;
    return new ExecLog(this.client.exec(request, { signal }), (request as ExecRequest).operationId);
  }

  async sh(
    line: string,
    more: ExecInit = {},
  ): Promise<{ exited: ExecExited; stdout: string; stderr: string }> {
    const log = this.exec({ command: { program: { case: "shell", value: line } }, ...more });
    const exited = await log.finished();
    return { exited, stdout: log.text("stdout"), stderr: log.text("stderr") };
  }

  /** Uploads `data` in chunks of `chunk` bytes; returns the committed file's info. */
  async write(
    path: string,
    data: Uint8Array,
    options: { chunk?: number; mode?: WriteMode; fileMode?: number; parents?: boolean } = {},
  ): Promise<FileInfo> {
    const chunk = options.chunk ?? 1024 * 1024;
    const uploadId = uid("up");
    let offset = 0;
    for (;;) {
      const part = data.subarray(offset, offset + chunk);
      const last = offset + part.length >= data.length;
      const response = await this.client.writeFile({
        session: this.ref,
        path,
        uploadId,
        offset: BigInt(offset),
        data: part,
        mode: options.mode ?? WriteMode.TRUNCATE,
        fileMode: options.fileMode ?? 0,
        last,
        parents: options.parents ?? false,
      });
      offset += part.length;
      if (last) return response.info!;
    }
  }

  async read(
    path: string,
    offset = 0,
    length = 0,
  ): Promise<{ data: Buffer; info: FileInfo; chunks: number }> {
    const parts: Uint8Array[] = [];
    let info: FileInfo | undefined;
    let chunks = 0;
    for await (const message of this.client.readFile({
      session: this.ref,
      path,
      offset: BigInt(offset),
      length: BigInt(length),
    })) {
      if (message.info !== undefined) info = message.info;
      parts.push(message.data);
      chunks++;
    }
    return { data: Buffer.concat(parts), info: info!, chunks };
  }

  close(cancel = true) {
    return this.client.close({ session: this.ref, mode: cancel ? 2 : 1, removeWorkspace: true });
  }
}

const decoder = new TextDecoder();

/** Collects one Exec stream as it arrives. */
export class ExecLog {
  readonly events: ExecResponse[] = [];
  readonly done: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(
    stream: AsyncIterable<ExecResponse>,
    readonly operationId: string,
  ) {
    this.done = (async () => {
      try {
        for await (const message of stream) {
          this.events.push(message);
          this.wake();
        }
      } finally {
        this.wake();
      }
    })();
    this.done.catch(() => {});
  }

  get pid(): number {
    for (const e of this.events) if (e.event.case === "started") return e.event.value.pid;
    return 0;
  }

  get exited(): ExecExited | undefined {
    for (const e of this.events) if (e.event.case === "exited") return e.event.value;
    return undefined;
  }

  text(stream: "stdout" | "stderr"): string {
    let out = "";
    for (const e of this.events)
      if (e.event.case === "output" && e.event.value.stream === stream)
        out += decoder.decode(e.event.value.data, { stream: true });
    return out;
  }

  async finished(): Promise<ExecExited> {
    await this.done;
    const exited = this.exited;
    if (exited === undefined) throw new Error("the Exec stream ended without ExecExited");
    return exited;
  }

  /** Waits (bounded) until `stream`'s output contains `text`. */
  async waitFor(stream: "stdout" | "stderr", text: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.text(stream).includes(text)) {
      if (this.exited !== undefined)
        throw new Error(
          `exited before printing ${JSON.stringify(text)}: ${this.text("stdout")} ${this.text("stderr")}`,
        );
      if (Date.now() > deadline)
        throw new Error(`no ${JSON.stringify(text)} on ${stream} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

export function argv(...args: string[]) {
  return { program: { case: "argv" as const, value: { args } } };
}

export function shell(line: string) {
  return { program: { case: "shell" as const, value: line } };
}
