package platform

import (
	"bytes"
	"fmt"
	"testing"
)

// configMapYAML returns one platform-config ConfigMap document with n data keys, one per line
// ("  k00000: v00000", 17 bytes a key): 40,000 keys make 680 KB.
func configMapYAML(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  labels:\n    platform-config: \"true\"\ndata:\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%05d: v%05d\n", i, i)
	}
	return b.Bytes()
}

// BenchmarkDecodeConfigMap decodes one ConfigMap document of 10,000, 40,000 and 160,000 keys,
// and one of 8 MiB (493,447 keys). Decoding is linear when ns/key stays the same.
func BenchmarkDecodeConfigMap(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 160_000, (8<<20 - 100) / 17} {
		data := configMapYAML(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				docs, diags := decodeFile(data, Source{File: "big.yaml"})
				if len(diags) > 0 || len(docs) != 1 {
					b.Fatalf("%d documents, diagnostics %v", len(docs), diags)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
