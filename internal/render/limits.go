package render

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Limits bound what rendering one assignment may cost, so that a hostile or broken
// template fails its own assignments instead of exhausting the memory or the time of the
// whole run. A zero field takes its default.
type Limits struct {
	// Timeout bounds the time to render one assignment (its three templates). It is
	// checked cooperatively: at every iteration of a range loop, every template call and
	// every call of a function that allocates. Default DefaultTimeout.
	Timeout time.Duration
	// MaxAllocBytes bounds the memory that template functions allocate while rendering one
	// assignment: every string, list and dict they return is counted when it is made.
	// Default DefaultMaxAllocBytes.
	MaxAllocBytes int64
	// MaxValueBytes bounds one string a template function returns, and the formatted size of
	// a list or dict a function or an action formats. Default DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxListLen bounds the elements of a list, and the entries of a dict, that a template
	// function makes. Default DefaultMaxListLen.
	MaxListLen int
	// MaxManifestBytes bounds the output of one manifest. Default DefaultMaxManifestBytes.
	MaxManifestBytes int
}

// The default Limits, and the bounds that are not configurable.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxAllocBytes    = 64 << 20
	DefaultMaxValueBytes    = 4 << 20
	DefaultMaxListLen       = 100_000
	DefaultMaxManifestBytes = 4 << 20
	// MaxTemplateDepth bounds nested template calls ({{ template }} and {{ block }}).
	MaxTemplateDepth = 1000
	// MaxValueDepth bounds the nesting of a value that a function formats, encodes or
	// copies; a deeper value, or one that contains itself, fails.
	MaxValueDepth = 1000
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxAllocBytes <= 0 {
		l.MaxAllocBytes = DefaultMaxAllocBytes
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultMaxValueBytes
	}
	if l.MaxListLen <= 0 {
		l.MaxListLen = DefaultMaxListLen
	}
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = DefaultMaxManifestBytes
	}
	return l
}

// LimitError is a template that went past one of its Limits.
type LimitError struct {
	// Limit names the bound: Timeout, MaxAllocBytes, MaxValueBytes, MaxListLen,
	// MaxManifestBytes, MaxTemplateDepth or MaxValueDepth.
	Limit string
	// Where locates the template action ("name[manifest]:line:column"), when the error did
	// not come through text/template, which locates it itself.
	Where string
	msg   string
}

func (e *LimitError) Error() string {
	if e.Where != "" {
		return "template: " + e.Where + ": " + e.msg
	}
	return e.msg
}

func timeoutError(l Limits) *LimitError {
	return &LimitError{Limit: "Timeout", msg: fmt.Sprintf("rendering the assignment took longer than its %v limit (Timeout)", l.Timeout)}
}

func allocError(l Limits) *LimitError {
	return &LimitError{Limit: "MaxAllocBytes", msg: fmt.Sprintf("template functions allocated more than the %s limit per assignment (MaxAllocBytes)", sizeString(int(l.MaxAllocBytes)))}
}

// valueError is a result of n bytes (0: unknown, but too many) over MaxValueBytes.
func valueError(l Limits, n int) *LimitError {
	what := "result would be"
	if n > 0 {
		what = fmt.Sprintf("result of %d bytes is", n)
	}
	return &LimitError{Limit: "MaxValueBytes", msg: fmt.Sprintf("%s over the %s limit on one value (MaxValueBytes)", what, sizeString(l.MaxValueBytes))}
}

func listError(l Limits, n int) *LimitError {
	return &LimitError{Limit: "MaxListLen", msg: fmt.Sprintf("result would have %d elements, over the %d limit on a list or dict (MaxListLen)", n, l.MaxListLen)}
}

func depthError() *LimitError {
	return &LimitError{Limit: "MaxValueDepth", msg: fmt.Sprintf("value nested deeper than %d levels, or containing itself (MaxValueDepth)", MaxValueDepth)}
}

func manifestError(l Limits) *LimitError {
	return &LimitError{Limit: "MaxManifestBytes", msg: fmt.Sprintf("output larger than the %s limit per manifest (MaxManifestBytes)", sizeString(l.MaxManifestBytes))}
}

// sizeString writes a byte count as users write limits: 4 MiB, 512 KiB, 1000 bytes.
func sizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// markKind is what a marker (an empty text node the engine adds to a template) stands for.
type markKind uint8

const (
	markIter  markKind = iota // the start of a range loop's body
	markEnter                 // the start of a template
	markExit                  // the end of a template
	markPrint                 // before an action that prints a field chain of the data
)

// mark is a marker: text/template writes its empty text to the output writer, the
// execState, every time it runs through it, which is the engine's hook into loops and
// template calls.
type mark struct {
	kind markKind
	// where locates the range action or the template.
	where string
	// site is the printing action of a markPrint.
	site *printSite
}

