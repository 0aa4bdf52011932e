/**
 * The MCP server: eight tools over a backend (backend.ts), each with its zod input and output
 * schema (schemas.ts), a structured result and a plain-text rendering of it for the model, and
 * every failure as a tool error that says what to do next (tool-errors.ts). One server per MCP
 * connection; the backend (API client, located gateway) is shared.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { McpBackend } from "./backend.ts";
import { type McpLimits, type ToolInput, type ToolName, type ToolOutput, toolSchemas } from "./schemas.ts";
import { type ErrorSubject, toolError } from "./tool-errors.ts";

export interface ServerOptions {
  backend: McpBackend;
  limits: McpLimits;
  version: string;
  /** One line to stderr (stdout belongs to the stdio transport). */
  log: (line: string) => void;
  /** How often a call the client asked progress for reports that it is still running. */
  progressIntervalMs?: number;
}

/** What the SDK hands a tool handler besides its arguments (the parts used here). */
interface HandlerExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; message: string };
  }) => Promise<void>;
}

interface ToolSpec<N extends ToolName> {
  title: string;
  description: string;
  annotations: ToolAnnotations;
  subject: ErrorSubject;
  /** What the log line names (never arguments that may hold data). */
  about: (a: ToolInput<N>) => string;
  render: (out: ToolOutput<N>, a: ToolInput<N>) => string;
}

type Specs = { [N in ToolName]: ToolSpec<N> };

export function instructions(namespace: string, limits: McpLimits): string {
  return [
    `kruntimes on Kubernetes, namespace "${namespace}", with the credentials of the user who started this server.`,
    "For a sequence of steps that share files and state, create_session (a private workspace on a warm pod), then exec, write_file, read_file and list_files on it, and close_session when done (idle sessions end by themselves).",
    "For one self-contained script, run_task: it runs the script to the end and returns the phase, exit code, named outputs and the end of its output.",
    "invoke_function calls a function Run that is already serving.",
    `Outputs are bounded: ${limits.maxOutputBytes} bytes per stream of a command, ${limits.maxReadBytes} bytes per read_file call (continue with offset); cut text is marked with the number of bytes left out.`,
  ].join("\n");
}

export function createMcpServer(o: ServerOptions): McpServer {
  const server = new McpServer(
    { name: "kruntimes", title: "kruntimes (krt mcp)", version: o.version },
    { instructions: instructions(o.backend.namespace, o.limits) },
  );
  const schemas = toolSchemas(o.limits);
  const specs = toolSpecs(o.limits);
  for (const name of Object.keys(specs) as ToolName[])
    register(server, o, name, specs[name] as unknown as LooseSpec, schemas[name]);
  return server;
}

/** A spec with its tool's types erased: the loop over all tools cannot keep them apart. */
interface LooseSpec {
  title: string;
  description: string;
  annotations: ToolAnnotations;
  subject: ErrorSubject;
  about: (a: unknown) => string;
  render: (out: unknown, a: unknown) => string;
}

function register(
  server: McpServer,
  o: ServerOptions,
  name: ToolName,
  spec: LooseSpec,
  schema: { input: Record<string, unknown>; output: Record<string, unknown> },
): void {
  const call = o.backend[name] as (a: unknown, s?: AbortSignal) => Promise<unknown>;
  const handler = async (args: unknown, extra: HandlerExtra): Promise<CallToolResult> => {
    const started = performance.now();
    const took = () => `${Math.round(performance.now() - started)} ms`;
    // Clients time calls out (the SDK's default is 60 s) unless progress arrives: a client that
    // asked for progress hears every few seconds that a long call (a wait, a command) is alive.
    const token = extra._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : setInterval(() => {
            const seconds = Math.round((performance.now() - started) / 1000);
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress: seconds,
                  message: `${name}: still running after ${seconds}s`,
                },
              })
              .catch(() => {});
          }, o.progressIntervalMs ?? 5000);
    try {
      const out = await call.call(o.backend, args, extra.signal);
      o.log(`${name} ${spec.about(args)}: ok (${took()})`);
      return {
        content: [{ type: "text", text: spec.render(out, args) }],
        structuredContent: out as Record<string, unknown>,
      };
    } catch (e) {
      const result = toolError(e, spec.subject);
      const first = (result.content[0] as { text: string }).text.split("\n")[0];
      o.log(`${name} ${spec.about(args)}: ${first} (${took()})`);
      return result;
    } finally {
      clearInterval(progress);
    }
  };
  // The SDK's generic typing of shapes does not follow the erased types; schemas.ts types them.
  (server.registerTool as (n: string, c: unknown, cb: unknown) => void)(
    name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: schema.input,
      outputSchema: schema.output,
      annotations: spec.annotations,
    },
    handler,
  );
}

