package render_test

import (
	"fmt"
	"strings"
)

// lineDiff returns a unified-style diff of two texts (want as "-", got as "+"), with three
// lines of context around each change, or "" when they are equal.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := splitLines(want), splitLines(got)
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	const context = 3
	show := make([]bool, len(lines))
	for k, l := range lines {
		if l.op != ' ' {
			for c := max(0, k-context); c <= min(len(lines)-1, k+context); c++ {
				show[c] = true
			}
		}
	}
	var out strings.Builder
	out.WriteString("--- want\n+++ got\n")
	for k, l := range lines {
		if !show[k] {
			if k > 0 && show[k-1] {
				out.WriteString("...\n")
			}
			continue
		}
		text := l.text
		if !strings.HasSuffix(text, "\n") {
			text += "\n\\ no newline at end\n"
		}
		fmt.Fprintf(&out, "%c%s", l.op, text)
	}
	return out.String()
}

// splitLines splits s after every newline; a final line without one is kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
