package controlplane_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestStrictDecoding feeds one file (objs.yaml, next to a valid environment) through Load and
// requires exactly the listed diagnostics, at their exact lines, and exactly the listed
// objects: a bad document is left out, the good ones load.
func TestStrictDecoding(t *testing.T) {
	t.Parallel()
	const file = "objs.yaml"
	tests := []struct {
		name   string
		file   string // default objs.yaml
		in     string
		want   []want
		loaded []string
	}{
		{
			name: "unknown field with did-you-mean",
			in: kindDoc("ClusterType", "large", "spec:\n  reconcilr: arc-flux\n  namespaceService: default\n"+
				"  configType: configmap\n"),
			want: []want{{file: file, line: 6, has: []string{"ClusterType/large", "spec.reconcilr", "unknown field", `did you mean "reconciler"?`}}},
		},
		{
			name: "misspelled nested field",
			in: kindDoc("SchedulingPolicy", "p", "spec:\n  deploymentTargetSelector:\n    labelSelector:\n"+
				"      matchLabel: {stack: observability}\n  clusterTypeSelector:\n    labelSelector: {}\n"),
			want: []want{{file: file, line: 8, has: []string{"spec.deploymentTargetSelector.labelSelector.matchLabel", `did you mean "matchLabels"?`}}},
		},
		{
			name: "unknown field far from any known one lists the known fields",
			in:   kindDoc("GitOpsRepo", "dev", "spec:\n  repo: r\n  branch: b\n  path: .\n  zzzzzzzzzzzz: 1\n"),
			want: []want{{file: file, line: 9, has: []string{"spec.zzzzzzzzzzzz", "known fields: branch, path, repo"}}},
		},
		{
			name: "field set twice",
			in: kindDoc("ClusterType", "large", "spec:\n  reconciler: arc-flux\n  namespaceService: default\n"+
				"  configType: configmap\n  reconciler: argocd\n"),
			want: []want{{file: file, line: 9, has: []string{"spec.reconciler", "set twice (first on line 6)"}}},
		},
		{
			name: "label key set twice",
			in:   kindDoc("ClusterType", "large", "  labels:\n    size: large\n    size: small\nspec: {}\n"),
			want: []want{{file: file, line: 7, has: []string{"metadata.labels.size", "set twice (first on line 6)"}}},
		},
		{
			name: "list where a mapping is expected",
			in:   kindDoc("ClusterType", "large", "  labels:\n    - size\nspec: {}\n"),
			want: []want{{file: file, line: 6, has: []string{"metadata.labels", "must be a mapping, not a list"}}},
		},
		{
			name: "mapping where a list is expected",
			in:   kindDoc("Workload", "w", "spec:\n  deploymentTargets:\n    name: a\n"),
			want: []want{{file: file, line: 7, has: []string{"spec.deploymentTargets", "must be a list, not a mapping"}}},
		},
		{
			name: "mapping where a string is expected",
			in:   kindDoc("Template", "t", "spec:\n  type: reconciler\n  manifests:\n    - kind: Namespace\n"),
			want: []want{{file: file, line: 8, has: []string{"spec.manifests[0]", "must be a string, not a mapping"}}},
		},
		{
			name: "unquoted true and 42 label values",
			in:   kindDoc("ClusterType", "edge", "  labels:\n    edge: true\n    cores: 42\nspec: {}\n"),
			want: []want{
				{file: file, line: 6, has: []string{"metadata.labels.edge", "must be a string, got bool true", `quote it: "true"`}},
				{file: file, line: 7, has: []string{"metadata.labels.cores", "must be a string, got int 42", `quote it: "42"`}},
			},
		},
		{
			name:   "quoted true and 42 label values",
			in:     kindDoc("ClusterType", "edge", "  labels:\n    edge: \"true\"\n    cores: '42'\nspec: {}\n"),
			loaded: []string{"ClusterType/edge"},
		},
		{
			name: "unquoted number as a name",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 42\n",
			want: []want{{file: file, line: 4, has: []string{"metadata.name", `quote it: "42"`}}},
		},
		{
			name: "unknown kind",
			in:   header + "kind: Cluster\nmetadata:\n  name: a\n",
			want: []want{{file: file, line: 2, has: []string{"unknown kind Cluster"}}},
		},
		{
			name: "unknown kind is reported on the kind line",
			in:   "# a comment\nmetadata:\n  name: a\nkind: Clustertype\n" + header,
			want: []want{{file: file, line: 4, has: []string{"unknown kind Clustertype", `did you mean "ClusterType"?`}}},
		},
		{
			name: "wrong apiVersion for a known kind",
			in:   "kind: ClusterType\napiVersion: v1\nmetadata:\n  name: a\nspec: {}\n",
			want: []want{{file: file, line: 2, has: []string{"kind ClusterType has apiVersion scheduler.kalypso.io/v1alpha1, not v1"}}},
		},
		{
			name: "ConfigMap with the scheduler apiVersion",
			in:   header + "kind: ConfigMap\nmetadata:\n  name: a\n",
			want: []want{{file: file, line: 1, has: []string{"kind ConfigMap has apiVersion v1", "set apiVersion: v1"}}},
		},
		{
			name: "document without kind",
			in:   "\n\n" + header + "metadata:\n  name: a\n",
			want: []want{{file: file, line: 3, has: []string{"no apiVersion or kind"}}},
		},
		{
			name: "document that is not a mapping",
			in:   "- a\n- b\n",
			want: []want{{file: file, line: 1, has: []string{"must be a mapping with apiVersion and kind, not a list"}}},
		},
		{
			name: "name missing",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n",
			want: []want{{file: file, line: 3, has: []string{"metadata.name", "name is required"}}},
		},
		{
			name: "invalid YAML syntax",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: [\n",
			want: []want{{file: file, line: 6, has: []string{"invalid YAML"}}},
		},
		{
			name: "tab indentation",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
			want: []want{{file: file, line: 4, has: []string{"invalid YAML", "tab"}}},
		},
		{
			name: "tab indentation after a nested key (the decoder says the line before)",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: b\n\tc: d\n",
			want: []want{{file: file, line: 7, has: []string{"invalid YAML", "tab", "indent with spaces"}}},
		},
		{
			name: "integer field with a string",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  generation: abc\n",
			want: []want{{file: file, line: 5, has: []string{"metadata.generation"}}},
		},
		{
			name:   "empty and comment-only documents are skipped",
			in:     "---\n# only a comment\n---\n\n---\n" + configMapDoc("a") + "---\n---\n# trailing\n",
			loaded: []string{"ConfigMap/a"},
		},
		{
			name:   "empty file",
			in:     "",
			loaded: nil,
		},
		{
			name:   "comment-only file",
			in:     "# nothing here\n",
			loaded: nil,
		},
		{
			name:   "explicit null document",
			in:     "~\n---\n" + configMapDoc("a"),
			loaded: []string{"ConfigMap/a"},
		},
		{
			name: "one bad document, the others load",
			in: joinDocs(configMapDoc("a"), // lines 1-6
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  naem: c\n", // 8-12
				configMapDoc("c")),
			want:   []want{{file: file, line: 12, has: []string{"ConfigMap/b", "metadata.naem", `did you mean "name"?`}}},
			loaded: []string{"ConfigMap/a", "ConfigMap/c"},
		},
		{
			name: "a syntax error in one document, the others load",
			in: joinDocs(configMapDoc("a"), // lines 1-6
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  a: [\n", // 8-13
				configMapDoc("c"), // 15-20
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: d\n", // 22-25
				configMapDoc("e")),
			want: []want{
				{file: file, line: 14, has: []string{"invalid YAML"}}, // where the unclosed list meets the next document
				{file: file, line: 25, has: []string{"invalid YAML"}},
			},
			loaded: []string{"ConfigMap/a", "ConfigMap/c", "ConfigMap/e"},
		},
		{
			name: "parser errors have their line", // the YAML decoder reports them one line early
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n- x\n",
			want: []want{{file: file, line: 5, has: []string{"invalid YAML: did not find expected key"}}},
		},
		{
			name:   "unclosed flow mapping, then a good document",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {x: y\n---\n" + configMapDoc("b"),
			want:   []want{{file: file, line: 5, has: []string{"invalid YAML", "expected ',' or '}'"}}},
			loaded: []string{"ConfigMap/b"},
		},
		{
			name:   "unclosed quote, then a good document",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"abc\n---\n" + configMapDoc("b"),
			want:   []want{{file: file, line: 6, has: []string{"invalid YAML"}}},
			loaded: []string{"ConfigMap/b"},
		},
		{
			name:   "content after a document end marker",
			in:     configMapDoc("a") + "...\n" + configMapDoc("b"),
			want:   []want{{file: file, line: 8, has: []string{"invalid YAML", "<document start>"}}},
			loaded: []string{"ConfigMap/a"},
		},
		{
			name:   "a control character in one document, the others load",
			in:     joinDocs(configMapDoc("a"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata: {x: \"\x01\"}\n", configMapDoc("c")),
			want:   []want{{file: file, line: 12, has: []string{"invalid YAML: control character U+0001 is not allowed"}}},
			loaded: []string{"ConfigMap/a", "ConfigMap/c"},
		},
		{
			name:   "invalid UTF-8 in one document, the others load",
			in:     joinDocs(configMapDoc("a"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: {x: \"\xff\"}\n", configMapDoc("c")),
			want:   []want{{file: file, line: 12, has: []string{"invalid YAML: invalid UTF-8 byte 0xff"}}},
			loaded: []string{"ConfigMap/a", "ConfigMap/c"},
		},
		{
			name:   "unknown anchor",
			in:     joinDocs(configMapDoc("a"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  x: *nope\n", configMapDoc("c")),
			want:   []want{{file: file, line: 13, has: []string{"invalid YAML: unknown anchor 'nope' referenced"}}},
			loaded: []string{"ConfigMap/a", "ConfigMap/c"},
		},
		{
			name: "lines end with CR alone",
			in:   "apiVersion: v1\rkind: ConfigMap\rmetadata:\r  name: a\r  naem: b\r",
			want: []want{{file: file, line: 5, has: []string{"metadata.naem"}}},
		},
		{
			name:   "lines end with CR LF",
			in:     "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\nx: [\r\n---\r\n" + configMapDoc("b"),
			want:   []want{{file: file, line: 7, has: []string{"invalid YAML"}}}, // where the unclosed list meets the next document
			loaded: []string{"ConfigMap/a", "ConfigMap/b"},
		},
		{
			name:   "documents on their marker lines",
			in:     "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n--- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
			loaded: []string{"ConfigMap/a", "ConfigMap/b"},
		},
		{
			name:   "UTF-8 byte order mark",
			in:     "\xef\xbb\xbf" + configMapDoc("a"),
			loaded: []string{"ConfigMap/a"},
		},
		{
			name: "aliases expanding too far",
			in: kindDoc("ClusterType", "a", "status:\n"+
				"  m1: &m1 [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]\n"+ // line 6
				"  m2: &m2 [*m1, *m1, *m1, *m1, *m1, *m1, *m1, *m1, *m1, *m1]\n"+
				"  m3: &m3 [*m2, *m2, *m2, *m2, *m2, *m2, *m2, *m2, *m2, *m2]\n"+
				"  m4: &m4 [*m3, *m3, *m3, *m3, *m3, *m3, *m3, *m3, *m3, *m3]\n"+
				"  m5: &m5 [*m4, *m4, *m4, *m4, *m4, *m4, *m4, *m4, *m4, *m4]\n"+ // line 10
				"spec:\n  <<: *m5\n"),
			want: []want{{file: file, line: 12, has: []string{"ClusterType/a", "spec: aliases expand to more than 65536 nodes"}}},
		},
		{
			name: "every error of a document is reported",
			in:   kindDoc("ClusterType", "x", "  labels: {a: true}\nspec:\n  reconciler: a\n  namespaceServce: b\n"),
			want: []want{
				{file: file, line: 5, has: []string{"metadata.labels.a", "quote it"}},
				{file: file, line: 8, has: []string{"spec.namespaceServce", `did you mean "namespaceService"?`}},
			},
		},
		{
			name: "server fields are accepted",
			in: kindDoc("ClusterType", "large",
				"  namespace: dev\n"+
					"  uid: 6f1c2c43-0c3e-4a3b-9bb5-1b0e3a7c9d11\n"+
					"  resourceVersion: \"123456\"\n"+
					"  generation: 3\n"+
					"  creationTimestamp: \"2024-01-01T00:00:00Z\"\n"+
					"  annotations: {kubectl.kubernetes.io/last-applied-configuration: \"{}\"}\n"+
					"  managedFields:\n  - manager: kubectl\n    operation: Update\n    fieldsV1:\n      f:spec: {}\n"+
					"  ownerReferences: [{kind: Environment, name: dev}]\n"+
					"  finalizers: [kalypso.io/finalizer]\n"+
					"spec: {reconciler: a, namespaceService: b, configType: c}\n"+
					"status:\n  conditions:\n  - type: Ready\n    status: \"True\"\n"),
			loaded: []string{"ClusterType/large"},
		},
		{
			name: "a key set twice in a field fleetform ignores",
			in: kindDoc("ClusterType", "a", "  managedFields:\n  - manager: a\n    manager: b\n"+ // lines 5-7
				"spec: {reconciler: a, namespaceService: b, configType: c}\n"),
			want: []want{{file: file, line: 7, has: []string{"ClusterType/a", `mapping key "manager" already defined at line 6`}}},
		},
		{
			name:   "anchors, aliases and merge keys",
			in:     kindDoc("ClusterType", "large", "  labels: &l {size: large}\n  annotations: *l\nspec:\n  <<: {reconciler: a, namespaceService: b}\n  configType: c\n"),
			loaded: []string{"ClusterType/large"},
		},
		{
			name: "a merge key cannot smuggle an unknown field",
			in:   kindDoc("ClusterType", "large", "spec:\n  <<: {reconcilr: a}\n  configType: c\n"),
			want: []want{{file: file, line: 6, has: []string{"spec.reconcilr", "unknown field"}}},
		},
		{
			name: "nested file path",
			file: "a/b/c.yml",
			in:   kindDoc("ClusterType", "large", "spec:\n  reconcilr: arc-flux\n"),
			want: []want{{file: "a/b/c.yml", line: 6, has: []string{"spec.reconcilr"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := tt.file
			if f == "" {
				f = file
			}
			snap := loadFolder(t, map[string]string{f: tt.in})
			checkDiags(t, snap.Diagnostics, tt.want...)
			checkLoaded(t, snap, tt.loaded...)
		})
	}
}

// TestStrictDecodingErrorCap: one document reports at most 50 errors, then says there are
// more.
func TestStrictDecodingErrorCap(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	body.WriteString("spec:\n")
	for i := range 60 {
		fmt.Fprintf(&body, "  unknown%d: x\n", i) // lines 6 to 65
	}
	snap := loadFolder(t, map[string]string{"a.yaml": kindDoc("ClusterType", "a", body.String())})
	if got := len(snap.Diagnostics); got != 51 {
		t.Fatalf("%d diagnostics, want 51", got)
	}
	last := snap.Diagnostics[50]
	if last.Line != 56 || !strings.Contains(last.Message, "too many errors in this document; only the first 50 are shown") {
		t.Errorf("last diagnostic = line %d %v", last.Line, last)
	}
	checkLoaded(t, snap)
}

// TestStrictDecodingBigConfigMap: a ConfigMap of 40,000 keys loads with every key, and a key
// set twice among them is reported on its line with the line of the first.
func TestStrictDecodingBigConfigMap(t *testing.T) {
	t.Parallel()
	const keys = 40_000
	var doc strings.Builder
	doc.WriteString(configMapDoc("big")) // data: on line 5, KEY on line 6
	for i := range keys {
		fmt.Fprintf(&doc, "  k%05d: v%05d\n", i, i) // lines 7 to 40,006
	}
	snap := loadFolder(t, map[string]string{"big.yaml": doc.String()})
	checkDiags(t, snap.Diagnostics)
	checkLoaded(t, snap, "ConfigMap/big")
	if got := len(snap.ConfigMaps[0].Data); got != keys+1 {
		t.Errorf("%d keys loaded, want %d", got, keys+1)
	}

	doc.WriteString("  k12345: again\n") // line 40,007
	snap = loadFolder(t, map[string]string{"big.yaml": doc.String()})
	checkDiags(t, snap.Diagnostics, want{file: "big.yaml", line: 40_007, has: []string{"ConfigMap/big", "data.k12345", "key is set twice (first on line 12352)"}})
	checkLoaded(t, snap)
}
