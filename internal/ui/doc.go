// Package ui is fleetform's web UI: server-rendered html/template pages over the hub, served
// by `fleetform serve` and `fleetform hub serve` at / (the API stays under /api/).
//
// Every page is a GET whose state is in its URL, aggregated or paginated on the server, and
// readable without JavaScript: the UI ships no script at all, only one embedded stylesheet,
// so its Content-Security-Policy forbids scripts outright. Sign-in takes a hub token (admin
// or read-only) and keeps it in an HttpOnly, SameSite=Strict cookie; pages also accept
// "Authorization: Bearer". Every form carries a CSRF token derived from the session's token
// (an HMAC), so replicas need no shared session state; a POST without it is refused with 403.
package ui
