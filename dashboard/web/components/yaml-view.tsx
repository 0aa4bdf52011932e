/** An object as YAML (the `yaml` package), without managedFields noise. */
import { stringify } from "yaml";

export function YamlView({ value }: { value: unknown }) {
  return <pre class="yaml">{stringify(value, { lineWidth: 0 })}</pre>;
}
