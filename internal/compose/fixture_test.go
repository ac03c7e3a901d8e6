package compose_test

// kalypsoDev is the dev branch of Kalypso's sample control plane (reference 7.2), byte for
// byte (trailing spaces and missing final newlines included), in the folder layout: the
// branch content under environments/dev/ and the registered observability workload inline,
// with the workspace its registration gives it. base-repo.yaml and gitops-repo.yaml are left
// out: composition does not read them.
var kalypsoDev = map[string]string{
	"environments/dev/cluster-types/east-us/east-us-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: east-us-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     region: east-us\n" +
		"data:\n" +
		"  REGION: East US\n" +
		"  \n" +
		"\n" +
		"  \n" +
		"  \n",
	"environments/dev/cluster-types/east-us/restricted/centers/center-cluster-type.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: ClusterType\n" +
		"metadata:\n" +
		"  name: command-center\n" +
		"  labels: \n" +
		"    region: east-us\n" +
		"    restricted: \"true\"\n" +
		"spec:\n" +
		"  reconciler: arc-flux\n" +
		"  namespaceService: default\n" +
		"  configType: configmap\n",
	"environments/dev/cluster-types/east-us/restricted/centers/center-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: center-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     cluster-type: command-center\n" +
		"data:\n" +
		"  CLUSTER_NAME: Command Center ",
	"environments/dev/cluster-types/east-us/restricted/drones/drone-cluster-type.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: ClusterType\n" +
		"metadata:\n" +
		"  name: drone\n" +
		"  labels: \n" +
		"    region: east-us\n" +
		"    restricted: \"true\"\n" +
		"    edge: \"true\"\n" +
		"spec:\n" +
		"  reconciler: arc-flux\n" +
		"  namespaceService: default\n" +
		"  configType: configmap\n",
	"environments/dev/cluster-types/east-us/restricted/drones/drone-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: drone-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     cluster-type: drone\n" +
		"data:\n" +
		"  CLUSTER_NAME: Drone",
	"environments/dev/cluster-types/east-us/restricted/restricted-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: restricted-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     restricted: \"true\"\n" +
		"data:\n" +
		"  DATABASE_URL: mysql://restricted-host:3306/mysqlrty123\n",
	"environments/dev/cluster-types/west-us/large/large-cluster-type.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: ClusterType\n" +
		"metadata:\n" +
		"  name: large\n" +
		"  labels: \n" +
		"    region: west-us\n" +
		"    size: large\n" +
		"spec:\n" +
		"  reconciler: arc-flux\n" +
		"  namespaceService: default\n" +
		"  configType: configmap\n",
	"environments/dev/cluster-types/west-us/large/large-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: large-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     cluster-type: large\n" +
		"data:\n" +
		"  CLUSTER_NAME: Large  ",
	"environments/dev/cluster-types/west-us/small/small-cluster-type.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: ClusterType\n" +
		"metadata:\n" +
		"  name: small\n" +
		"  labels: \n" +
		"    region: west-us\n" +
		"    size: small\n" +
		"spec:\n" +
		"  reconciler: argocd\n" +
		"  namespaceService: default\n" +
		"  configType: configmap",
	"environments/dev/cluster-types/west-us/small/small-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: small-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     cluster-type: small\n" +
		"data:\n" +
		"  CLUSTER_NAME: Small",
	"environments/dev/cluster-types/west-us/west-us-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: west-us-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"     region: west-us\n" +
		"data:\n" +
		"  REGION: West US\n" +
		"  DATABASE_URL: mysql://west:8806/mysql2\n",
	"environments/dev/configs/dev-config.yaml": "apiVersion: v1\n" +
		"kind: ConfigMap\n" +
		"metadata:\n" +
		"  name: dev-config\n" +
		"  labels:\n" +
		"     platform-config: \"true\"\n" +
		"data:\n" +
		"  ENVIRONMENT: Dev\n" +
		"  SOME_COMMON_ENVIRONMENT_VARIABLE: \"false\"",
	"environments/dev/scheduling/platform-services/observability-policy.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: SchedulingPolicy\n" +
		"metadata:\n" +
		"  name: observability-policy\n" +
		"spec:\n" +
		"  deploymentTargetSelector:\n" +
		"    workspace: platform-team\n" +
		"    labelSelector:\n" +
		"      matchLabels:\n" +
		"        stack: observability\n" +
		"  clusterTypeSelector:\n" +
		"    labelSelector: \n" +
		"      matchLabels:\n" +
		"        size: large",
	"workloads/observability.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\n" +
		"kind: Workload\n" +
		"metadata:\n" +
		"  name: observability\n" +
		"  labels:\n" +
		"    type: service\n" +
		"    stack: observability\n" +
		"    workspace: platform-team\n" +
		"spec:\n" +
		"  deploymentTargets:\n" +
		"    - name: prometheus\n" +
		"      environment: dev\n" +
		"      manifests:\n" +
		"        repo: https://github.com/microsoft/kalypso-svc-gitops\n" +
		"        branch: dev\n" +
		"        path: ./prometheus\n",
}
