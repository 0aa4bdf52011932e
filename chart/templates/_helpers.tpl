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
{{- $w := .Values.webhook -}}
{{- if and $w.enabled $w.tls.certManager.enabled (not $w.tls.certManager.issuerRef.name) -}}
{{- fail "webhook.tls.certManager.enabled needs webhook.tls.certManager.issuerRef.name (an Issuer or ClusterIssuer)" -}}
{{- end -}}
{{- if and $w.enabled (eq $w.failurePolicy "Fail") (eq (int .Values.controller.replicas) 0) -}}
{{- fail "webhook.enabled with controller.replicas=0: nothing would answer the webhook, and with failurePolicy Fail every Run naming a PersistentWorkspace would be refused; set webhook.enabled=false or scale the controller up" -}}
{{- end -}}
{{- $g := .Values.gateway -}}
{{- if $g.enabled -}}
{{- if and $g.tls.existingSecret $g.tls.certManager.enabled -}}
{{- fail "gateway.tls.existingSecret and gateway.tls.certManager.enabled exclude each other: pick one source of the gateway's certificate" -}}
{{- end -}}
{{- if and $g.tls.certManager.enabled (not $g.tls.certManager.issuerRef.name) -}}
{{- fail "gateway.tls.certManager.enabled needs gateway.tls.certManager.issuerRef.name (an Issuer or ClusterIssuer)" -}}
{{- end -}}
{{- if and $g.tls.caBundle (not (or $g.tls.existingSecret $g.tls.certManager.enabled)) -}}
{{- fail "gateway.tls.caBundle is for an existingSecret or cert-manager certificate; the chart-made certificate publishes its own CA" -}}
{{- end -}}
{{- $dt := include "kruntimes.durationMs" $g.limits.defaultTimeout | float64 -}}
{{- $mt := include "kruntimes.durationMs" $g.limits.maxTimeout | float64 -}}
{{- if gt $dt $mt -}}
{{- fail (printf "gateway.limits.defaultTimeout (%s) must not be longer than maxTimeout (%s)" $g.limits.defaultTimeout $g.limits.maxTimeout) -}}
{{- end -}}
{{- $allow := include "kruntimes.durationMs" $g.auth.cacheTtl | float64 -}}
{{- $deny := include "kruntimes.durationMs" $g.auth.denyTtl | float64 -}}
{{- if gt $deny $allow -}}
{{- fail (printf "gateway.auth.denyTtl (%s) must not be longer than cacheTtl (%s)" $g.auth.denyTtl $g.auth.cacheTtl) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The admission webhook's Service and certificate Secret (<fullname>-webhook, …-webhook-tls). */}}
{{- define "kruntimes.webhook.name" -}}
{{- printf "%s-webhook" (include "kruntimes.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The gateway's objects: <fullname>-gateway (ServiceAccount, Deployment, Service, PDB, Role). */}}
{{- define "kruntimes.gateway.name" -}}
{{- printf "%s-gateway" (include "kruntimes.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kruntimes.gateway.clusterName" -}}
{{- printf "%s-%s-gateway" .Release.Namespace (include "kruntimes.fullname" .) -}}
{{- end -}}

{{/* The Secret holding the https listener's certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "kruntimes.gateway.tlsSecret" -}}
{{- default (printf "%s-tls" (include "kruntimes.gateway.name" .)) .Values.gateway.tls.existingSecret -}}
{{- end -}}

{{/* The ConfigMap publishing the CA that signed the gateway's certificate (key ca.crt). */}}
{{- define "kruntimes.gateway.caConfigMap" -}}
{{- printf "%s-ca" (include "kruntimes.gateway.name" .) -}}
{{- end -}}

{{/*
Gateway pods carry a fixed app.kubernetes.io/name, kruntimes-gateway, whatever nameOverride says:
the controller's NetworkPolicies select them by it and `krt invoke` finds the Service by it.
*/}}
{{- define "kruntimes.gateway.selector" -}}
app.kubernetes.io/name: kruntimes-gateway
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kruntimes.gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kruntimes.gateway.selector" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kruntimes
app.kubernetes.io/component: gateway
{{- end -}}

{{/* The gateway's ServiceAccount as an RBAC username (runtimed's --dataplane-subjects). */}}
{{- define "kruntimes.gateway.subject" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "kruntimes.gateway.name" .) -}}
{{- end -}}

{{/* The Service's in-cluster DNS names: the certificate's SANs. */}}
{{- define "kruntimes.gateway.dnsNames" -}}
{{- $svc := include "kruntimes.gateway.name" . -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.gateway.tls.clusterDomain) "localhost" -}}
{{- concat $names .Values.gateway.tls.extraDnsNames | uniq | toJson -}}
{{- end -}}

{{/*
ClusterRoleBindings to system:auth-delegator (TokenReview + SubjectAccessReview) that the
controller makes: one per Runtime for runtimed (its dataplane checks the gateway's token), one
per artifact store for its maintainer (downloads). `bind` only on that one ClusterRole.
*/}}
{{- define "kruntimes.controller.authDelegatorRules" -}}
# runtimed (per Runtime) and artifact maintainers (per store) are bound to system:auth-delegator
# so they can check tokens: runtimed the gateway's, a maintainer a downloader's.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterrolebindings]
  verbs: [create, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  resourceNames: [system:auth-delegator]
  verbs: [bind]
{{- end -}}