// timeCheckEvery is how many ticks (loop iterations, template calls, function calls) pass
// between two reads of the clock.
const timeCheckEvery = 64

// execState is the state of one assignment's rendering: its limits, deadline and
// allocation budget, and the output writer of the manifest being executed. The functions
// of the template set it runs are bound to it.
type execState struct {
	lim       Limits
	deadline  time.Time
	allocLeft int64
	ticks     uint
	depth     int
	marks     map[*byte]*mark

	out  *bytes.Buffer
	left int
	// data is the data of the manifest being executed; printing is the action whose output
	// comes next, after a markPrint.
	data     *Data
	printing *printSite
}

// start begins an assignment.
func (st *execState) start(l Limits) {
	st.lim = l
	st.deadline = time.Now().Add(l.Timeout)
	st.allocLeft = l.MaxAllocBytes
	st.ticks = 0
}

// startManifest directs the output of a manifest, executed on data, into out.
func (st *execState) startManifest(out *bytes.Buffer, data *Data) {
	st.out, st.left, st.depth, st.data, st.printing = out, st.lim.MaxManifestBytes, 0, data, nil
}

// The bounded template functions report a limit by panicking with its *LimitError:
// text/template recovers a function's panic and reports it as the function's error, as it
// does for sprig's functions, and the functions keep sprig's signatures (an error result
// would cost an allocation per call).

// fail panics with err when it is not nil.
func fail(err error) {
	if err != nil {
		panic(err)
	}
}

// tickErr counts a unit of work and checks the deadline every timeCheckEvery units.
func (st *execState) tickErr() error {
	st.ticks++
	if st.ticks%timeCheckEvery != 0 {
		return nil
	}
	return st.checkTime()
}

func (st *execState) tick() { fail(st.tickErr()) }

func (st *execState) checkTime() error {
	if time.Now().After(st.deadline) {
		return timeoutError(st.lim)
	}
	return nil
}

// charge counts n bytes allocated by a template function.
func (st *execState) charge(n int) {
	st.allocLeft -= int64(n)
	if st.allocLeft < 0 {
		panic(allocError(st.lim))
	}
	st.tick()
}

// str bounds and charges a string a function made.
func (st *execState) str(s string) string {
	if len(s) > st.lim.MaxValueBytes {
		panic(valueError(st.lim, len(s)))
	}
	st.charge(len(s))
	return s
}

// list bounds and charges a list or dict of n elements, elem bytes each, that a function
// is about to make.
func (st *execState) list(n, elem int) {
	if n > st.lim.MaxListLen {
		panic(listError(st.lim, n))
	}
	st.charge(n * elem)
}

// Write is the output of the manifest being executed; empty writes of the engine's
// markers count loop iterations and template calls.
func (st *execState) Write(p []byte) (int, error) {
	if len(p) == 0 {
		if cap(p) > 0 {
			if m := st.marks[&p[:1][0]]; m != nil {
				return 0, st.mark(m)
			}
		}
		return 0, nil
	}
	if err := st.admit(len(p), string(p) == noValue); err != nil {
		return 0, err
	}
	return st.out.Write(p)
}

// writeString is Write of a value the fast executor prints (never a marker).
func (st *execState) writeString(s string) error {
	if len(s) == 0 {
		return nil // as Write of an empty slice: the printing check waits for the next write
	}
	if err := st.admit(len(s), s == noValue); err != nil {
		return err
	}
	_, err := st.out.WriteString(s)
	return err
}

// noValue is what text/template prints for an invalid value.
const noValue = "<no value>"

// admit checks a write of n bytes (not none), which are noValue or not, and counts them
// against the manifest's limit.
func (st *execState) admit(n int, isNoValue bool) error {
	if site := st.printing; site != nil {
		st.printing = nil
		if isNoValue {
			if reason := diagnose(st.data, site.chain); reason != "" {
				return &noValueError{site: site, reason: reason}
			}
		}
	}
	if n > st.left {
		return manifestError(st.lim)
	}
	st.left -= n
	return nil
}

func (st *execState) mark(m *mark) error {
	st.printing = nil
	switch m.kind {
	case markPrint:
		st.printing = m.site
		return nil
	case markExit:
		st.depth--
		return nil
	case markEnter:
		st.depth++
		if st.depth > MaxTemplateDepth {
			return &LimitError{Limit: "MaxTemplateDepth", Where: m.where,
				msg: fmt.Sprintf("template calls nested deeper than %d (MaxTemplateDepth)", MaxTemplateDepth)}
		}
	}
	if err := st.tickErr(); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			le.Where = m.where
		}
		return err
	}
	return nil
}
