/**
 * RuntimeService: Health (serving status, load, warm interpreters, the server's clock) and Info
 * (capabilities and limits, fixed for the server's life). Health is what runtimed's readiness
 * follows, so it reads counters only and never waits on anything.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  HealthResponseSchema,
  type InfoResponse,
  RemoveDirectoryResponseSchema,
  type RuntimeService,
  ServingStatus,
} from "../../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { nowMicros } from "../clock.ts";
import { RuntimeServerError } from "../errors.ts";

export interface RuntimeServiceDeps {
  info: InfoResponse;
  draining(): boolean;
  running(): number;
  warmReady(): number;
  /** Deletes a directory under the workspace root (see remove-directory.ts). */
  removeDirectory(path: string): { existed: boolean };
}

export function runtimeService(deps: RuntimeServiceDeps): ServiceImpl<typeof RuntimeService> {
  return {
    health() {
      return create(HealthResponseSchema, {
        status: deps.draining() ? ServingStatus.DRAINING : ServingStatus.SERVING,
        running: deps.running(),
        warmReady: deps.warmReady(),
        nowMicros: BigInt(nowMicros()),
      });
    },
    info() {
      return deps.info;
    },
    removeDirectory(req) {
      try {
        return create(RemoveDirectoryResponseSchema, deps.removeDirectory(req.path));
      } catch (e) {
        throw RuntimeServerError.toConnect(e);
      }
    },
  };
}
