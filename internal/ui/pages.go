package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// pager is one page of a table: which rows to show and the links around them.
type pager struct {
	Page, Pages, Total int
	// Prev and Next are the URLs of the neighbouring pages ("" at the ends).
	Prev, Next string
}

// paginate picks page ?page=N (from 1) of total rows of size each; it returns the rows'
// bounds and the pager.
func paginate(r *http.Request, total, size int) (lo, hi int, p pager) {
	p = pager{Page: 1, Total: total, Pages: max(1, (total+size-1)/size)}
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 {
		p.Page = min(n, p.Pages)
	}
	link := func(n int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		return r.URL.Path + "?" + q.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	lo = (p.Page - 1) * size
	return lo, min(lo+size, total), p
}

// commitLink is a web link to a commit of a repository on a forge whose URL layout is
// known (GitHub, GitLab, Gitea and Forgejo), without any credentials in it; "" when the URL
// is not a web one.
func commitLink(repo, commit string) string {
	if commit == "" {
		return ""
	}
	u, err := url.Parse(repo)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	sep := "/commit/"
	if strings.Contains(u.Host, "gitlab") {
		sep = "/-/commit/"
	}
	return u.String() + sep + url.PathEscape(commit)
}

// safeURL drops credentials from a repository URL before it is shown.
func safeURL(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	u.User = nil
	return u.String()
}

// urlValues encodes key, value pairs as a query string, leaving out empty values.
func urlValues(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q.Encode()
}

func itoa(n int) string { return strconv.Itoa(n) }
