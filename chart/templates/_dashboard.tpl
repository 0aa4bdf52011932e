{{/* The dashboard's objects: <fullname>-dashboard (ServiceAccount, Deployment, Service, Ingress). */}}
{{- define "kruntimes.dashboard.name" -}}
{{- printf "%s-dashboard" (include "kruntimes.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kruntimes.dashboard.selector" -}}
app.kubernetes.io/name: kruntimes-dashboard
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kruntimes.dashboard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kruntimes.dashboard.selector" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kruntimes
app.kubernetes.io/component: dashboard
{{- end -}}
