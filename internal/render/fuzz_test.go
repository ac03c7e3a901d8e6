package render_test

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
)

// fuzzLimits are small, so that hostile inputs stop quickly.
var fuzzLimits = render.Limits{
	Timeout:          50 * time.Millisecond,
	MaxAllocBytes:    8 << 20,
	MaxValueBytes:    256 << 10,
	MaxListLen:       10_000,
	MaxManifestBytes: 256 << 10,
}

const (
	// fuzzTimeMargin is how much CPU time past its Timeout an execution may use: the longest
	// a single bounded function call takes, and the collector's work. It is checked in CPU
	// time, which other processes loading the machine do not stretch.
	fuzzTimeMargin = 2 * time.Second
	// fuzzAllocBudget bounds the bytes one execution allocates: what the template functions
	// are charged (MaxAllocBytes), the few times more some of them use while working, and
	// what text/template itself allocates per loop iteration until the Timeout.
	fuzzAllocBudget = 512 << 20
)

// fuzzPrefix declares what the fragments work on, and a template that recurses.
const fuzzPrefix = `{{ define "t" }}{{ if lt (len .) 40 }}{{ template "t" (append . 1) }}{{ template "t" (append . 1) }}{{ end }}{{ end }}` +
	`{{ $s := "xy" }}{{ $l := list 1 "a" }}{{ $d := dict "k" "v" }}{{ $n := 3 }}`

// fuzzFragments are pieces of hostile templates; %d takes a number from the fuzzer's bytes.
var fuzzFragments = []string{
	"{{ range until %d }}", "{{ range %d }}", "{{ range $l }}", "{{ range $k, $v := $d }}",
	"{{ if .ConfigData.missing }}", "{{ with .ConfigData.a }}", "{{ if $s }}",
	"{{ $s = print $s $s }}", "{{ $s = cat $s $s }}", "{{ $s = printf \"%%s%%s\" $s $s }}",
	"{{ $s = repeat %d $s }}", "{{ $s = indent %d $s }}", "{{ $s = nindent %d $s }}",
	"{{ $s = replace \"x\" $s $s }}", "{{ $s = regexReplaceAll \"(x)\" $s \"$1$1\" }}",
	"{{ $s = wrapWith %d $s $s }}", "{{ $s = toJson $d }}", "{{ $s = toYaml $d }}",
	"{{ $s = join $s $l }}", "{{ $s = printf \"%%%dd\" 1 }}", "{{ $s = b64enc $s }}",
	"{{ $l = append $l $s }}", "{{ $l = concat $l $l }}", "{{ $l = untilStep %d %d %d }}",
	"{{ $l = until %d }}", "{{ $l = splitList \"\" $s }}", "{{ $l = uniq $l }}",
	"{{ $l = chunk %d $l }}", "{{ $l = sortAlpha $l }}", "{{ $l = list $l $l $d }}",
	"{{ $_ := set $d (toString %d) $l }}", "{{ $_ := set $d \"self\" $d }}",
	"{{ $d = merge $d (dict \"m\" $d) }}", "{{ $d = deepCopy $d }}", "{{ $d = fromJson (toJson $d) }}",
	"{{ $s }}", "{{ $l }}", "{{ $d }}", "{{ . }}", "{{ .ConfigData.missing }}", "{{ .ConfigData.nested.null }}",
	"{{ template \"t\" list }}", "{{ $n = len $l }}", "text\n",
}

// fuzzNumbers are the numbers a fragment may take.
var fuzzNumbers = []int{0, 1, -1, 2, 3, 7, 64, 1000, 100_000, 1 << 20, 1 << 31, -100_000, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1000}

// fuzzProgram turns the fuzzer's bytes into template text: each byte picks a fragment,
// the next ones its numbers.
func fuzzProgram(program []byte) string {
	next := func() int {
		if len(program) == 0 {
			return 0
		}
		n := fuzzNumbers[int(program[0])%len(fuzzNumbers)]
		program = program[1:]
		return n
	}
	return blocks(&program, func(c int) string {
		f := fuzzFragments[c%len(fuzzFragments)]
		var args []any
		for range strings.Count(f, "%d") {
			args = append(args, next())
		}
		return fmt.Sprintf(f, args...)
	})
}

