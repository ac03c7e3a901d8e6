package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sync/errgroup"
)

// maxFileSize bounds every file read from a control plane or workload repository.
const maxFileSize = 8 << 20

// Tree is a read-only set of files: a directory, or a commit of a git repository.
type Tree interface {
	// Files lists every regular file as a slash-separated path relative to the root, sorted.
	Files() ([]string, error)
	// ReadFile returns a file's content.
	ReadFile(name string) ([]byte, error)
	// Revision is the commit the tree was read at, or "" for a directory.
	Revision() string
}

// dirTree is a directory on disk.
type dirTree struct{ root string }

// DirTree returns the directory at root as a Tree.
func DirTree(root string) Tree { return dirTree{root: root} }

func (d dirTree) Revision() string { return "" }

func (d dirTree) Files() ([]string, error) {
	files, _, err := d.FilesAndLinks()
	return files, err
}

// FilesAndLinks lists the regular files and the symbolic links (not followed) below the
// root, each sorted.
func (d dirTree) FilesAndLinks() (files, links []string, err error) {
	err = filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			files = append(files, filepath.ToSlash(rel))
		} else {
			links = append(links, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	sort.Strings(links)
	return files, links, err
}

func (d dirTree) ReadFile(name string) ([]byte, error) {
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	return readLimited(f, name)
}

func readLimited(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxFileSize>>20)
	}
	return data, nil
}

// gitTree is the tree of one commit.
type gitTree struct {
	commit string
	tree   *object.Tree
}

func (g gitTree) Revision() string { return g.commit }

func (g gitTree) Files() ([]string, error) {
	files, _, err := g.FilesAndLinks()
	return files, err
}

// FilesAndLinks lists the regular files, as in a directory (and in Flux's artifacts), and
// the symbolic links of the tree, each sorted.
func (g gitTree) FilesAndLinks() (files, links []string, err error) {
	err = g.tree.Files().ForEach(func(f *object.File) error {
		switch f.Mode {
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			files = append(files, f.Name)
		case filemode.Symlink:
			links = append(links, f.Name)
		}
		return nil
	})
	sort.Strings(files)
	sort.Strings(links)
	return files, links, err
}

func (g gitTree) ReadFile(name string) ([]byte, error) {
	f, err := g.tree.File(name)
	if err != nil {
		return nil, err
	}
	if f.Size > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxFileSize>>20)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }() // read-only: nothing to flush
	return readLimited(r, name)
}

// Flux's default exclusions (source-controller sourceignore), applied before .sourceignore.
var defaultIgnore = []string{
	".git/", ".gitignore", ".gitmodules", ".gitattributes",
	"*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
	".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml",
	"cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
	"**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml",
}

// ignorePatterns are Flux's patterns for a tree: the default exclusions, then every
// .sourceignore file, each scoped to its own folder.
func ignorePatterns(t Tree, files []string) ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	for _, p := range defaultIgnore {
		ps = append(ps, gitignore.ParsePattern(p, nil))
	}
	// Shallower files first, so that a deeper .sourceignore overrides them (gitignore's last
	// match wins), whatever the folder names: "a/-b/" sorts before "a/.sourceignore".
	var ignoreFiles []string
	for _, f := range files {
		if path.Base(f) == ".sourceignore" {
			ignoreFiles = append(ignoreFiles, f)
		}
	}
	sort.SliceStable(ignoreFiles, func(i, j int) bool {
		return strings.Count(ignoreFiles[i], "/") < strings.Count(ignoreFiles[j], "/")
	})
	for _, f := range ignoreFiles {
		data, err := t.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var domain []string
		if dir := path.Dir(f); dir != "." {
			domain = strings.Split(dir, "/")
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			ps = append(ps, gitignore.ParsePattern(line, domain))
		}
	}
	return ps, nil
}

// ignoreFilter says which files the patterns exclude; a folder's answer is worked out once
// and shared by the files under it (a large control plane has thousands per folder).
type ignoreFilter struct {
	m       gitignore.Matcher
	folders map[string]bool
}

func newIgnoreFilter(m gitignore.Matcher) *ignoreFilter {
	return &ignoreFilter{m: m, folders: map[string]bool{}}
}

// ignored reports whether a file, or any folder above it, is excluded.
func (f *ignoreFilter) ignored(file string) bool {
	for i := range len(file) {
		if file[i] == '/' && f.folderIgnored(file[:i]) {
			return true
		}
	}
	return f.m.Match(strings.Split(file, "/"), false)
}

// folderIgnored reports whether the patterns exclude the folder itself (not those above it).
func (f *ignoreFilter) folderIgnored(dir string) bool {
	out, ok := f.folders[dir]
	if !ok {
		out = f.m.Match(strings.Split(dir, "/"), true)
		f.folders[dir] = out
	}
	return out
}

// DeliveredFilter says which files of t the loader would read when it reads the section
// rooted at root (a folder, "" for the whole tree): those that neither Flux's default
// exclusions nor a .sourceignore of the tree (each scoped to its folder) leave out. With
// rootExempt, as the loader reads the environments' declarations, a pattern that excludes
// root or a folder above it is not applied (Kalypso's main lists .environments/ in
// .sourceignore, and the environments are still read from it). The filter answers for any
// path of the tree: whether it is under root, or a YAML file, is the caller's to check.
func DeliveredFilter(t Tree, root string, rootExempt bool) (func(file string) bool, error) {
	files, err := t.Files()
	if err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	return deliveredFilter(t, files, root, rootExempt)
}

