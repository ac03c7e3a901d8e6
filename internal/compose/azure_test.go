package compose_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/compose"
)

// azureCMs are platform ConfigMaps and an Azure App Configuration ConfigMap (reference
// 3.5): its keys are l1.v1.l2.v2....KEY, odd leftovers dropped.
const azureCMs = `apiVersion: v1
kind: ConfigMap
metadata:
  name: a-large
  labels:
    platform-config: "true"
    cluster-type: large
data:
  URL: from-platform-cluster-type
  PLAIN: from-platform-cluster-type
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: zz-last
  labels:
    platform-config: "true"
data:
  URL: from-platform-env
  TIER: from-platform-env
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: azure-app-config-dev
data:
  URL: azure-plain
  PLAIN: azure-plain
  cluster-type.large.DB.URL: azure-large
  cluster-type.small.URL: azure-small
  region.east-us.URL: azure-east
  a.b: odd
  x.y.z.w: unmatched
  size.large.K: by-size
  region.west-us.K: by-region
  LIST: "[{name: a, v: 1}]"
  cluster-type.large.LIST: "[{name: a, w: 2}, {name: b}]"
`

const azureFile = "environments/dev/configs/azure.yaml"

func azureFiles(mode string) map[string]string {
	files := conflictFiles(mode)
	delete(files, conflictCMsFile)
	files[azureFile] = azureCMs
	return files
}

func TestComposeAzureAppConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		want map[string]any
		// winners names the source of some keys.
		winners map[string]string
	}{
		{
			// Kalypso: Azure keys after all platform ConfigMaps, longer (more qualified)
			// keys after shorter ones.
			mode: "name",
			want: map[string]any{
				"URL": "azure-large", "PLAIN": "azure-plain", "TIER": "from-platform-env", "b": "odd", "K": "by-region",
				"LIST": []any{map[string]any{"name": "a", "v": 1, "w": 2}, map[string]any{"name": "b"}},
			},
			winners: map[string]string{
				"URL": "azure-app-config-dev:cluster-type.large.DB.URL", "PLAIN": "azure-app-config-dev:PLAIN",
				"K": "azure-app-config-dev:region.west-us.K", "b": "azure-app-config-dev:a.b",
			},
		},
		{
			// Layered: an Azure key sits at the level its labels give it, after the platform
			// ConfigMaps of that level.
			mode: "layered",
			want: map[string]any{
				"URL": "azure-large", "PLAIN": "from-platform-cluster-type", "TIER": "from-platform-env", "b": "odd", "K": "by-region",
				"LIST": []any{map[string]any{"name": "a", "v": 1, "w": 2}, map[string]any{"name": "b"}},
			},
			winners: map[string]string{
				"URL": "azure-app-config-dev:cluster-type.large.DB.URL", "PLAIN": "a-large",
				"K": "azure-app-config-dev:region.west-us.K", "b": "azure-app-config-dev:a.b",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			snap := loadDev(t, azureFiles(tt.mode))
			ct, dt := pair(t, snap, "large", "observability-prometheus")
			cfg := compose.New(snap).Compose(ct, dt)
			if diff := cmp.Diff(tt.want, cfg.Data); diff != "" {
				t.Errorf("Data mismatch (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			for k := range tt.winners {
				got[k] = cfg.Values[k].Source.Name
			}
			if diff := cmp.Diff(tt.winners, got); diff != "" {
				t.Errorf("winners mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeAzureProvenance checks the source of an Azure key: the ConfigMap and full key,
// the key's own line and the level its labels give it.
func TestComposeAzureProvenance(t *testing.T) {
	t.Parallel()
	snap := loadDev(t, azureFiles("name"))
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	got := compose.New(snap).Compose(ct, dt).Values["URL"]
	src := func(name, prefix, level string) compose.Source {
		return compose.Source{Kind: "ConfigMap", Name: name, File: azureFile, Line: lineOf(t, azureCMs, prefix), Level: level}
	}
	want := &compose.Value{
		Value:  "azure-large",
		Source: src("azure-app-config-dev:cluster-type.large.DB.URL", "cluster-type.large.DB.URL:", "cluster-type"),
		Shadowed: []compose.Shadowed{
			{Value: "azure-plain", Source: src("azure-app-config-dev:URL", "URL: azure-plain", "environment")},
			{Value: "from-platform-env", Source: src("zz-last", "URL: from-platform-env", "environment")},
			{Value: "from-platform-cluster-type", Source: src("a-large", "URL: from-platform-cluster-type", "cluster-type")},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URL mismatch (-want +got):\n%s", diff)
	}
}

// TestComposeAzurePlatformConfigMap: an azure-app-config ConfigMap that is also a platform
// ConfigMap is read as both, as Kalypso reads it: its keys as they are, and as Azure keys.
func TestComposeAzurePlatformConfigMap(t *testing.T) {
	t.Parallel()
	files := conflictFiles("name")
	delete(files, conflictCMsFile)
	files[azureFile] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: azure-app-config
  labels:
    platform-config: "true"
data:
  cluster-type.large.DB_URL: x
`
	snap := loadDev(t, files)
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	cfg := compose.New(snap).Compose(ct, dt)
	if cfg.Data["DB_URL"] != "x" || cfg.Data["cluster-type.large.DB_URL"] != "x" {
		t.Errorf("Data = %v, want DB_URL and cluster-type.large.DB_URL", cfg.Data)
	}
}
