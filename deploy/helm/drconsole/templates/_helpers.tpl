{{- define "drconsole.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "drconsole.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "drconsole.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "drconsole.serviceAccount" -}}
{{- default (include "drconsole.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "drconsole.secretName" -}}
{{- default (include "drconsole.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/*
drconsole.noInlineSecrets fails the render when the console's config holds
a secret inline: the ConfigMap is readable by anyone who may read the
namespace's ConfigMaps, and lands in `helm get values` and GitOps repos.
Secrets go in `secrets` (or existingSecret), mounted at
/run/secrets/drconsole, and the config names the file (*_file). Refused:
password, client_secret and secret; a notification webhook's url (a Slack
URL is the credential); any URL carrying user:password@.
*/}}
{{- define "drconsole.noInlineSecrets" -}}
{{- $path := .path -}}
{{- if kindIs "map" .value -}}
{{- range $k, $v := .value -}}
{{- $p := printf "%s.%s" $path $k -}}
{{- if and $v (has $k (list "password" "client_secret" "secret")) -}}
{{- fail (printf "%s is a secret and would be written into the ConfigMap: put it under `secrets` (or in existingSecret) and set %s_file: /run/secrets/drconsole/<key> instead" $p $k) -}}
{{- end -}}
{{- if and $v (eq $k "url") (contains ".webhooks[" $path) -}}
{{- fail (printf "%s: a webhook URL is a credential (Slack's is the whole secret) and would be written into the ConfigMap: put it under `secrets` and set url_file: /run/secrets/drconsole/<key> instead" $p) -}}
{{- end -}}
{{- if and (kindIs "string" $v) (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*@" $v) -}}
{{- fail (printf "%s carries a user name or password in the URL, which would be written into the ConfigMap: use the key's username and password_file instead" $p) -}}
{{- end -}}
{{- include "drconsole.noInlineSecrets" (dict "path" $p "value" $v) -}}
{{- end -}}
{{- else if kindIs "slice" .value -}}
{{- range $i, $v := .value -}}
{{- include "drconsole.noInlineSecrets" (dict "path" (printf "%s[%d]" $path $i) "value" $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
