{{/* The labels that select this release's pods. */}}
{{- define "strata.selector" -}}
app.kubernetes.io/name: strata
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "strata.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}{{ default .Release.Name .Values.serviceAccount.name }}{{ else }}{{ default "default" .Values.serviceAccount.name }}{{ end }}
{{- end }}

{{/* The URL GitHub reaches Strata at: publicURL, or the ingress host. */}}
{{- define "strata.publicURL" -}}
{{- if .Values.publicURL }}{{ trimSuffix "/" .Values.publicURL }}
{{- else if and .Values.ingress.enabled .Values.ingress.host }}{{ if .Values.ingress.tls.secretName }}https{{ else }}http{{ end }}://{{ .Values.ingress.host }}
{{- end }}
{{- end }}

{{- define "strata.postgres" -}}
{{- if or (hasPrefix "postgres://" .Values.databaseURL) (hasPrefix "postgresql://" .Values.databaseURL) }}true{{ end }}
{{- end }}

{{/* Values that cannot work are refused at render time, with what to do. */}}
{{- define "strata.validate" -}}
{{- $replicas := int .Values.replicas }}
{{- if lt $replicas 1 }}
{{- fail "replicas must be at least 1" }}
{{- end }}
{{- if and (gt $replicas 1) (not (include "strata.postgres" .)) }}
{{- fail (printf "replicas is %d, but databaseURL is not PostgreSQL: each replica would have its own SQLite file, with its own locks and queue. Set databaseURL to postgres://USER@HOST/DB (its password in databasePasswordSecret), or set replicas to 1." $replicas) }}
{{- end }}
{{- if and (gt $replicas 1) (not .Values.encryptionKeySecret.name) }}
{{- fail (printf "replicas is %d, but encryptionKeySecret.name is empty: each replica would encrypt saved plans with a key of its own, and could not apply the others' plans. Create a Secret with STRATA_ENCRYPTION_KEY (head -c 32 /dev/urandom | base64) and name it in encryptionKeySecret.name." $replicas) }}
{{- end }}
{{- if and .Values.databaseURL (not (include "strata.postgres" .)) (not (hasPrefix "sqlite:" .Values.databaseURL)) }}
{{- fail (printf "databaseURL must start with postgres://, postgresql:// or sqlite:") }}
{{- end }}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) }}
{{- fail "ingress.enabled needs ingress.host: the host GitHub sends webhooks to" }}
{{- end }}
{{- if and .Values.config .Values.existingConfigMap }}
{{- fail "set config or existingConfigMap, not both" }}
{{- end }}
{{- end }}
