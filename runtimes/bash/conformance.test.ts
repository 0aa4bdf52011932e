/** The bash runtime against the shared Runtime Server conformance suite. */
import { fileURLToPath } from "node:url";
import { runConformance, sourceTarget } from "../conformance/conformance.ts";
import { bashScripts } from "../conformance/language-scripts.ts";

runConformance(
  sourceTarget("bash", fileURLToPath(new URL("../server/main.ts", import.meta.url))),
  bashScripts,
);
