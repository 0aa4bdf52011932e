/**
 * The public API's schema as a protoset (a binary `google.protobuf.FileDescriptorSet`) for gRPC
 * tools without reflection: `grpcurl -protoset`. Built from the descriptors compiled into the
 * gateway, so it always matches what the gateway serves. Served at GET /v1/protoset.
 */
import { create, type DescFile, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { file_kruntimes_gateway_v1_function } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { file_kruntimes_gateway_v1_session } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";

export const PROTOSET_PATH = "/v1/protoset";

/** Every file of the public API and its imports, dependencies first. */
export function protoset(
  files: DescFile[] = [file_kruntimes_gateway_v1_function, file_kruntimes_gateway_v1_session],
): Uint8Array {
  const seen = new Set<string>();
  const ordered: DescFile[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.add(f.name);
    for (const dep of f.dependencies) visit(dep);
    ordered.push(f);
  };
  for (const f of files) visit(f);
  return toBinary(
    FileDescriptorSetSchema,
    create(FileDescriptorSetSchema, { file: ordered.map((f) => f.proto) }),
  );
}
