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
  type RuntimeService,
  ServingStatus,
} from "../../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { nowMicros } from "../clock.ts";

export interface RuntimeServiceDeps {
  info: InfoResponse;
  draining(): boolean;
  running(): number;
  warmReady(): number;
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
  };
}
