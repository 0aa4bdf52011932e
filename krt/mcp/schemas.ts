/**
 * The tools' input and output schemas (zod shapes, which the MCP SDK turns into JSON Schema for
 * tools/list and checks every call against), and the server's limits they are built from. Bounds
 * here are the API's own (name syntax, inline source length, list page size, operation timeout),
 * so a bad argument is refused by the SDK with the field's name before anything is sent.
 */
import { FunctionLimits, Limits, SessionLimits } from "@kruntimes/api";
import { z } from "zod";
import type { McpLimits } from "./limits.ts";

/** The longest wait a call may ask for: MCP clients give up on calls long before an hour. */
export const MAX_WAIT_SECONDS = 3600;

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DAY = 24 * 3600;

const runName = (what: string) =>
  z
    .string()
    .max(253)
    .regex(NAME, "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit")
    .describe(what);
const session = () => runName("The session's name, as create_session returned it");
const seconds = (max: number, what: string) => z.number().int().min(1).max(max).describe(what);
const env = () =>
  z
    .record(z.string().regex(ENV_NAME, "an environment variable name"), z.string())
    .describe("Environment variables, NAME: value");

const FILE_TYPES = ["file", "dir", "link", "other", "unknown"] as const;

export function toolSchemas(limits: McpLimits) {
  return {
    create_session: {
      input: {
        runtime: runName("Runtime whose warm pod the session takes (e.g. bash, python)").default("bash"),
        name: runName("Name of the session Run (default: generated from the runtime)").optional(),
        idleTimeoutSeconds: seconds(
          7 * DAY,
          `End the session after this many seconds without an operation (default ${limits.sessionIdleTimeoutSeconds || "never"})`,
        ).optional(),
        timeoutSeconds: seconds(30 * DAY, "Longest lifetime of the session (default: none)").optional(),
        waitSeconds: seconds(
          600,
          "How long to wait for the session to be Ready; if it is not, it is cancelled",
        ).default(120),
      },
      output: {
        session: z.string(),
        namespace: z.string(),
        runtime: z.string(),
        phase: z.string(),
        pod: z.string().optional(),
      },
    },
    exec: {
      input: {
        session: session(),
        command: z
          .string()
          .min(1)
          .max(64 * 1024)
          .describe("A shell command line, run by the runtime's shell in the session's workspace"),
        workdir: z
          .string()
          .max(4096)
          .optional()
          .describe("Working directory, relative to the workspace (default: the workspace)"),
        env: env().optional(),
        stdin: z.string().max(limits.maxWriteBytes).optional().describe("Text sent to the command's stdin"),
        timeoutSeconds: seconds(
          SessionLimits.maxOperationTimeoutMs / 1000,
          "Operation timeout, time waiting behind earlier operations included (default: the session's, 5 minutes unless set)",
        ).optional(),
      },
      output: {
        session: z.string(),
        exitCode: z.number().int().nullable(),
        reason: z.enum(["exited", "timeout", "cancelled", "start_failed"]),
        signal: z.string().optional(),
        message: z.string().optional(),
        stdout: z.string(),
        stderr: z.string(),
        stdoutBytes: z.number().int(),
        stderrBytes: z.number().int(),
        stdoutTruncated: z.boolean(),
        stderrTruncated: z.boolean(),
        durationMs: z.number().int(),
      },
    },
    read_file: {
      input: {
        session: session(),
        path: z.string().min(1).max(4096).describe("Path relative to the session's workspace"),
        offset: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe("Byte offset to start at (to continue a cut read)"),
        maxBytes: z
          .number()
          .int()
          .min(1)
          .max(limits.maxReadBytes)
          .default(limits.maxReadBytes)
          .describe(`Bytes to return at most (at most ${limits.maxReadBytes})`),
      },
      output: {
        session: z.string(),
        path: z.string(),
        size: z.number().int(),
        offset: z.number().int(),
        bytes: z.number().int(),
        encoding: z.enum(["utf-8", "base64"]),
        content: z.string(),
        truncated: z.boolean(),
        nextOffset: z.number().int().optional(),
      },
    },
    write_file: {
      input: {
        session: session(),
        path: z.string().min(1).max(4096).describe("Path relative to the session's workspace"),
        content: z
          .string()
          .describe(`The file's content (at most ${limits.maxWriteBytes} bytes once decoded)`),
        encoding: z.enum(["utf-8", "base64"]).default("utf-8").describe("How content is encoded"),
        mode: z
          .enum(["truncate", "create", "append"])
          .default("truncate")
          .describe("truncate replaces the file, create refuses an existing one, append adds to it"),
        parents: z.boolean().default(true).describe("Create missing parent directories"),
      },
      output: { session: z.string(), path: z.string(), size: z.number().int() },
    },
    list_files: {
      input: {
        session: session(),
        path: z
          .string()
          .max(4096)
          .default("")
          .describe("Directory relative to the workspace (default: the workspace)"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(SessionLimits.maxListLimit)
          .default(SessionLimits.defaultListLimit)
          .describe("Entries to return at most"),
        cursor: z.string().max(4096).optional().describe("nextCursor of the previous call, to continue"),
      },
      output: {
        session: z.string(),
        path: z.string(),
        entries: z.array(
          z.object({
            name: z.string(),
            path: z.string(),
            type: z.enum(FILE_TYPES),
            size: z.number().int(),
            mode: z.string(),
            modified: z.string().nullable(),
            linkTarget: z.string().optional(),
          }),
        ),
        nextCursor: z.string().optional(),
      },
    },
    close_session: {
      input: {
        session: session(),
        cancel: z
          .boolean()
          .default(false)
          .describe("End it now, killing what runs (default: drain — running operations finish first)"),
        waitSeconds: z
          .number()
          .int()
          .min(0)
          .max(600)
          .default(60)
          .describe("How long to wait until it has ended (0: do not wait)"),
      },
      output: {
        session: z.string(),
        requested: z.enum(["drain", "cancel", "none"]),
        phase: z.string(),
        ended: z.boolean(),
        reason: z.string().optional(),
        message: z.string().optional(),
      },
    },
    run_task: {
      input: {
        runtime: runName(
          "Runtime to run the script on (bash: a bash script, python: a Python program)",
        ).default("bash"),
        script: z
          .string()
          .min(1)
          .max(Limits.inlineSourceLength)
          .describe("The script; named results are `key=value` lines appended to $KRUNTIME_OUTPUTS"),
        env: env().optional(),
        timeoutSeconds: seconds(
          30 * DAY,
          "Longest the task may run (default: the Runtime's); it then ends in phase Timeout",
        ).optional(),
        waitSeconds: seconds(
          MAX_WAIT_SECONDS,
          "How long to wait for the result; if it has not ended, it is cancelled",
        ).default(300),
      },
      output: {
        run: z.string(),
        phase: z.string(),
        exitCode: z.number().int().optional(),
        signal: z.string().optional(),
        reason: z.string().optional(),
        message: z.string().optional(),
        outputs: z.record(z.string(), z.string()),
        stdoutTail: z.string(),
        stderrTail: z.string(),
        stdoutTruncated: z.boolean(),
        stderrTruncated: z.boolean(),
        durationMs: z.number().int(),
      },
    },
    invoke_function: {
      input: {
        name: runName("The function Run's name"),
        body: z.string().max(limits.maxWriteBytes).optional().describe("Request body as text"),
        json: z.unknown().optional().describe("Request body as a JSON value (instead of body)"),
        contentType: z
          .string()
          .max(255)
          .optional()
          .describe("Content type (default: application/json for json or a body that parses as JSON)"),
        headers: z
          .record(z.string(), z.string())
          .optional()
          .describe("Request headers passed to the handler"),
        timeoutSeconds: seconds(
          FunctionLimits.maxInvocationTimeoutMs / 1000,
          "Deadline of the call (default: the gateway's, at most the function's invocationTimeout)",
        ).optional(),
      },
      output: {
        function: z.string(),
        status: z.number().int(),
        contentType: z.string(),
        headers: z.record(z.string(), z.string()),
        body: z.string(),
        encoding: z.enum(["utf-8", "base64"]),
        bytes: z.number().int(),
        truncated: z.boolean(),
        invocationId: z.string(),
        durationMs: z.number(),
      },
    },
  };
}

export type { McpLimits };
export type ToolSchemas = ReturnType<typeof toolSchemas>;
export type ToolName = keyof ToolSchemas;
type Shape = Record<string, z.ZodType>;
type Obj<S extends Shape> = z.infer<z.ZodObject<S>>;
/** A tool's parsed arguments (defaults applied). */
export type ToolInput<N extends ToolName> = Obj<ToolSchemas[N]["input"]>;
/** A tool's structured result. */
export type ToolOutput<N extends ToolName> = Obj<ToolSchemas[N]["output"]>;
