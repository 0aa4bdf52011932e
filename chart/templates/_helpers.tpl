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
