{{/* Names, labels and image references shared by every template. */}}

{{- define "kruntimes.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<chart>, or just the release when it already contains the chart name. */}}
{{- define "kruntimes.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "kruntimes.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Namespaced objects of the controller. */}}
{{- define "kruntimes.controller.name" -}}
{{- printf "%s-controller" (include "kruntimes.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Cluster-scoped objects carry the release namespace too: two releases never share one. */}}
{{- define "kruntimes.clusterName" -}}
{{- printf "%s-%s-controller" .Release.Namespace (include "kruntimes.fullname" .) -}}
{{- end -}}

{{- define "kruntimes.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "kruntimes.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kruntimes
{{- end -}}

{{- define "kruntimes.controller.selector" -}}
app.kubernetes.io/name: {{ include "kruntimes.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* image "<component>" -> <registry>/<component>:<tag or appVersion> */}}
{{- define "kruntimes.image" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $root.Values.image.registry) $component (default $root.Chart.AppVersion $root.Values.image.tag) -}}
{{- end -}}

{{- define "kruntimes.runtimedImage" -}}
{{- default (include "kruntimes.image" (list . "runtimed")) .Values.runtimed.image -}}
{{- end -}}

{{/* Milliseconds in a Go-style duration ("1m30s", "500ms"); the schema has checked its form. */}}
{{- define "kruntimes.durationMs" -}}
{{- $units := dict "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9.]+(ms|s|m|h)" . -1 -}}
{{- $total = addf $total (mulf (regexFind "^[0-9.]+" . | float64) (index $units (regexFind "(ms|s|m|h)$" .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* Settings the schema cannot relate to each other fail here, with what to change. */}}
{{- define "kruntimes.validate" -}}
{{- $le := .Values.controller.leaderElection -}}
{{- $lease := include "kruntimes.durationMs" $le.leaseDuration | float64 -}}
{{- $renew := include "kruntimes.durationMs" $le.renewDeadline | float64 -}}
{{- $retry := include "kruntimes.durationMs" $le.retryPeriod | float64 -}}
{{- if not (lt $renew $lease) -}}
{{- fail (printf "controller.leaderElection.renewDeadline (%s) must be shorter than leaseDuration (%s)" $le.renewDeadline $le.leaseDuration) -}}
{{- end -}}
{{- if not (lt $retry $renew) -}}
{{- fail (printf "controller.leaderElection.retryPeriod (%s) must be shorter than renewDeadline (%s)" $le.retryPeriod $le.renewDeadline) -}}
{{- end -}}
{{- if and (not $le.enabled) (gt (int .Values.controller.replicas) 1) -}}
{{- fail (printf "controller.replicas=%d needs controller.leaderElection.enabled=true: without it every replica would act at once" (int .Values.controller.replicas)) -}}
{{- end -}}
{{- end -}}
