{{/* The chart name, or nameOverride. */}}
{{- define "fleetform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the objects: RELEASE-fleetform unless the release name holds the chart's. */}}
{{- define "fleetform.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "fleetform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fleetform.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "fleetform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "fleetform.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/component: serve
app.kubernetes.io/part-of: fleetform
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "fleetform.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "fleetform.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
fleetform.validate fails the render on values that cannot work, with the reason. It renders
nothing otherwise.
*/}}
{{- define "fleetform.validate" -}}
{{- $db := .Values.database }}
{{- $_ := required "config.controlPlane is required: the URL of the control plane's git repository" .Values.config.controlPlane }}
{{- if eq $db.type "sqlite" }}
{{- if gt (int .Values.replicaCount) 1 }}
{{- fail (printf "replicaCount is %d but database.type is sqlite: SQLite allows exactly one replica; set database.type=postgres and database.postgres.url for more" (int .Values.replicaCount)) }}
{{- end }}
{{- else if eq $db.type "postgres" }}
{{- if not $db.postgres.url }}
{{- fail "database.type is postgres but database.postgres.url is empty" }}
{{- end }}
{{- if not (regexMatch "^postgres(ql)?://" $db.postgres.url) }}
{{- fail "database.postgres.url must start with postgres:// or postgresql://" }}
{{- end }}
{{- if regexMatch "^postgres(ql)?://[^/@]*:[^/@]*@" $db.postgres.url }}
{{- fail "database.postgres.url holds a password: remove it and name the Secret that holds it in database.postgres.passwordSecret" }}
{{- end }}
{{- if regexMatch "[?&]password=" $db.postgres.url }}
{{- fail "database.postgres.url holds a password: remove it and name the Secret that holds it in database.postgres.passwordSecret" }}
{{- end }}
{{- else }}
{{- fail (printf "database.type %q: want sqlite or postgres" $db.type) }}
{{- end }}
{{- range $i, $c := .Values.git.credentials }}
{{- if or (not (get $c "url")) (not (get $c "existingSecret")) (not (get $c "key")) }}
{{- fail (printf "git.credentials[%d]: url, existingSecret and key are required" $i) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of the environment variable that holds the token of git.credentials[i]. */}}
{{- define "fleetform.credentialEnv" -}}
{{- printf "FLEETFORM_GIT_CREDENTIAL_%d" . }}
{{- end }}

{{/* fleetform.yaml: config, plus a credentials entry for each git.credentials entry. */}}
{{- define "fleetform.configFile" -}}
{{- $config := deepCopy .Values.config }}
{{- $creds := list }}
{{- range (get $config "credentials" | default list) }}
{{- $creds = append $creds . }}
{{- end }}
{{- range $i, $c := .Values.git.credentials }}
{{- $entry := dict "url" $c.url "tokenEnv" (include "fleetform.credentialEnv" $i) }}
{{- with (get $c "username") }}
{{- $_ := set $entry "username" . }}
{{- end }}
{{- if (get $c "allowInsecureHTTP") }}
{{- $_ := set $entry "allowInsecureHTTP" true }}
{{- end }}
{{- $creds = append $creds $entry }}
{{- end }}
{{- if $creds }}
{{- $_ := set $config "credentials" $creds }}
{{- end }}
{{- if not (get $config "gitops") }}
{{- $_ := unset $config "gitops" }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/* The arguments of `fleetform serve`. */}}
{{- define "fleetform.args" -}}
- serve
- --config=/etc/fleetform/fleetform.yaml
- --addr=0.0.0.0:8080
- --data-dir=/data
{{- if eq .Values.database.type "sqlite" }}
- --db=sqlite:/data/fleetform.db
{{- else }}
- {{ printf "--db=%s" .Values.database.postgres.url | quote }}
{{- end }}
- {{ printf "--interval=%s" .Values.interval | quote }}
- {{ printf "--log-format=%s" .Values.logFormat | quote }}
{{- range .Values.environments }}
- {{ printf "--env=%s" . | quote }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
The environment of the container: the Secrets (secretKeyRef only, never a value), then
extraEnv.
*/}}
{{- define "fleetform.env" -}}
{{- with .Values.secrets.adminToken }}
{{- if .existingSecret }}
- name: FLEETFORM_HUB_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- end }}
{{- with .Values.secrets.webhookSecret }}
{{- if .existingSecret }}
- name: FLEETFORM_WEBHOOK_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- end }}
{{- if and (eq .Values.database.type "postgres") .Values.database.postgres.passwordSecret.name }}
- name: PGPASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.postgres.passwordSecret.name | quote }}
      key: {{ .Values.database.postgres.passwordSecret.key | quote }}
{{- end }}
{{- range $i, $c := .Values.git.credentials }}
- name: {{ include "fleetform.credentialEnv" $i }}
  valueFrom:
    secretKeyRef:
      name: {{ $c.existingSecret | quote }}
      key: {{ $c.key | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The pod template of the StatefulSet (SQLite) and of the Deployment (PostgreSQL). */}}
{{- define "fleetform.podTemplate" -}}
metadata:
  labels:
    {{- include "fleetform.labels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "fleetform.serviceAccountName" . }}
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: fleetform
      image: {{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        {{- include "fleetform.args" . | nindent 8 }}
      {{- with (include "fleetform.env" . | trim) }}
      env:
        {{- . | nindent 8 }}
      {{- end }}
      ports:
        - name: http
          containerPort: 8080
          protocol: TCP
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: config
          mountPath: /etc/fleetform
          readOnly: true
        - name: data
          mountPath: /data
        - name: tmp
          mountPath: /tmp
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "fleetform.fullname" . }}
    - name: tmp
      emptyDir: {}
    {{- if eq .Values.database.type "postgres" }}
    - name: data
      emptyDir:
        sizeLimit: {{ .Values.database.cacheSizeLimit }}
    {{- else if .Values.database.sqlite.persistence.existingClaim }}
    - name: data
      persistentVolumeClaim:
        claimName: {{ .Values.database.sqlite.persistence.existingClaim | quote }}
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
