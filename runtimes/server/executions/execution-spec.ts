/** ExecutionSpec: an ExecuteRequest validated, with every default applied and every path resolved. */
import type { Program } from "../adapter.ts";
import type { OutputLimits } from "./outputs-file.ts";

/** A validated ExecuteRequest, with every default applied and every path resolved. */
export interface ExecutionSpec {
  runUid: string;
  runName: string;
  attempt: number;
  /** What to run; null together with a startError. */
  program: Program | null;
  /** Set when the request cannot start (a START_FAILED exit, not a call error). */
  startError: string;
  env: Record<string, string>;
  timeoutMs: number;
  graceMs: number;
  tailBytes: number;
  outputLimits: OutputLimits;
  cwd: string;
  /** True when cwd is the default <root>/<uid>/<attempt> (and so is the server's to remove). */
  defaultCwd: boolean;
  stateDir: string;
  outputsPath: string;
}