function toolSpecs(limits: McpLimits): Specs {
  return {
    create_session: {
      title: "Create a session",
      description:
        "Creates a session: a private, stateful workspace (files, processes) on a warm pod of a Runtime, and waits until it is Ready. Returns its name, which exec, read_file, write_file, list_files and close_session take. It ends after idleTimeoutSeconds without an operation, or with close_session.",
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      subject: "run",
      about: (a) => `runtime=${a.runtime}${a.name ? ` name=${a.name}` : ""}`,
      render: (s) =>
        `session "${s.session}" is Ready (runtime ${s.runtime}, namespace ${s.namespace}${s.pod ? `, pod ${s.pod}` : ""}). Use it with exec, write_file, read_file and list_files; end it with close_session.`,
    },
    exec: {
      title: "Run a command in a session",
      description: `Runs a shell command line in a session's workspace and returns its exit code, stdout and stderr (each cut to ${limits.maxOutputBytes} bytes, keeping the start and the end). Commands and file writes of one session run one at a time, in order. A non-zero exit code is a result, not an error.`,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      subject: "session",
      about: (a) => `session=${a.session}`,
      render: renderExec,
    },
    read_file: {
      title: "Read a file of a session",
      description: `Reads a file of a session's workspace (path relative to it): text as is, other bytes as base64. At most maxBytes (${limits.maxReadBytes} at most) from offset; a longer file is cut and nextOffset says where to continue.`,
      annotations: { readOnlyHint: true, openWorldHint: false },
      subject: "session",
      about: (a) => `session=${a.session}`,
      render: renderRead,
    },
    write_file: {
      title: "Write a file in a session",
      description: `Writes a file in a session's workspace (path relative to it), atomically: readers see the old or the whole new content. Creates missing directories unless parents is false. At most ${limits.maxWriteBytes} bytes per call; append to write more.`,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      subject: "session",
      about: (a) => `session=${a.session}`,
      render: (w) => `wrote ${w.path} (${w.size} bytes) in session "${w.session}"`,
    },
    list_files: {
      title: "List a directory of a session",
      description:
        "Lists a directory of a session's workspace (default: the workspace itself) in name order: type, permissions, size, modification time, name. At most limit entries; nextCursor continues.",
      annotations: { readOnlyHint: true, openWorldHint: false },
      subject: "session",
      about: (a) => `session=${a.session}`,
      render: renderList,
    },
    close_session: {
      title: "Close a session",
      description:
        "Ends a session: by default it drains (running operations finish, then it ends Succeeded); cancel: true ends it at once, killing what runs. Its workspace is gone afterwards. Waits up to waitSeconds for the end.",
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      subject: "run",
      about: (a) => `session=${a.session}${a.cancel ? " cancel" : ""}`,
      render: (c) =>
        `session "${c.session}": ${c.requested === "none" ? "had already ended" : `${c.requested} requested`}; phase ${c.phase}${c.reason ? ` (${c.reason})` : ""}${c.ended ? "" : " — still ending"}${c.message ? `: ${c.message}` : ""}`,
    },
    run_task: {
      title: "Run a script as a task",
      description: `Runs a script to the end as a task on a warm pod (bash or python, as the Runtime runs it) and returns its phase, exit code, named outputs (key=value lines appended to $KRUNTIME_OUTPUTS) and the end of its stdout and stderr. Nothing is kept between tasks; use a session for that.`,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
      subject: "run",
      about: (a) => `runtime=${a.runtime}`,
      render: renderTask,
    },
    invoke_function: {
      title: "Call a function",
      description: `Calls a function Run (one that is Ready) once with a body (text, or a JSON value as json) and returns its status, content type, headers and body (cut to ${limits.maxOutputBytes} bytes). A handler that raised comes back as an error with its type, message and traceback.`,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
      subject: "function",
      about: (a) => `name=${a.name}`,
      render: renderInvoke,
    },
  };
}

