package controlplane

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// configMapYAML returns one platform-config ConfigMap document with n data keys, one per line
// ("  k00000: v00000", 17 bytes a key below 100,000, 19 above): 40,000 keys make 680 KB.
func configMapYAML(n int) []byte {
	data, _ := configMapYAMLUpTo(n, math.MaxInt)
	return data
}

// configMapYAMLUpTo returns the document of configMapYAML with at most n keys and at most
// size bytes, and its number of keys.
func configMapYAMLUpTo(n, size int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  labels:\n    platform-config: \"true\"\ndata:\n")
	keys := 0
	for ; keys < n; keys++ {
		line := fmt.Sprintf("  k%05d: v%05d\n", keys, keys)
		if b.Len()+len(line) > size {
			break
		}
		b.WriteString(line)
	}
	return b.Bytes(), keys
}

// BenchmarkDecodeConfigMap decodes one ConfigMap document of 10,000, 40,000 and 160,000 keys,
// and one of 8 MiB (452,026 keys). Decoding is linear when ns/key stays the same.
func BenchmarkDecodeConfigMap(b *testing.B) {
	type input struct {
		data []byte
		keys int
	}
	var inputs []input
	for _, n := range []int{10_000, 40_000, 160_000} {
		inputs = append(inputs, input{configMapYAML(n), n})
	}
	data, n := configMapYAMLUpTo(math.MaxInt, 8<<20)
	inputs = append(inputs, input{data, n})
	for _, in := range inputs {
		b.Run(fmt.Sprintf("keys=%d", in.keys), func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for b.Loop() {
				docs, diags := decodeFile(in.data, Source{File: "big.yaml"})
				if len(diags) > 0 || len(docs) != 1 {
					b.Fatalf("%d documents, diagnostics %v", len(docs), diags)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(in.keys), "ns/key")
		})
	}
}