// blocks turns bytes into template text: each byte picks a fragment (fragment may take more
// bytes from *program), or, inside an open block, an else or an end; blocks are closed at
// the end, and only open blocks get an else.
func blocks(program *[]byte, fragment func(c int) string) string {
	var b strings.Builder
	open := 0
	for len(*program) > 0 {
		c := int((*program)[0])
		*program = (*program)[1:]
		switch {
		case c >= 250 && open > 0:
			b.WriteString("{{ end }}")
			open--
		case c >= 245 && open > 0:
			b.WriteString("{{ else }}")
		default:
			f := fragment(c)
			b.WriteString(f)
			if strings.HasPrefix(f, "{{ range") || strings.HasPrefix(f, "{{ if") || strings.HasPrefix(f, "{{ with") {
				open++
			}
		}
	}
	b.WriteString(strings.Repeat("{{ end }}", open))
	return b.String()
}

var limitFuzzProcess sync.Once

// FuzzTemplate renders hostile templates (the fuzzer's text, then fragments its bytes
// choose) against fixed data with small limits: a render must never crash, never use more
// CPU than its Timeout and fuzzTimeMargin, never allocate more than fuzzAllocBudget, and
// never write more than its limits allow. The process's memory is capped as well, so that
// a runaway allocation stops this process, not the machine.
func FuzzTemplate(f *testing.F) {
	for _, tc := range hostileCases {
		f.Add(tc.text, []byte(nil))
	}
	f.Add("", []byte{7, 0, 21, 250})              // a string doubled in a loop
	f.Add("", []byte{0, 8, 1, 8, 250, 250})       // nested loops
	f.Add("", []byte{31, 33, 16, 36})             // a dict that contains itself, encoded
	f.Add("", []byte{23, 12, 13, 14, 24, 11, 19}) // untilStep near the ends of int
	f.Fuzz(func(t *testing.T, text string, program []byte) {
		limitFuzzProcess.Do(func() {
			if err := limitProcess(2<<30, 0); err != nil {
				t.Fatal(err)
			}
		})
		snap := &controlplane.Snapshot{Templates: []*controlplane.Template{
			{Template: benchTemplate("r", v1alpha1.TemplateReconciler, fuzzPrefix+text+fuzzProgram(program))},
			{Template: benchTemplate("n", v1alpha1.TemplateNamespace, "ns")},
			{Template: benchTemplate("c", v1alpha1.TemplateConfig, "")},
		}}
		e := render.NewEngine(snap)
		if len(e.Diagnostics) > 0 {
			return // does not parse
		}
		e.Limits = fuzzLimits
		spec := v1alpha1.ClusterTypeSpec{Reconciler: "r", NamespaceService: "n", ConfigType: "c"}
		before := allocatedBytes()
		start := cpuTime()
		files, err := renderOne(t, e, spec, missingManifests, missingConfig)
		used := cpuTime() - start
		allocated := allocatedBytes() - before
		if used > fuzzLimits.Timeout+fuzzTimeMargin {
			t.Errorf("the render used %v of CPU, past its %v timeout (err: %v)", used, fuzzLimits.Timeout, err)
		}
		if allocated > fuzzAllocBudget {
			t.Errorf("the render allocated %d MiB, over the %d MiB budget (err: %v)", allocated>>20, fuzzAllocBudget>>20, err)
		}
		if err == nil && len(files.Reconciler) > fuzzLimits.MaxManifestBytes+1 {
			t.Errorf("the reconciler file has %d bytes, over the %d limit of its one manifest", len(files.Reconciler), fuzzLimits.MaxManifestBytes)
		}
	})
}

// allocatedBytes is the bytes allocated on the heap since the program started.
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