function renderExec(x: ToolOutput<"exec">): string {
  const how =
    x.reason === "exited"
      ? x.signal
        ? `killed by ${x.signal}`
        : `exit code ${x.exitCode}`
      : x.reason === "timeout"
        ? "hit its timeout"
        : x.reason === "cancelled"
          ? "was cancelled"
          : "could not start";
  const lines = [`${how}${x.message ? `: ${x.message}` : ""} (${x.durationMs} ms)`];
  lines.push(block("stdout", x.stdout, x.stdoutBytes), block("stderr", x.stderr, x.stderrBytes));
  return lines.join("\n");
}

/** A block of output: its name and size, then the text (its final newline left to the join). */
function block(name: string, text: string, bytes: number, note = ""): string {
  if (bytes === 0) return `${name}: (empty)`;
  return `${name} (${bytes} bytes${note}):\n${text.endsWith("\n") ? text.slice(0, -1) : text}`;
}

function renderRead(r: ToolOutput<"read_file">): string {
  const range = r.offset || r.truncated ? `, bytes ${r.offset}–${r.offset + r.bytes}` : "";
  const head = `${r.path} (${r.size} bytes${range}${r.encoding === "base64" ? ", not UTF-8: base64" : ""}):`;
  const cut = r.truncated
    ? `\n[… cut by krt mcp: ${r.size - r.offset - r.bytes} more bytes; continue with offset ${r.nextOffset} …]`
    : "";
  return `${head}\n${r.content}${cut}`;
}

function renderList(l: ToolOutput<"list_files">): string {
  const lines = l.entries.map((e) => {
    const when = e.modified ? e.modified.slice(0, 19).replace("T", " ") : "-";
    const name = e.type === "dir" ? `${e.name}/` : e.linkTarget ? `${e.name} -> ${e.linkTarget}` : e.name;
    return `${e.type.padEnd(5)} ${e.mode.padStart(5, "0")} ${String(e.size).padStart(10)}  ${when}  ${name}`;
  });
  if (lines.length === 0) lines.push("(empty directory)");
  if (l.nextCursor) lines.push(`[more entries: call list_files again with cursor "${l.nextCursor}"]`);
  return `${l.path || "."} in session "${l.session}":\n${lines.join("\n")}`;
}

function renderTask(t: ToolOutput<"run_task">): string {
  const parts = [`phase ${t.phase}`];
  if (t.exitCode !== undefined) parts.push(`exit code ${t.exitCode}`);
  if (t.signal) parts.push(`signal ${t.signal}`);
  if (t.reason) parts.push(`reason ${t.reason}`);
  const lines = [
    `task "${t.run}": ${parts.join(", ")}${t.message ? `: ${t.message}` : ""} (${t.durationMs} ms)`,
  ];
  const outputs = Object.entries(t.outputs);
  if (outputs.length) lines.push("outputs:", ...outputs.map(([k, v]) => `  ${k}=${v}`));
  const tail = (name: string, text: string, cut: boolean) =>
    block(name, text, new TextEncoder().encode(text).byteLength, cut ? ", its end only" : "");
  lines.push(
    tail("stdout", t.stdoutTail, t.stdoutTruncated),
    tail("stderr", t.stderrTail, t.stderrTruncated),
  );
  return lines.join("\n");
}

function renderInvoke(r: ToolOutput<"invoke_function">): string {
  const head = `status ${r.status}, ${r.contentType || "no content type"}, ${r.bytes} bytes (invocation ${r.invocationId}, ${r.durationMs} ms)`;
  const body = r.encoding === "base64" ? `(not UTF-8: base64)\n${r.body}` : r.body;
  const cut = r.truncated
    ? `\n[… cut by krt mcp: the body has ${r.bytes} bytes; only its start is shown …]`
    : "";
  return `${head}\n${body}${cut}`;
}