// deliveredFilter is DeliveredFilter with the tree's files already listed.
func deliveredFilter(t Tree, files []string, root string, rootExempt bool) (func(file string) bool, error) {
	ps, err := ignorePatterns(t, files)
	if err != nil {
		return nil, fmt.Errorf("read .sourceignore: %w", err)
	}
	if dirs := strings.Split(strings.TrimSuffix(cleanDir(root), "/"), "/"); rootExempt && dirs[0] != "" {
		ps = slices.DeleteFunc(ps, func(p gitignore.Pattern) bool {
			for i := 1; i <= len(dirs); i++ {
				if p.Match(dirs[:i], true) == gitignore.Exclude {
					return true
				}
			}
			return false
		})
	}
	filter := newIgnoreFilter(gitignore.NewMatcher(ps))
	return func(file string) bool { return !filter.ignored(file) }, nil
}

func isYAML(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// section is the part of a tree a loader reads: the YAML files under root that Flux would
// deliver, minus the excluded prefixes.
type section struct {
	tree     Tree
	root     string   // folder, "" for the whole tree
	exclude  []string // folder prefixes to skip (e.g. "environments/")
	noIgnore bool     // read everything, ignoring .sourceignore and the default exclusions
	repo     string   // repository URL for diagnostics, "" for the control plane
	// rootExempt keeps the root folder itself from being excluded by .sourceignore: its
	// files are filtered by the patterns, but a pattern naming the root folder (Kalypso's
	// main lists .environments/, which the environments' own reader still reads) is not.
	rootExempt bool
	// mentions, when set, skips the files whose text does not contain it (a cheap filter
	// for a search of one kind: such a file cannot hold a document of that kind).
	mentions string
}

// files lists the YAML files of the section that Flux would deliver.
func (s section) files() ([]string, error) {
	files, _, err := s.filesAndLinks()
	return files, err
}

// linkLister is a Tree that lists its symbolic links (which it never reads) with its files.
type linkLister interface {
	FilesAndLinks() (files, links []string, err error)
}

// filesAndLinks lists the section's YAML files, and the symbolic links that stand where
// such a file would be (not read: a control plane is read as Flux reads it, without links).
func (s section) filesAndLinks() (files, links []string, err error) {
	if ll, ok := s.tree.(linkLister); ok {
		files, links, err = ll.FilesAndLinks()
	} else {
		files, err = s.tree.Files()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list files: %w", err)
	}
	delivered := func(string) bool { return true }
	if !s.noIgnore {
		if delivered, err = deliveredFilter(s.tree, files, s.root, s.rootExempt); err != nil {
			return nil, nil, err
		}
	}
	keep := func(list []string) []string {
		out := list[:0]
		for _, f := range list {
			if s.includes(f) && isYAML(f) && delivered(f) {
				out = append(out, f)
			}
		}
		return out
	}
	return keep(files), keep(links), nil
}

// read decodes every document of the section. Files that cannot be read or parsed are
// reported; everything else is returned. Files are read in order and decoded on all cores
// (YAML decoding is most of loading a large control plane); the result is in file order.
func (s section) read(ctx context.Context) ([]document, []Diagnostic, error) {
	files, links, err := s.filesAndLinks()
	if err != nil {
		return nil, nil, err
	}
	var linkDiags []Diagnostic
	for _, l := range links {
		src := Source{Repo: s.repo, Commit: s.tree.Revision(), File: l}
		linkDiags = append(linkDiags, src.Warn("", "is a symbolic link: not read (a control plane is read as Flux reads it, without links)",
			"put the file itself there, or list the link in .sourceignore"))
	}
	parts := make([]decoded, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		data, err := s.tree.ReadFile(f)
		src := Source{Repo: s.repo, Commit: s.tree.Revision(), File: f}
		switch {
		case err != nil:
			// A problem of the whole file: there is no line (Line 0).
			parts[i] = decoded{docs: []document{{broken: true, source: src}},
				diags: []Diagnostic{src.Diag("", "cannot read file: "+err.Error(), "")}}
		case s.mentions == "" || bytes.Contains(data, []byte(s.mentions)):
			parts[i] = decoded{data: data, src: src, todo: true}
		}
	}
	decodeAll(parts)
	var docs []document
	var diags []Diagnostic
	for _, p := range parts {
		docs = append(docs, p.docs...)
		diags = append(diags, p.diags...)
	}
	return docs, append(diags, linkDiags...), nil
}

// decoded is one file of a section: its bytes until decoded, then its documents.
type decoded struct {
	data  []byte
	src   Source
	todo  bool
	docs  []document
	diags []Diagnostic
}

// decodeAll decodes the files marked todo, on GOMAXPROCS goroutines.
func decodeAll(parts []decoded) {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range parts {
		if p := &parts[i]; p.todo {
			g.Go(func() error {
				p.docs, p.diags = decodeFile(p.data, p.src)
				p.data, p.todo = nil, false
				return nil
			})
		}
	}
	_ = g.Wait() // the calls return no error
}

func (s section) includes(f string) bool {
	root := cleanDir(s.root)
	if root != "" && !strings.HasPrefix(f, root) {
		return false
	}
	for _, x := range s.exclude {
		if strings.HasPrefix(f, x) {
			return false
		}
	}
	return true
}

// cleanDir turns "./a/b", "a/b/", "." or "" into "a/b/" or "".
func cleanDir(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))
	if p == "/" {
		return ""
	}
	return strings.TrimPrefix(p, "/") + "/"
}

var errNotFound = errors.New("not found")
