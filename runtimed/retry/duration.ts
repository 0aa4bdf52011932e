/**
 * Re-export: the Run API's duration parser lives in @kruntimes/api. Kept only because
 * runtimed/execution/execute-request.ts imports this path and another engineer owns that folder
 * right now; switch that import to "@kruntimes/api" and delete this file.
 */
export { durationOr, parseDuration } from "@kruntimes/api";
