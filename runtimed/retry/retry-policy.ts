/**
 * Re-export: `spec.retryPolicy` is interpreted once, in @kruntimes/api. Kept only because
 * runtimed/execution/run-supervisor.ts imports this path and another engineer owns that folder
 * right now; switch that import to "@kruntimes/api" and delete this file.
 */
export { canRetry, maxAttempts, retryDelayMs } from "@kruntimes/api";
