/**
 * The limits of `krt mcp`'s results and of what it creates, and their defaults. Kept apart from
 * the schemas (zod) so that `krt` loads nothing of the MCP server unless `krt mcp` runs.
 */
export interface McpLimits {
  /** Bytes kept of each of exec's stdout and stderr, a task's tails and a function's response body. */
  maxOutputBytes: number;
  /** Bytes one read_file call returns at most (and its default). */
  maxReadBytes: number;
  /** Bytes one write_file call (or exec's stdin) may carry. */
  maxWriteBytes: number;
  /** idleTimeout of sessions created without idleTimeoutSeconds, in seconds (0 = none). */
  sessionIdleTimeoutSeconds: number;
  /** ttlSecondsAfterFinished of the task Runs run_task creates (0 = keep them). */
  taskTtlSeconds: number;
}

export const DEFAULT_LIMITS: McpLimits = {
  maxOutputBytes: 32 * 1024,
  maxReadBytes: 128 * 1024,
  maxWriteBytes: 4 * 1024 * 1024,
  sessionIdleTimeoutSeconds: 15 * 60,
  taskTtlSeconds: 60 * 60,
};
